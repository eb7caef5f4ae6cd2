"""A training call's budget: agent steps, wall-clock seconds, or both (0: no limit of that kind).

The one place the rule lives. The config holds it as `training.steps` and `training.minutes`,
`league train` as --steps and --minutes; a command makes one Budget of them and hands it, typed, to
the trainer (`SelfPlayTrainer.run(budget)`), whose loop, learning-rate schedule and progress bar ask
it; the chunked drivers (training.slices) hand each slice what is left of their own clock:

    budget = Budget.from_flags(None, 10.0, Budget.from_config(cfg.training))   # Budget(steps=0, seconds=600.0)
    clock = budget.start()                         # the clock starts now
    clock.spent(steps)                             # 0..1, whichever limit is further on
    clock.done(steps)                              # a limit reached
    clock.remaining(steps)                         # what is left, a Budget (None once spent)

The methods of Budget are pure (steps and seconds handed in); Clock adds the time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from league.config import MINUTES_MAX, STEPS_MAX
from league.errors import LeagueError

if TYPE_CHECKING:
    from league.config import TrainingConfig

SECONDS_PER_MINUTE = 60.0
# On a clock, a round before the pace is known (the first two) is this fraction of a whole one, and no
# shorter round is started later: a whole round can take longer than a short budget (a slice of a league).
FIRST_ROUND_DIVISOR = 8


@dataclass(frozen=True)
class Budget:
    """Agent steps and wall-clock seconds a training call may spend; whichever runs out first ends
    it, and 0 puts no limit of that kind (neither: only Ctrl-C ends the call)."""

    steps: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.steps < 0 or not (math.isfinite(self.seconds) and self.seconds >= 0):
            raise ValueError(f"a budget is steps >= 0 and finite seconds >= 0, not {self.steps!r} and "
                             f"{self.seconds!r}")

    @classmethod
    def from_limits(cls, steps: int = 0, minutes: float = 0.0) -> Budget:
        """The budget of `steps` agent steps and `minutes` of wall clock (0: no limit of that kind)."""
        return cls(steps, minutes * SECONDS_PER_MINUTE)

    @classmethod
    def from_config(cls, training: TrainingConfig) -> Budget:
        """The budget `training.steps` and `training.minutes` give (validated with the config)."""
        return cls.from_limits(training.steps, training.minutes)

    @classmethod
    def from_flags(cls, steps: int | None, minutes: float | None, configured: Budget) -> Budget:
        """The budget --steps and --minutes give (None: not given) over the `configured` one: a limit given
        alone replaces the configured other (`--steps` alone trains that many steps whatever training.minutes
        says), and neither leaves the configured budget. One sentence for a flag out of range."""
        if steps is None and minutes is None:
            return configured
        if steps is not None and not 0 <= steps <= STEPS_MAX:
            raise LeagueError(f"--steps must be between 0 and {STEPS_MAX:,}, got {steps:,}.")
        if minutes is not None and not (math.isfinite(minutes) and 0 <= minutes <= MINUTES_MAX):
            raise LeagueError(f"--minutes must be between 0 and {MINUTES_MAX:g}, got {minutes:g}.")
        return cls.from_limits(steps or 0, minutes or 0.0)

    @property
    def minutes(self) -> float:
        return self.seconds / SECONDS_PER_MINUTE

    @property
    def unlimited(self) -> bool:
        """Neither limit set: only Ctrl-C ends the call."""
        return not self.steps and not self.seconds

    def spent(self, steps: int, seconds: float) -> float:
        """The share spent after `steps` agent steps and `seconds`: of the steps or of the clock,
        whichever is further on, at most 1 (0 for an unlimited budget)."""
        share = steps / self.steps if self.steps else 0.0
        if self.seconds:
            share = max(share, seconds / self.seconds)
        return min(1.0, share)

    def done(self, steps: int, seconds: float) -> bool:
        """Whether `steps` agent steps or `seconds` reach a limit."""
        return bool(self.steps and steps >= self.steps) or bool(self.seconds and seconds >= self.seconds)

    def steps_left(self, steps: int) -> int | None:
        """Agent steps left to the step limit after `steps` (None without one)."""
        return self.steps - steps if self.steps else None

    def remaining(self, steps: int, seconds: float) -> Budget | None:
        """What is left after `steps` and `seconds`: each limit less what is spent of it, no limit
        staying no limit; None once spent (a limit of 0 would read as no limit)."""
        if self.done(steps, seconds):
            return None
        return Budget(self.steps - steps if self.steps else 0, self.seconds - seconds if self.seconds else 0.0)

    def start(self, clock: Callable[[], float] = time.perf_counter) -> Clock:
        """This budget with its clock started now (`clock`: the time source, in seconds)."""
        return Clock(self, clock(), clock)


@dataclass(frozen=True)
class Clock:
    """A budget being spent: Budget's questions with the seconds read off `clock` since `started`."""

    budget: Budget
    started: float
    clock: Callable[[], float] = time.perf_counter

    def elapsed(self) -> float:
        return self.clock() - self.started

    def spent(self, steps: int = 0) -> float:
        return self.budget.spent(steps, self.elapsed())

    def done(self, steps: int = 0) -> bool:
        return self.budget.done(steps, self.elapsed())

    def remaining(self, steps: int = 0) -> Budget | None:
        return self.budget.remaining(steps, self.elapsed())


def clock_round(full: int, slots: int, seconds_left: float, pace: float | None, ahead: int) -> int:
    """Decision steps per env slot of the next round of a call on a clock with `seconds_left`: a short round
    (`full` // FIRST_ROUND_DIVISOR) while the pace (agent steps trained a second) is unknown; then what the time
    left fits at that pace after the `ahead` steps already under way, at most `full`; 0 when less than a short
    round fits (the call ends near its time instead of a whole round past it)."""
    short = max(1, full // FIRST_ROUND_DIVISOR)
    if pace is None:
        return short
    fits = int((pace * seconds_left - ahead) // slots)
    return min(full, fits) if fits >= short else 0
