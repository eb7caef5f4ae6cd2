"""One worker pool: long-lived workers on this machine's processes or on Ray, behind one interface.

A worker hosts one service object, built inside the worker from a class and its arguments (a
tournament's GameService, training's RolloutWorker), and answers calls of its methods in order:

    with open_pool(Placement.PROCESSES, RolloutWorker, [args_0, args_1], "Rollout worker") as pool:
        pool.call(k, "collect", weights, ...)     # a request to worker k; it answers calls in order
        value = pool.reply(k)                     # worker k's next answer
        k, value = pool.next_reply()              # whichever worker with a call under way answers first
        handle = pool.shared(weights)             # a value passed to many calls (Ray: stored once)
        pool.restart(k, args)                     # a fresh worker in the place of a lost one
        pool.remove(keep)                         # only the workers `keep`, renumbered in that order
        pool.pids                                 # each worker's process id

Both kinds (Placement.PROCESSES: ProcessPool; Placement.RAY: RayPool) implement the whole `Pool`
protocol below; a caller holds a `Pool` and never asks which kind it has.

One message protocol serves both kinds: a call is (method, args); every answer is (OK, value),
(REFUSED, sentence) for a LeagueError or OSError of the service (a bad file, a full disk: one
sentence for the person) or (FAILED, traceback) for anything else. A Ray actor's method returns
the same pairs (Host.handle), so the two kinds differ only in transport. One failure path: a
worker that fails or dies raises arena.engine.procs.WorkerError naming the worker and its pid
(and the signal, or its traceback); `lost` marks one that died without a word, which a caller
may replace (`restart`, as RLlib's EnvRunnerGroup restarts lost env runners) instead of
stopping. PufferLib's vector.py gave the shape: a thin transport under one interface.

`stall_seconds` (processes): a worker that has answered nothing for that long while a call of it is
under way is taken to hang. Every worker writes its threads' stacks to standard error (faulthandler on
SIGUSR1), so does the driver, the pool is closed and a WorkerError says so. Without it a hung worker
held its driver forever (run tc's title round robin: no game in 30 minutes, cause unseen).
"""

from __future__ import annotations

import faulthandler
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import wait
from typing import Any, Protocol

from arena.engine.placement import Placement, as_placement

from arena.engine.procs import (
    JOIN_SECONDS,
    WorkerError,
    detach_worker_signals,
    stop_processes,
    worker_context,
    worker_error,
)
from league.errors import LeagueError

OK, REFUSED, FAILED = "ok", "refused", "failed"
POOLED = (Placement.PROCESSES, Placement.RAY)  # where a pool's workers may run
READY_SECONDS = 300.0  # how long Ray workers may take to start (building arenas, importing torch)
STACKS_SECONDS = 1.0  # how long stalled workers get to write their stacks before they are stopped


def refusal(exc: LeagueError | OSError) -> str:
    """One sentence for a service's refusal (no final period: callers go on after it)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot write {exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc).rstrip(".")


class Host:
    """A service inside a worker: built from (cls, args), its methods answered as protocol pairs."""

    def __init__(self, cls: type, args: tuple):
        self.service, self.startup = None, (OK, os.getpid())
        try:
            self.service = cls(*args)
        except (LeagueError, OSError) as exc:
            self.startup = (REFUSED, refusal(exc))
        except Exception:  # noqa: BLE001 - answered to the driver, which raises it as one error
            self.startup = (FAILED, traceback.format_exc())

    def ready(self) -> tuple[str, Any]:
        """(OK, pid) once the service is built; else why it could not be."""
        return self.startup

    def handle(self, method: str, *args) -> tuple[str, Any]:
        """Call the service's `method`; the arguments travel one by one, so Ray resolves each object
        reference among them (it resolves only top-level arguments)."""
        try:
            return OK, getattr(self.service, method)(*args)
        except (LeagueError, OSError) as exc:
            return REFUSED, refusal(exc)
        except Exception:  # noqa: BLE001 - as above
            return FAILED, traceback.format_exc()

    def close(self) -> None:
        close = getattr(self.service, "close", None)
        if close is not None:
            close()


def serve(conn, cls: type, args: tuple) -> None:
    """A worker process's loop: host the service, answer each (method, args) until None or EOF.

    The pipe carries only objects this project's own processes made (weights as numpy arrays,
    scheduled games, outcomes, segments), never a user's file."""
    detach_worker_signals()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a driver that finds us stalled asks for our stacks
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    host = Host(cls, args)
    try:
        conn.send(host.ready())
        while host.service is not None and (request := conn.recv()) is not None:
            method, args = request
            conn.send(host.handle(method, *args))
    except (EOFError, BrokenPipeError):
        pass  # the driver went away: nothing to answer
    finally:
        host.close()
        conn.close()


