"""A learner owns its process: learners that train at once run in processes of their own.

torch's seed and its CPU thread count are process-wide, and the self-play trainer sets both (the seed
when it is built, the thread count around every update), so two learners in one process race on them.
`run_apart` runs each job in its own process (started as every worker of ours is, arena.engine.procs:
from a clean process, killed with the driver), hands the events each job emits to `on_event` in this
process, in the order they come, and ends when every job has:

    run_apart({"main": partial(train_role, job_a), "exploiter": partial(train_role, job_b)}, on_event)

A job is a picklable callable `job(emit, stop)`, true when Ctrl-C ended it: `emit(event)` sends a
picklable event back, and `stop` (a multiprocessing Event) is set when another job failed or was
interrupted, or Ctrl-C stopped the driver. A job
that raises stops the others; its error is raised here (a LeagueError as itself, one sentence; any
other with the job's traceback). Ctrl-C reaches every job's process (one process group), where a
trainer saves its final snapshot; the driver waits for them, then raises KeyboardInterrupt.
"""

from __future__ import annotations

import queue
import signal
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.engine.procs import died_sentence, detach_worker_signals, stop_processes, worker_context
from league.errors import LeagueError

POLL_SECONDS = 0.5  # how often the driver looks for a job that died without a word
STOP_SECONDS = 120.0  # how long the driver waits for a job to finish its slice (a final snapshot) once stopped


@dataclass(frozen=True)
class _Ended:
    """A job's last message: how it ended."""

    name: str
    interrupted: bool = False  # Ctrl-C
    league_error: str | None = None  # a LeagueError's sentence
    failure: str | None = None  # any other error's traceback


def _run_job(name: str, job: Callable[..., None], events: Any, stop: Any) -> None:
    """In the job's process: Ctrl-C stays on (the trainer saves a final snapshot on it), the process dies with
    the driver; the job runs; how it ended is the last message."""
    detach_worker_signals()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C ends a slice as it would in the driver
    try:
        ended = _Ended(name, interrupted=bool(job(events.put, stop)))
    except KeyboardInterrupt:
        ended = _Ended(name, interrupted=True)
    except LeagueError as exc:
        ended = _Ended(name, league_error=str(exc))
    except BaseException:  # noqa: BLE001 - handed to the driver with its traceback
        ended = _Ended(name, failure=traceback.format_exc())
    events.put(ended)


def run_apart(jobs: dict[str, Callable[..., None]], on_event: Callable[[Any], None]) -> bool:
    """Run every job in a process of its own until all have ended; their events go to `on_event` here.
    True when Ctrl-C (in a job's process) ended a job; an error of a job is raised here, once all have ended."""
    ctx = worker_context()
    events, stop = ctx.Queue(), ctx.Event()
    procs = {name: ctx.Process(target=_run_job, args=(name, job, events, stop), name=f"learner-{name}")  # not daemonic: a learner starts workers
             for name, job in jobs.items()}
    ends: dict[str, _Ended] = {}
    try:
        for proc in procs.values():
            proc.start()
        _gather(procs, events, ends, stop, on_event)
    except KeyboardInterrupt:
        stop.set()  # each job's process had Ctrl-C too: its trainer saves its final snapshot, then it ends
        try:
            _gather(procs, events, ends, stop, on_event, patience=STOP_SECONDS)
        finally:
            _reap(procs)
        raise
    finally:
        _reap(procs)
    for end in ends.values():
        if end.league_error is not None:
            raise LeagueError(end.league_error)
        if end.failure is not None:
            raise RuntimeError(f"The learner of {end.name} failed:\n{end.failure}")
    return any(end.interrupted for end in ends.values())


def _gather(procs: dict, events: Any, ends: dict[str, _Ended], stop: Any, on_event: Callable[[Any], None],
            patience: float | None = None) -> None:
    """Hand events on until every job has ended (or died: a job whose process is gone without a word)."""
    import time

    deadline = None if patience is None else time.monotonic() + patience
    while len(ends) < len(procs) and (deadline is None or time.monotonic() < deadline):
        try:
            message = events.get(timeout=POLL_SECONDS)
        except queue.Empty:
            for name, proc in procs.items():
                if name not in ends and not proc.is_alive() and proc.exitcode is not None:
                    ends[name] = _Ended(name, failure=died_sentence(f"the learner of {name}", proc) + ".")
                    stop.set()
            continue
        if isinstance(message, _Ended):
            ends[message.name] = message
            if message.league_error is not None or message.failure is not None or message.interrupted:
                stop.set()  # the others finish their slices and end
        else:
            on_event(message)


def _reap(procs: dict) -> None:
    """Every started job's process joined (asked by now to end), terminated or killed if it will not."""
    stop_processes([proc for proc in procs.values() if proc.pid is not None], [], lambda conn: None)
