"""Rollout workers on a worker pool: the `rollout` and `ray` collection backends, one class.

Each worker hosts a RolloutWorker (training.rollout_worker): its own arenas stepped in-process
and its own copy of the learner's and the opponents' networks, with one torch thread, so every
forward runs on every core beside the physics. The pool (arena.engine.pool) is this machine's
processes (`rollout`, the default with a CPU learner) or Ray actors on a cluster (`ray`); the
learner's process only sends weights (once per round, `pool.shared`: Ray's object store holds
them once) and opponent specs (once per snapshot), and merges the segments that come back.

Rounds are started in `submit` and gathered in `result`, so with pipelining the workers play
the next round while the learner updates. Without it the run is deterministic for a seed:
each worker's games and sampling depend only on its own derived seed.

A local worker that fails or dies ends the run with WorkerError naming it (arena.engine.procs);
the last snapshot is where a resumed run starts. On Ray a worker that dies (its process, or its
node) loses the round it was playing: those steps are counted (`lost_steps`), never half-used,
and a new worker takes its place when the cluster has room for one within REPLACE_SECONDS
(as RLlib's EnvRunnerGroup restarts lost env runners); otherwise the run goes on with fewer.
"""

from __future__ import annotations

import time
from collections import deque
from contextlib import ExitStack
from dataclasses import dataclass

from arena.engine.placement import Backend, Placement
from arena.engine.pool import open_pool
from arena.engine.procs import WorkerError
from arena.engine.vector import default_workers
from league.config import Config, PolicyConfig
from league.errors import LeagueError
from training.collection import Order, Round
from training.opponents import PolicySpec
from training.progress import Note, OnProgress
from training.rollout_worker import RolloutWorker, WorkerShapes, host_weights, worker_cores
from training.seeds import derived_seed
from training.segment import merge

REPLACE_SECONDS = 60.0  # how long replacement Ray workers may take to start before the run goes on without them
WHO = "Rollout worker"


@dataclass
class _Round:
    """A round under way: its order, the answers each worker owes for it, and which workers play it."""

    order: Order
    answers: int  # 2 when the round came with new opponents (set_pool, then collect), else 1
    workers: list[int]
    lost_steps: int = 0  # the share of workers that died while it was under way


