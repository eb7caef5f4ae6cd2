"""Ownership of a training run or a tournament by one process (and short waits for steps such as
creating the database).

An exclusive `flock` on `<home>/locks/<kind>-<key>.lock`: the kernel releases it when the
process ends, however it ends (kill -9 included), so a lock never outlives its owner and
never needs clearing by hand. The file says who holds it, for the message a second command
prints; the file itself is never deleted (deleting a lock file lets two processes lock two
different files of the same name).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from league.errors import LeagueError

LOCKS_DIRNAME = "locks"
T = TypeVar("T")


class Ownership:
    """A held lock; `release()` (or leaving a `with` block, or the process ending) frees it."""

    def __init__(self, fd: int, path: Path):
        self._fd: int | None = fd
        self.path = path

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def holding(self, items: Iterator[T]) -> Iterator[T]:
        """`items`, iterated while this lock is held: it is released when they end, fail or are
        closed (a tournament's or a match's games, played by whoever iterates them)."""
        with self:
            yield from items

    def __enter__(self) -> "Ownership":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()


def _holder(fd: int) -> str:
    """Who holds the lock, as its file says ('another process' if it cannot be read)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"process {int(info['pid'])} (started {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _lock_file(root: Path, kind: str, key: str, what: str) -> tuple[int, Path]:
    folder = root / LOCKS_DIRNAME
    try:
        folder.mkdir(exist_ok=True)
        path = folder / f"{kind}-{key}.lock"
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644), path
    except OSError as exc:
        raise LeagueError(f"Cannot take the lock for {what} in {folder}: {exc.strerror}.") from None


def _own(fd: int, path: Path) -> Ownership:
    since = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record = json.dumps({"pid": os.getpid(), "since": since, "command": " ".join(sys.argv)[:500]}).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, record, 0)
    return Ownership(fd, path)


def claim(root: Path, kind: str, key: str, what: str) -> Ownership:
    """Own `kind`/`key` under the league home `root`, or fail at once naming the holder.

    `what` names the thing for the message, e.g. "Run 'mlp-1v1'". `key` must already be a
    valid name (league.names) or a number: it becomes part of a file name.
    """
    fd, path = _lock_file(root, kind, key, what)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise LeagueError(f"{what} is in use by {holder}; wait for it to finish or stop it first.") from None
    return _own(fd, path)


def wait_for(root: Path, kind: str, key: str, what: str, timeout_seconds: float = 60.0) -> Ownership:
    """Own `kind`/`key` like `claim`, but wait up to `timeout_seconds` for a holder to finish first: for
    short steps two commands may both need, such as creating or upgrading the database."""
    fd, path = _lock_file(root, kind, key, what)
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return _own(fd, path)
        except BlockingIOError:
            if time.monotonic() > deadline:
                holder = _holder(fd)
                os.close(fd)
                raise LeagueError(f"{what} has been in use by {holder} for over {timeout_seconds:.0f} s; "
                                  "try again once it has finished.") from None
            time.sleep(0.02)
