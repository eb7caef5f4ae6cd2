"""An exploitability probe's result (`league probe NAME`): a best response trained against NAME alone,
then played against it. Its win rate is a lower bound on how exploitable NAME is: a stronger or
longer-trained probe could only do better.

Pure: the record and its interval; training.probe runs a probe, league.stores keeps its results.
"""

from __future__ import annotations

from dataclasses import dataclass

from league.ratings import wilson_interval


@dataclass(frozen=True)
class ProbeResult:
    """What one probe measured: the probe's record against `target` over `games` games."""

    target: str
    probe: str  # the probe's final snapshot (registered retired)
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
        return wilson_interval(self.wins, self.games)
