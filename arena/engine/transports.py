"""How a lockstep game runner reaches its workers (its transport): in this process (Placement.IN_PROCESS) or
in worker processes (Placement.PROCESSES). "Backend" is training's word (runner.backend) and "placement"
the word for where work runs; this module's word is "transport".

Both drive the same ArenaWorker over the same array layout, so switching placement changes
nothing but speed. The process transport signals each worker through a pipe (a few bytes per step;
the arrays are shared memory). A worker that raises sends its traceback instead of "ok"; one that
dies outright (segfault, kill) closes its end of the pipe, so the runner reads EOF at once instead
of hanging. Either way every worker is stopped and the runner raises WorkerError.

Why these workers are not the worker pool's (arena.engine.pool): the runner steps in lockstep,
every worker once per step, thousands of steps a second, and each step's data is already in
shared memory. The pool's protocol (a pickled (method, args) call and a pickled (status, value)
answer per call, a sender thread per worker, Ray actors that share no memory with the driver)
would add a pickle round trip and a thread hand-off to every step for nothing the runner needs:
it never replaces a worker, never waits for whichever answers first, and cannot run on Ray,
whose workers could not write into this machine's shared arrays. What the two share is how a
worker process starts and stops and the one error that says it failed (arena.engine.procs).
The runner's messages are bytes: a step, a reset (its argument JSON: null, one seed, or a list
of per-arena seeds), a close.
"""

from __future__ import annotations

import json
import weakref

from arena.engine.placement import Placement
from arena.engine.procs import (
    JOIN_SECONDS,
    WorkerError,
    stop_processes,
    worker_context,
    worker_error,
)
from arena.engine.shared import allocate_local, allocate_shared, runner_layout, views
from arena.engine.worker import (
    MSG_CLOSE,
    MSG_RESET,
    MSG_STEP,
    REPLY_ERROR,
    REPLY_OK,
    ArenaWorker,
    WorkerPlan,
    apply_reset,
    run_worker,
)

__all__ = ["ProcessTransport", "InProcessTransport", "WorkerError", "make_transport"]


def reset_message(seed: int | None) -> bytes:
    return MSG_RESET + json.dumps(None if seed is None else int(seed)).encode()


def reset_games_message(seeds: list[int]) -> bytes:
    return MSG_RESET + json.dumps([int(s) for s in seeds]).encode()


class InProcessTransport:
    """Every worker's arenas stepped in this process, one worker after another."""

    def __init__(self, plans: list[WorkerPlan]):
        layout = runner_layout(plans[0].total_envs, plans[0].spec.n_cars, plans[0].spec.game_state)
        self._buffer = allocate_local(layout)
        self.arrays = views(self._buffer, layout)
        self.workers = [ArenaWorker(plan, self._buffer) for plan in plans]
        self._pending: bytes | None = None

    def send(self, message: bytes) -> None:
        self._pending = message

    def recv(self) -> None:
        message, self._pending = self._pending, None
        for index, worker in enumerate(self.workers):
            try:
                if message == MSG_STEP:
                    worker.step()
                else:
                    apply_reset(worker, message[len(MSG_RESET):])
            except Exception as exc:
                raise WorkerError(f"Game worker {index} failed: {exc!r}") from exc

    def close(self) -> None:
        self.workers = []


def _send_close(conn) -> None:
    conn.send_bytes(MSG_CLOSE)


class ProcessTransport:
    """One process per WorkerPlan, all writing into one shared RawArray."""

    def __init__(self, plans: list[WorkerPlan]):
        ctx = worker_context()
        layout = runner_layout(plans[0].total_envs, plans[0].spec.n_cars, plans[0].spec.game_state)
        self._buffer = allocate_shared(ctx, layout)
        self.arrays = views(self._buffer, layout)
        self._processes: list = []
        self._conns: list = []
        # Runs at close() or garbage collection or interpreter exit, whichever comes first.
        self._finalizer = weakref.finalize(self, stop_processes, self._processes, self._conns, _send_close)
        for index, plan in enumerate(plans):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=run_worker, args=(child, self._buffer, plan),
                               name=f"rl-league-game-{index}", daemon=True)
            proc.start()
            child.close()  # so the parent sees EOF if the worker dies
            self._processes.append(proc)
            self._conns.append(parent)
        self._await_replies()  # each worker reports ready once its arenas are built

    def send(self, message: bytes) -> None:
        for index, conn in enumerate(self._conns):
            try:
                conn.send_bytes(message)
            except (BrokenPipeError, OSError):
                self._fail(index, None)

    def recv(self) -> None:
        self._await_replies()

    def _await_replies(self) -> None:
        """Collect every worker's answer; raise WorkerError for the first that failed or died.

        Reading the pipes one after another wakes this process at most once per worker (a
        `wait()` over all pipes rebuilds its poll set on every wake-up, which costs more with
        many workers). A worker that dies closes its end of the pipe, so the read ends with
        EOF instead of blocking: the crash is reported, never waited for.
        """
        for index, conn in enumerate(self._conns):
            try:
                reply = conn.recv_bytes()
            except (EOFError, OSError):
                self._processes[index].join(JOIN_SECONDS)
                self._fail(index, None)
            if reply.startswith(REPLY_ERROR):
                self._fail(index, reply[len(REPLY_ERROR):].decode(errors="replace"))
            if reply != REPLY_OK:
                self._fail(index, f"unexpected reply {reply!r}")

    def _fail(self, index: int, text: str | None) -> None:
        proc = self._processes[index]
        self.close()
        raise worker_error(f"Game worker {index}", proc, text) from None

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self._processes]

    def close(self) -> None:
        self._finalizer()


def make_transport(placement: Placement, plans: list[WorkerPlan]):
    if placement is Placement.IN_PROCESS:
        return InProcessTransport(plans)
    if placement is Placement.PROCESSES:
        return ProcessTransport(plans)
    raise ValueError(f"a game runner's workers run in-process or in processes, not {placement!r}")