class WorkerCollection(WorkerShapes):
    """Rollout workers on a pool behind the Collection interface (training.collection)."""

    def __init__(self, cfg: Config, net_config: PolicyConfig, teacher: PolicySpec | None, backend: Backend | str,
                 workers: int, pipelined: bool, on_progress: OnProgress):
        """`backend`: `rollout` (worker processes here, `workers` of them, each pinned to a core) or `ray`."""
        self.cfg, self.net_config, self.teacher = cfg, net_config, teacher
        self.pipelined, self.on_progress = pipelined, on_progress
        self._spawned = 0
        self._stack = ExitStack()
        placement = Backend(backend).placement
        address = cfg.runner.address or None
        try:
            if placement is Placement.RAY:  # as many workers as asked for, or as the cluster has cores
                from arena.engine.ray_cluster import ray_session  # Ray only where it is asked for

                ray = self._stack.enter_context(ray_session(default_workers(), address))
                args = self._args(cfg.runner.rollout_workers or max(1, int(ray.cluster_resources().get("CPU", 1))))
            else:
                args = [a + (core,) for a, core in zip(self._args(workers), worker_cores(workers))]
            self.pool = self._stack.enter_context(open_pool(placement, RolloutWorker, args, WHO, address,
                                                            background_sends=pipelined))
            self.replace_lost = placement is Placement.RAY  # a lost Ray node's workers; a lost process is a bug
            self.shapes: list[tuple[int, int]] = self._shapes(range(self.pool.size))
        except BaseException:
            self._stack.close()
            raise
        self._pool: tuple[list[str], dict[str, PolicySpec], int] | None = None
        self._dealt: tuple[list[str], dict[str, PolicySpec], int] | None = None
        self._rounds: deque[_Round] = deque()  # rounds under way, oldest first
        if placement is Placement.RAY:
            on_progress(Note(f"Ray: {self.pool.size} rollout workers, {self.slots} learner slots"))

    def _args(self, count: int) -> list[tuple]:
        """Each new worker's arguments; its seed derived from how many were started before it."""
        out = []
        for _ in range(count):
            out.append((self.cfg, self.net_config, self.teacher, derived_seed(self.cfg.seed, "rollout-worker",
                                                                              self._spawned)))
            self._spawned += 1
        return out

    def _shapes(self, workers) -> list[tuple[int, int]]:
        for k in workers:
            self.pool.call(k, "shape")
        return [tuple(self.pool.reply(k)) for k in workers]

    @property
    def pids(self) -> list[int | None]:
        return self.pool.pids

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None:
        """The league envs' opponents from the next round on (one may be under way)."""
        self._pool = (picks, specs, seed)

    @property
    def depth(self) -> int:
        """Rounds kept under way: with pipelining two, so that a worker done with its round starts the next
        at once instead of waiting for the slowest (docs/scaling.md, "The whole GPU machine")."""
        return 2 if self.pipelined else 1

    def submit(self, order: Order) -> None:
        if len(self._rounds) >= self.depth:
            raise RuntimeError(f"submit() with {len(self._rounds)} rounds under way")
        weights = self.pool.shared(host_weights(order.weights))
        pool, self._pool = self._pool, None
        if pool is not None:
            picks, specs, seed = pool
            specs_handle, start = self.pool.shared(specs), 0
            self._dealt = pool
        for k, (_, envs) in enumerate(self.shapes):
            if pool is not None:  # each worker's share of the picks, in worker order
                self.pool.call(k, "set_pool", picks[start:start + envs], specs_handle, derived_seed(seed, "worker", k))
                start += envs
            self.pool.call(k, "collect", weights, order.version, order.steps, order.shaping_scale, order.teach)
        self._rounds.append(_Round(order, 2 if pool is not None else 1, list(range(self.pool.size))))

    def result(self) -> Round:
        if not self._rounds:
            raise RuntimeError("result() without a submitted round")
        round_ = self._rounds.popleft()
        segments, lost, dead = [], round_.lost_steps, []
        for k in round_.workers:
            try:
                segments.append([self.pool.reply(k) for _ in range(round_.answers)][-1])
            except WorkerError as exc:
                if not (exc.lost and self.replace_lost):
                    self.close()
                    raise
                lost += self.shapes[k][0] * round_.order.steps
                dead.append(k)
        if dead:
            self._replace(dead)
        if not segments:
            raise LeagueError("Every Ray rollout worker died in this round; the run stops (resume it from its last "
                              "snapshot once the cluster is back).")
        return Round(merge(segments), lost_steps=lost, workers=len(segments))

    def _replace(self, dead: list[int]) -> None:
        """New workers for the dead ones, where the cluster has room within REPLACE_SECONDS; else fewer workers."""
        deadline = time.monotonic() + REPLACE_SECONDS
        replaced = [k for k in dead if self.pool.restart(k, self._args(1)[0], max(deadline - time.monotonic(), 0.1))]
        keep = [k for k in range(self.pool.size) if k not in dead or k in replaced]
        fresh = dict(zip(replaced, self._shapes(replaced)))
        for later in self._rounds:  # rounds under way: the dead workers' share is lost, the rest renumbered
            later.lost_steps += sum(self.shapes[k][0] * later.order.steps for k in later.workers if k in dead)
            later.workers = [keep.index(k) for k in later.workers if k not in dead]
        self.pool.remove(keep)
        self.shapes = [fresh.get(k, self.shapes[k]) for k in keep]
        self.on_progress(Note(f"Ray: {len(dead)} rollout worker(s) died and their round was dropped; "
                              f"{len(replaced)} replaced, {len(keep)} at work"))
        if self._dealt is not None and keep:
            picks, specs, seed = self._dealt
            self._pool = (picks[: self.league_envs], specs, seed)  # the same opponents, dealt anew next round

    def close(self) -> None:
        self._stack.close()