class Pool(Protocol):
    """Long-lived workers, each hosting one service and answering its calls in order (the module's docstring)."""

    who: str  # what a worker is called in errors ("Rollout worker")

    @property
    def size(self) -> int: ...

    @property
    def pids(self) -> list[int | None]:
        """Each worker's process id (on Ray, its actor's; None where it never started)."""

    def shared(self, value: Any) -> Any:
        """A handle to `value` to pass to many calls (Ray: stored once in its object store)."""

    def call(self, k: int, method: str, *args) -> None:
        """Ask worker k to call `method(*args)` of its service; returns at once."""

    def reply(self, k: int) -> Any:
        """Worker k's answer to its oldest call under way (WorkerError if it failed, refused or died)."""

    def next_reply(self) -> tuple[int, Any]:
        """(k, answer) of whichever worker with a call under way answers first."""

    def restart(self, k: int, args: tuple, seconds: float = 60.0) -> bool:
        """A fresh worker hosting cls(*args) in place of worker k; False if none started within `seconds`."""

    def remove(self, keep: list[int]) -> None:
        """Keep only the workers `keep`, renumbered in that order, stopping the others."""

    def close(self) -> None: ...

    def __enter__(self) -> Pool: ...

    def __exit__(self, *exc) -> None: ...


class _Answers:
    """What both kinds share: the order of answers, and turning a protocol pair into a value."""

    who: str
    size: int

    def _value(self, k: int, reply: tuple[str, Any]) -> Any:
        status, value = reply
        if status == OK:
            return value
        who = f"{self.who} {k} (pid {self._pid(k)})"
        self.close()  # a refusal or a bug ends the work: nothing to replace
        if status == REFUSED:
            raise WorkerError(f"{who} stopped: {value}", k, refused=True)
        raise WorkerError(f"{who} failed:\n{value}", k)

    def _pid(self, k: int) -> int | None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


class _Sender:
    """Sends one worker's calls in order from a thread, so a call never blocks its caller.

    A worker reads its next call only when it has answered the last; a call bigger than the pipe's
    buffer (a network's weights) would otherwise hold the caller until then. With a sender, the
    caller queues the next round's call while the worker still plays this one (training's rollout
    workers: no worker waits for the others between rounds)."""

    def __init__(self, conn, name: str):
        self.conn, self.queue = conn, queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (item := self.queue.get()) is not _STOP:
            try:
                self.conn.send(item)
            except (OSError, ValueError):  # the worker is gone: its reply reads EOF and says so
                return

    def send(self, item: Any) -> None:
        self.queue.put(item)

    def close(self) -> None:
        """After the calls queued before it: ask the worker to stop, then let the thread end."""
        self.queue.put(None)
        self.queue.put(_STOP)


_STOP = object()


