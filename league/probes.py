"""An exploitability probe's result (`league probe NAME`): a best response trained against NAME alone,
then played against it. Its win rate is a lower bound on how exploitable NAME is: a stronger or
longer-trained probe could only do better.

Pure: the record and its interval; training.probe runs a probe, league.stores keeps its results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z_95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (successes of n); (0, 1) for n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if successes <= 0 else min(p, max(0.0, centre - half))  # exact at the ends, where rounding strays
    high = 1.0 if successes >= n else max(p, min(1.0, centre + half))
    return low, high


@dataclass(frozen=True)
class ProbeResult:
    """What one probe measured: the probe's record against `target` over `games` games."""

    target: str
    probe: str  # the probe's final snapshot (retired once measured)
    team_size: int
    minutes: float
    steps: int  # agent steps the probe trained
    games: int
    wins: int
    draws: int
    losses: int
    seed: int

    @property
    def win_rate(self) -> float:
        """The probe's wins per game (draws are not wins): the exploitability figure."""
        return self.wins / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The win rate's 95% interval (Wilson)."""
        return wilson(self.wins, self.games)
