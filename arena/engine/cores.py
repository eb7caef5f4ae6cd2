"""How many cores this process may use: the one count every worker and thread default reads.

The affinity mask, not the machine's core count: a container, `taskset` or a batch scheduler may
leave a process fewer cores than the machine has (os.cpu_count() counts them all), and a worker
or a torch thread beyond the mask only takes turns with the others.
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask; the machine's count where there is none)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_workers() -> int:
    """One worker per usable core: what a worker count of 0 (auto) means."""
    return usable_cores()


def workers_or_default(workers: int | None) -> int:
    """`workers` as given, or where it is 0 or None ("auto") one per usable core."""
    return workers or default_workers()