class ProcessPool(_Answers):
    """Workers as processes of this machine (the fork server's), each talking over its own pipe.

    `background_sends`: each worker's calls are sent by a thread of its own (_Sender), so `call`
    returns at once even while the worker is busy; its answers come back in order as ever.
    `stall_seconds`: how long a worker may answer nothing before it is taken to hang (None: no limit)."""

    placement = Placement.PROCESSES

    def __init__(self, cls: type, args: list[tuple], who: str, background_sends: bool = False,
                 stall_seconds: float | None = None):
        self.cls, self.who, self.stall_seconds = cls, who, stall_seconds
        self._ctx = worker_context([cls.__module__])  # the hosted class's imports, once in the fork server
        self._procs: list = []
        self._conns: list = []
        self._senders: list[_Sender | None] = []
        self._background = background_sends
        self._pending: list[int] = []  # calls under way, per worker
        for k, a in enumerate(args):
            self._start(k, a)
        for k in range(len(args)):
            self._await_ready(k)

    @property
    def size(self) -> int:
        return len(self._procs)

    @property
    def pids(self) -> list[int | None]:
        return [p.pid for p in self._procs]

    def _pid(self, k: int) -> int | None:
        return self._procs[k].pid

    def _start(self, k: int, args: tuple) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=serve, args=(child, self.cls, args), name=f"rl-league-{self.who.lower().replace(' ', '-')}-{k}",
                                 daemon=True)
        proc.start()
        child.close()  # so a dead worker reads as EOF here, never as a hang
        sender = _Sender(parent, f"{proc.name}-sender") if self._background else None
        if k < len(self._procs):
            self._procs[k], self._conns[k], self._senders[k], self._pending[k] = proc, parent, sender, 0
        else:
            self._procs.append(proc)
            self._conns.append(parent)
            self._senders.append(sender)
            self._pending.append(0)

    def _await_ready(self, k: int) -> None:
        """Worker k's first answer: its pid once its service is built, or why it could not be."""
        self._pending[k] += 1
        self.reply(k)

    def shared(self, value: Any) -> Any:
        return value

    def call(self, k: int, method: str, *args) -> None:
        if self._senders[k] is not None:
            self._senders[k].send((method, args))
        else:
            try:
                self._conns[k].send((method, args))
            except (BrokenPipeError, OSError):
                self._lost(k)
        self._pending[k] += 1

    def reply(self, k: int) -> Any:
        if not self._pending[k]:
            raise RuntimeError(f"reply({k}) without a call under way")
        if self.stall_seconds is not None and not self._conns[k].poll(self.stall_seconds):
            self._stalled([k])
        try:
            answer = self._conns[k].recv()
        except (EOFError, OSError):
            self._lost(k)
        self._pending[k] -= 1
        return self._value(k, answer)

    def next_reply(self) -> tuple[int, Any]:
        busy = {self._conns[k]: k for k in range(self.size) if self._pending[k]}
        if not busy:
            raise RuntimeError("next_reply() without a call under way")
        ready = wait(list(busy), timeout=self.stall_seconds)  # a dead worker's pipe reads as ready (EOF)
        if not ready:
            self._stalled(sorted(busy.values()))
        k = busy[ready[0]]
        return k, self.reply(k)

    def _stalled(self, ks: list[int]):
        """Workers `ks` have answered nothing for stall_seconds: every worker's stacks and the driver's go to
        standard error, the pool is closed, and the error says so."""
        for proc in self._procs:
            if proc.pid is not None and proc.is_alive():
                try:
                    os.kill(proc.pid, signal.SIGUSR1)
                except OSError:
                    pass
        time.sleep(STACKS_SECONDS)  # their stacks are written before they are stopped
        err = sys.stderr if _has_fileno(sys.stderr) else sys.__stderr__
        print(f"rl-league: {self.who.lower()}s stalled; the driver's threads:", file=err, flush=True)
        faulthandler.dump_traceback(err, all_threads=True)
        names = ", ".join(f"{k} (pid {self._procs[k].pid})" for k in ks)
        for k in ks:
            self._procs[k].kill()  # a hung worker never reads the polite request to stop
        self.close()
        were = "it was" if len(ks) == 1 else "they were"
        raise WorkerError(f"{self.who} {names} answered nothing for {self.stall_seconds:.0f} s, so {were} stopped (the "
                          "stacks of every worker and of this process are on standard error)", ks[0], lost=True)

    def _lost(self, k: int):
        """Worker k died: the error that says so (the others go on; `restart` may replace it)."""
        proc = self._procs[k]
        proc.join(JOIN_SECONDS)
        self._pending[k] = 0
        raise worker_error(f"{self.who} {k}", proc, None, k) from None

    def _send_close(self, conn) -> None:
        """The stop request goes after the calls queued before it, by the same sender as they."""
        sender = next((s for s, c in zip(self._senders, self._conns) if c is conn and s is not None), None)
        if sender is not None:
            sender.close()
        else:
            conn.send(None)

    def restart(self, k: int, args: tuple, seconds: float = 60.0) -> bool:
        """A fresh worker in place of worker k (whatever it was doing is dropped); always True here."""
        old, conn = self._procs[k], self._conns[k]
        stop_processes([old], [conn], self._send_close)
        self._start(k, args)
        self._await_ready(k)
        return True

    def remove(self, keep: list[int]) -> None:
        """Keep only the workers `keep` (in that order), stopping the others."""
        gone = [k for k in range(self.size) if k not in keep]
        stop_processes([self._procs[k] for k in gone], [self._conns[k] for k in gone], self._send_close)
        self._procs, self._conns = [self._procs[k] for k in keep], [self._conns[k] for k in keep]
        self._senders, self._pending = [self._senders[k] for k in keep], [self._pending[k] for k in keep]

    def close(self) -> None:
        stop_processes(self._procs, self._conns, self._send_close)
        self._pending, self._senders = [], []


def _has_fileno(stream) -> bool:
    """Whether faulthandler can write to `stream` (a captured or wrapped one may have no file descriptor)."""
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


