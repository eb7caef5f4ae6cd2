"""The `processes` collection backend: rollout workers as processes of this machine.

Each worker process is a RolloutWorker (training.rollout_worker): its own arenas stepped
in-process and its own copy of the learner's and the opponents' networks, with one torch
thread. The learner's process only sends weights (once per round) and opponent specs (once
per snapshot) and merges the segments that come back. Compared with the `multiprocessing`
backend, where the game workers wait at every step while the learner's process runs every
policy's forward, the forwards here run on every core beside the physics; `league bench env`
measures both (docs/scaling.md).

Rounds are started in `submit` and gathered in `result`, so with pipelining the workers play
the next round while the learner updates. Without it the run is deterministic for a seed:
each worker's games and sampling depend only on its own derived seed.

A worker that fails or dies ends the run with WorkerError (arena.engine.backends) naming it (its traceback when it
had one); the last snapshot is where a resumed run starts.
"""

from __future__ import annotations

import weakref

from arena.engine.backends import JOIN_SECONDS, stop_processes, worker_error
from arena.engine.procs import worker_context
from league.config import Config, PolicyConfig
from training.collection import Order, Round
from training.opponents import PolicySpec
from training.rollout_worker import REPLY_ERROR, WorkerShapes, host_weights, serve
from training.seeds import derived_seed
from training.segment import merge


def _send_close(conn) -> None:
    conn.send(("close", ()))


class ProcessCollection(WorkerShapes):
    """Rollout worker processes behind the Collection interface (training.collection)."""

    def __init__(self, cfg: Config, net_config: PolicyConfig, teacher: PolicySpec | None, workers: int,
                 pipelined: bool):
        ctx = worker_context()
        self.pipelined = pipelined
        self._processes: list = []
        self._conns: list = []
        self._finalizer = weakref.finalize(self, stop_processes, self._processes, self._conns, _send_close)
        for k in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=serve, name=f"rl-league-rollout-{k}", daemon=True,
                               args=(child, cfg, net_config, teacher, derived_seed(cfg.seed, "rollout-worker", k)))
            proc.start()
            child.close()  # so a dead worker reads as EOF here, never as a hang
            self._processes.append(proc)
            self._conns.append(parent)
        self.shapes: list[tuple[int, int]] = [self._reply(k) for k in range(workers)]
        self._pool: tuple[list[str], dict[str, PolicySpec], int] | None = None
        self._answers = 0
        self._busy = False

    def _send(self, k: int, verb: str, *args) -> None:
        try:
            self._conns[k].send((verb, args))
        except (BrokenPipeError, OSError):
            self._fail(k, None)

    def _reply(self, k: int):
        try:
            status, value = self._conns[k].recv()
        except (EOFError, OSError):
            self._processes[k].join(JOIN_SECONDS)
            self._fail(k, None)
        if status == REPLY_ERROR:
            self._fail(k, value)
        return value

    def _fail(self, k: int, text: str | None):
        proc = self._processes[k]
        self.close()
        raise worker_error(f"Rollout worker {k}", proc, text) from None

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None:
        """The league envs' opponents from the next round on (one may be under way)."""
        self._pool = (picks, specs, seed)

    def submit(self, order: Order) -> None:
        if self._busy:
            raise RuntimeError("submit() while a round is under way")
        weights = host_weights(order.weights)
        pool, self._pool = self._pool, None
        start = 0
        for k, (_, envs) in enumerate(self.shapes):
            if pool is not None:  # each worker's share of the picks, in worker order
                picks, specs, seed = pool
                self._send(k, "set_pool", picks[start:start + envs], specs, derived_seed(seed, "worker", k))
                start += envs
            self._send(k, "collect", weights, order.version, order.steps, order.shaping_scale, order.teach)
        self._answers = 2 if pool is not None else 1
        self._busy = True

    def result(self) -> Round:
        if not self._busy:
            raise RuntimeError("result() without a submitted round")
        self._busy = False
        segments = [[self._reply(k) for _ in range(self._answers)][-1] for k in range(len(self.shapes))]
        return Round(merge(segments), workers=len(segments))

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self._processes]

    def close(self) -> None:
        self._finalizer()
