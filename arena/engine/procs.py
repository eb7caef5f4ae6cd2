"""What every worker process of ours shares: how it starts (leaving Ctrl-C to the driver, dying
with it), how it is stopped, and the one error that says it failed or died."""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.context
import signal
from collections.abc import Sequence

_PR_SET_PDEATHSIG = 1
JOIN_SECONDS = 3.0  # how long a stopping worker gets at each step (asked, terminated, killed)


class WorkerError(RuntimeError):
    """A worker failed or died; the message names it (and carries its traceback when it had one).

    `index` is the worker's place in its pool; `lost` is true when it died without a word (a
    signal, an exit, a lost Ray node), the case a pool may recover from by starting a new one;
    `refused` when its work stopped on a bad file or a full disk (the message is one sentence)."""

    def __init__(self, message: str, index: int | None = None, lost: bool = False, refused: bool = False):
        super().__init__(message)
        self.index, self.lost, self.refused = index, lost, refused


def detach_worker_signals() -> None:
    """Ignore SIGINT (the driver stops us cleanly) and, on Linux, get SIGKILL when the driver
    dies, even by kill -9, so no worker outlives it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux
        pass


# What a worker process imports before its first message: loaded once, by multiprocessing's fork
# server, so every worker after the first starts in milliseconds instead of importing torch anew.
WORKER_PRELOAD = ("numpy", "torch", "RocketSim", "arena.engine.worker")


# What the fork server will load when it starts: WORKER_PRELOAD and every module asked for since.
# Process-wide, as the fork server itself is: it keeps the list it started with.
_SERVER_PRELOAD: dict[str, None] = dict.fromkeys(WORKER_PRELOAD)


def worker_context(preload: Sequence[str] = ()) -> multiprocessing.context.BaseContext:
    """The multiprocessing context our worker processes start from: the fork server where the
    platform has one (Linux, macOS), preloaded with WORKER_PRELOAD and every `preload` asked for
    before it started (a pool asks for the module of the class it hosts: a game or rollout worker's
    own imports, which cost each worker about 0.6 s otherwise); spawn elsewhere. Both start workers
    from a clean, single-threaded process, never a fork of a driver running threads."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    _SERVER_PRELOAD.update(dict.fromkeys(preload))
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(_SERVER_PRELOAD))  # no effect once the server runs
    return ctx


def how_it_ended(proc) -> str:
    """How a finished worker process ended, for the one failure sentence every pool uses:
    "signal 9" for a process a signal killed (multiprocessing's negative exit code), else "exit code N"."""
    code = proc.exitcode
    return f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"


def died_sentence(who: str, proc) -> str:
    """The failure sentence of a worker that died without a traceback: who it was, its pid, how it ended."""
    return f"{who} (pid {proc.pid}) died without a traceback ({how_it_ended(proc)})"


def worker_error(who: str, proc, text: str | None, index: int | None = None) -> WorkerError:
    """The error for a worker process that failed with traceback `text`, or died without one (None)."""
    if text is not None:
        return WorkerError(f"{who} (pid {proc.pid}) failed:\n{text}", index)
    return WorkerError(died_sentence(who, proc) + ".", index, lost=True)


def stop_processes(processes: list, conns: list, send_close) -> None:
    """Stop worker processes: ask politely (`send_close(conn)`), then terminate, then kill. Safe to call twice."""
    for conn in conns:
        try:
            send_close(conn)
        except (OSError, ValueError):
            pass
    for proc in processes:
        proc.join(JOIN_SECONDS)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
            proc.join(JOIN_SECONDS)
        if proc.is_alive():
            proc.kill()
            proc.join(JOIN_SECONDS)
    for conn in conns:
        conn.close()
    conns.clear()
    processes.clear()
