"""An exploitability probe's result (`league probe NAME`): a best response trained against NAME alone,
then played against it. Its win rate is a lower bound on how exploitable NAME is: a stronger or
longer-trained probe could only do better.

Pure: the record (league.results) and its interval; training.probe runs a probe, league.stores keeps its results.
"""

from __future__ import annotations

from dataclasses import dataclass

from league.results import Record


@dataclass(frozen=True, kw_only=True)
class ProbeResult(Record):
    """What one probe measured: the probe's record against `target`. Its win rate (draws are not wins)
    is the exploitability figure."""

    target: str
    probe: str  # the probe's final snapshot (registered retired)
    team_size: int
    minutes: float
    steps: int  # agent steps the probe trained
    seed: int
    start: str | None = None  # the agent whose weights the probe started from (`league probe --from`), or None: fresh

    @property
    def interval(self) -> tuple[float, float]:
        """The win rate's 95% interval (Wilson)."""
        return self.win_interval
