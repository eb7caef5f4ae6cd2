"""The Ray collection backend (`league train --backend ray`): rollout workers as Ray actors.

Each rollout worker (training.rollout_worker) is an actor holding one core: its own vectorized
games (the in-process runner, `runner.envs_per_worker` arenas) and a Collector
(training.collector) that acts with batched CPU inference from a copy of the learner's weights
and the sampled opponents' weights.
Both travel through Ray's object store, put once per round (weights) and once per snapshot
(opponents), never per step; each worker hands back one Segment per round, and the learner
trains on their merge.

A worker that dies (its process, or its node) loses the round it was playing: those steps are
counted (`lost_steps`), never half-used. It is replaced by a new actor when the cluster has room
for one within REPLACE_SECONDS; otherwise the run goes on with fewer workers. The learner (this
process) dying is a normal resume from its last snapshot.

Without --address, a local Ray instance is started whose servers listen on 127.0.0.1 only
(arena.tournament_ray.ray_session); with it, the run joins a cluster started with `ray start`.
"""

from __future__ import annotations

import time
from typing import Any

from arena.tournament_ray import ray_session
from arena.engine.vector import default_workers
from league.config import Config, PolicyConfig
from league.errors import LeagueError
from training.collection import Order, Round
from training.opponents import PolicySpec
from training.progress import Note, OnProgress
from training.rollout_worker import RolloutWorker, WorkerShapes, host_weights
from training.segment import merge
from training.seeds import derived_seed

REPLACE_SECONDS = 60.0  # how long a replacement worker may take to start before the run goes on without it
READY_SECONDS = 300.0  # how long the first workers may take to start (building arenas, importing torch)


class RayCollection(WorkerShapes):
    """Rollout workers on a Ray cluster behind the Collection interface (training.collection)."""

    def __init__(self, cfg: Config, net_config: PolicyConfig, teacher: PolicySpec | None, pipelined: bool,
                 on_progress: OnProgress):
        self.cfg, self.net_config, self.teacher = cfg, net_config, teacher
        self.pipelined, self.on_progress = pipelined, on_progress
        self._session = ray_session(default_workers(), cfg.runner.address or None)
        self.ray = self._session.__enter__()
        try:
            self._start()
        except BaseException:
            self._session.__exit__(None, None, None)
            raise

    def _start(self) -> None:
        ray = self.ray
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = self.cfg.runner.rollout_workers or max(1, cpus)
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        self._spawned = 0
        self.workers: list[Any] = [self._spawn() for _ in range(count)]
        try:
            shapes = ray.get([w.shape.remote() for w in self.workers], timeout=READY_SECONDS)
        except ray.exceptions.GetTimeoutError:
            raise LeagueError(f"{count} Ray rollout workers did not start within {READY_SECONDS:.0f} s; the cluster "
                              f"has {cpus} CPUs (--rollout-workers sets how many to ask for).") from None
        self.shapes: list[tuple[int, int]] = list(shapes)
        self._pool: tuple[list[str], Any, int] | None = None
        self._pending: list[tuple[Any, Any]] = []  # (worker, object ref) of the round under way
        self._order: Order | None = None
        self.on_progress(Note(f"Ray: {count} rollout workers, {sum(s[0] for s in self.shapes)} learner slots"))

    def _spawn(self):
        seed = derived_seed(self.cfg.seed, "rollout-worker", self._spawned)
        self._spawned += 1
        return self._actor_class.options(scheduling_strategy="SPREAD").remote(self.cfg, self.net_config,
                                                                               self.teacher, seed)

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None:
        """Each worker's share of the picks, in worker order; the specs go into the object store once."""
        self._pool = (picks, specs, seed)
        specs_ref, start = self.ray.put(specs), 0
        for k, (worker, (_, envs)) in enumerate(zip(self.workers, self.shapes)):
            worker.set_pool.remote(picks[start:start + envs], specs_ref, derived_seed(seed, "worker", k))
            start += envs

    def submit(self, order: Order) -> None:
        weights = self.ray.put(host_weights(order.weights))
        self._order = order
        self._pending = [(w, w.collect.remote(weights, order.version, order.steps, order.shaping_scale, order.teach))
                         for w in self.workers]

    def result(self) -> Round:
        ray, order = self.ray, self._order
        pending, self._pending = self._pending, []
        segments, lost, dead = [], 0, []
        for k, (worker, ref) in enumerate(pending):
            try:
                segments.append(ray.get(ref))
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError):
                lost += self.shapes[k][0] * order.steps
                dead.append(k)
        if dead:
            self._replace(dead)
        if not segments:
            raise LeagueError("Every Ray rollout worker died in this round; the run stops (resume it from its last "
                              "snapshot once the cluster is back).")
        return Round(merge(segments), lost_steps=lost, workers=len(segments))

    def _replace(self, dead: list[int]) -> None:
        """New actors for the dead ones, where the cluster has room within REPLACE_SECONDS; else fewer workers."""
        for k in dead:
            self.ray.kill(self.workers[k], no_restart=True)
        deadline = time.monotonic() + REPLACE_SECONDS
        fresh = {k: self._respawn(deadline) for k in dead}
        kept = [(w, shape) for k, (w, shape) in enumerate(zip(self.workers, self.shapes)) if k not in fresh]
        kept += [started for started in fresh.values() if started is not None]
        replaced = sum(started is not None for started in fresh.values())
        self.on_progress(Note(f"Ray: {len(dead)} rollout worker(s) died and their round was dropped; "
                              f"{replaced} replaced, {len(kept)} at work"))
        self.workers, self.shapes = [w for w, _ in kept], [shape for _, shape in kept]
        if self._pool is not None and self.workers:
            picks, specs, seed = self._pool
            self.set_pool(picks[: self.league_envs], specs, seed)  # the same opponents, dealt anew

    def _respawn(self, deadline: float) -> tuple[Any, tuple[int, int]] | None:
        """A started replacement worker and its shape, or None when none starts before `deadline`.

        A new actor may land on the node that just died before the cluster has noticed (its
        creation then fails), so failures are retried until the deadline."""
        ray = self.ray
        while time.monotonic() < deadline:
            worker = self._spawn()
            try:
                return worker, ray.get(worker.shape.remote(), timeout=max(deadline - time.monotonic(), 0.1))
            except ray.exceptions.GetTimeoutError:
                ray.kill(worker, no_restart=True)
                return None  # no room in the cluster
            except ray.exceptions.RayError:
                ray.kill(worker, no_restart=True)
                time.sleep(1.0)
        return None

    def close(self) -> None:
        try:
            for worker in getattr(self, "workers", []):
                self.ray.kill(worker, no_restart=True)
        finally:
            self._session.__exit__(None, None, None)
