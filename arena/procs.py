"""What every worker process of ours does first: leave Ctrl-C to the driver, and die with it."""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def detach_worker_signals() -> None:
    """Ignore SIGINT (the driver stops us cleanly) and, on Linux, get SIGKILL when the driver
    dies, even by kill -9, so no worker outlives it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux
        pass
