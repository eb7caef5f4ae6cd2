"""Where a loop's time goes, phase by phase: cheap enough to run on every step of every game.

    clock = PhaseClock()
    clock.start()
    ...physics...;  clock.mark("physics")      # the seconds since the last mark go to "physics"
    ...observations...;  clock.mark("observations")
    seconds = clock.take()                     # {phase: seconds} so far, and the clock starts over

One `time.perf_counter()` and one dict update per mark (well under a microsecond), so the
runner and the collector keep their clocks on always; `league diagnose --test scale` reads them.
"""

from __future__ import annotations

import time


class PhaseClock:
    """Seconds per named phase, accumulated between `take`s."""

    __slots__ = ("seconds", "_t")

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._t = time.perf_counter()

    def start(self) -> None:
        """Start timing from now (what ran since the last mark is not counted)."""
        self._t = time.perf_counter()

    def mark(self, phase: str) -> None:
        """The seconds since the last mark (or start) go to `phase`."""
        now = time.perf_counter()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - self._t
        self._t = now

    def take(self) -> dict[str, float]:
        """What was counted since the last take; the counts start again from zero."""
        out, self.seconds = self.seconds, {}
        return out


def add_phases(total: dict[str, float], more: dict[str, float]) -> dict[str, float]:
    """The phase-wise sum of two {phase: seconds} maps (a new dict)."""
    out = dict(total)
    for phase, seconds in more.items():
        out[phase] = out.get(phase, 0.0) + seconds
    return out