class RayPool(_Answers):
    """Workers as Ray actors (one CPU each, spread over the cluster's nodes), hosted like processes."""

    placement = Placement.RAY

    def __init__(self, ray: Any, cls: type, args: list[tuple], who: str):
        self.ray, self.cls, self.who = ray, cls, who
        self._actor = ray.remote(num_cpus=1, max_restarts=0)(Host)
        self._actors: list = []
        self._pids: list[int | None] = []
        self._pending: list[deque] = []
        starting = [self._spawn(a) for a in args]
        try:
            ready = ray.get([actor.ready.remote() for actor in starting], timeout=READY_SECONDS)
        except ray.exceptions.GetTimeoutError:
            self._kill(starting)
            cpus = int(ray.cluster_resources().get("CPU", 0))
            raise LeagueError(f"{len(args)} Ray workers did not start within {READY_SECONDS:.0f} s; the cluster has "
                              f"{cpus} CPUs.") from None
        for k, (actor, answer) in enumerate(zip(starting, ready)):
            self._actors.append(actor)
            self._pids.append(answer[1] if answer[0] == OK else None)
            self._pending.append(deque())
        for k, answer in enumerate(ready):
            self._value(k, answer)

    @property
    def size(self) -> int:
        return len(self._actors)

    @property
    def pids(self) -> list[int | None]:
        return list(self._pids)

    def _pid(self, k: int) -> int | None:
        return self._pids[k]

    def _spawn(self, args: tuple):
        return self._actor.options(scheduling_strategy="SPREAD").remote(self.cls, args)

    def _kill(self, actors: list) -> None:
        for actor in actors:
            self.ray.kill(actor, no_restart=True)

    def shared(self, value: Any) -> Any:
        return self.ray.put(value)

    def call(self, k: int, method: str, *args) -> None:
        self._pending[k].append(self._actors[k].handle.remote(method, *args))

    def reply(self, k: int) -> Any:
        return self._answer(k, self._pending[k].popleft())

    def next_reply(self) -> tuple[int, Any]:
        heads = {self._pending[k][0]: k for k in range(self.size) if self._pending[k]}
        if not heads:
            raise RuntimeError("next_reply() without a call under way")
        done, _ = self.ray.wait(list(heads), num_returns=1)
        return heads[done[0]], self.reply(heads[done[0]])

    def _answer(self, k: int, ref) -> Any:
        ray = self.ray
        try:
            answer = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError) as exc:
            self._pending[k].clear()
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
            raise WorkerError(f"{self.who} {k} (pid {self._pids[k]}) died without a traceback (its Ray actor was "
                              f"lost: {first}).", k, lost=True) from None
        return self._value(k, answer)

    def restart(self, k: int, args: tuple, seconds: float = 60.0) -> bool:
        """A fresh actor in place of worker k, if the cluster has room for one within `seconds`.

        A new actor may land on the node that just died before the cluster has noticed (its
        creation then fails), so failures are retried until the deadline."""
        ray = self.ray
        self._kill([self._actors[k]])
        self._pending[k].clear()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            actor = self._spawn(args)
            try:
                answer = ray.get(actor.ready.remote(), timeout=max(deadline - time.monotonic(), 0.1))
            except ray.exceptions.GetTimeoutError:
                self._kill([actor])
                return False  # no room in the cluster
            except ray.exceptions.RayError:
                self._kill([actor])
                time.sleep(1.0)
                continue
            self._actors[k], self._pids[k] = actor, answer[1]
            self._value(k, answer)
            return True
        return False

    def remove(self, keep: list[int]) -> None:
        """Keep only the workers `keep` (in that order), killing the others."""
        self._kill([a for k, a in enumerate(self._actors) if k not in keep])
        self._actors = [self._actors[k] for k in keep]
        self._pids = [self._pids[k] for k in keep]
        self._pending = [self._pending[k] for k in keep]

    def close(self) -> None:
        self._kill(self._actors)
        self._actors, self._pending = [], []


@contextmanager
def open_pool(placement: Placement | str, cls: type, args: list[tuple], who: str, address: str | None = None,
              background_sends: bool = False, stall_seconds: float | None = None) -> Iterator[Pool]:
    """A pool of len(args) workers placed at `placement` (PROCESSES or RAY), each hosting cls(*args[k]);
    closed on leaving. Ray: the cluster at `address`, or a local instance on 127.0.0.1
    (arena.engine.ray_cluster), let go on leaving too (one this process already holds is used as it is).
    `background_sends`: processes send each worker's calls from a thread of their own (ProcessPool);
    Ray's calls never block their caller anyway. `stall_seconds`: a process worker silent that long while a call
    of it is under way is taken to hang (ProcessPool)."""
    placement = as_placement(placement, "open_pool")
    if placement is Placement.PROCESSES:
        with ProcessPool(cls, args, who, background_sends, stall_seconds) as pool:
            yield pool
        return
    if placement is not Placement.RAY:
        raise ValueError(f"a pool's workers run at one of {', '.join(POOLED)}, not {placement!r}")
    from arena.engine.ray_cluster import ray_session

    with ray_session(len(args), address) as ray, RayPool(ray, cls, args, who) as pool:
        yield pool
