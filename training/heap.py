"""Freed memory a rollout worker's C heap keeps, handed back to the system between rounds.

    trim = HeapTrim()
    trim.after_round()   # after each round: True when it handed memory back

glibc's allocator keeps what a process frees for reuse and returns the heap's pages to the system only
from its top. A rollout worker of a long 2v2 run (docs/runs/distill.md, run `te`) held 8.9 GB at the
end, where its twin held 0.6 GB. Measured in a reproduction (`mallinfo2` every 10 rounds, 2v2 copy of
Necto, 2-core Intel Xeon with AMX): the bytes in use stayed at 215-221 MB while the free bytes the heap
held grew by about 35 MB a round (758 MB at round 50); `malloc_trim(0)` took that worker from 1,124 MB
resident to 369 MB in 0.039 s. The growth came in five of eight 2v2 runs, in one worker or both, and never
on demand (an in-process reproduction stayed flat), so its allocation pattern was not found; what it
leaves behind is free memory, and that is what this hands back.

A worker measures its resident memory after every round (psutil, microseconds) and trims only when
it has grown by `margin` since the last time it was at rest, so a worker that does not grow never pays for
a trim. Where there is no glibc (`malloc_trim` missing), it does nothing.
"""

from __future__ import annotations

import ctypes
import functools

import psutil

TRIM_MARGIN = 256 << 20  # bytes of growth over the resting size before a trim (a round's growth was ~35 MB)


@functools.cache
def _malloc_trim():
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library this process runs on
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def resident_bytes() -> int:
    """This process's resident set size in bytes."""
    return psutil.Process().memory_info().rss


def release_free_heap() -> bool:
    """Hand the pages of every free chunk of the C heap back to the system (malloc_trim(0)); False where
    the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class HeapTrim:
    """When to trim: after a round in which the process has grown by `margin` bytes over its resting size."""

    def __init__(self, margin: int = TRIM_MARGIN):
        self.margin = margin
        self.resting: int | None = None  # resident bytes after the first round, or after the last trim
        self.trims = 0

    def after_round(self) -> bool:
        rss = resident_bytes()
        if self.resting is None or rss < self.resting:
            self.resting = rss
            return False
        if rss - self.resting < self.margin or not release_free_heap():
            return False
        self.trims += 1
        # What a trim cannot hand back (memory in use) raises the resting size, so a worker that really
        # holds more is not trimmed every round.
        self.resting = max(self.resting, resident_bytes())
        return True
