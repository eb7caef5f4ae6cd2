"""One record of results: wins, draws and losses, with the figures every table derives from them.

`Record` is the value; the rows that report results (a standing, a climb point, a role's check,
a record against an agent, the ladder's and the kickoff measure's results) are Records with
more columns, so `asdict`/`vars` of a row still carry `wins`, `draws`, `losses` and `games`
flat, as the JSON outputs and the dashboard's tables read them.

The score counts a draw as half a win (as ratings, gates and PFSP count it); the win rate counts
only wins (as exploitability probes and exploiters' resets do). With no games the score is
UNPLAYED_SCORE (AlphaStar's payoff answers 0.5 for a pair that has not played), the win rate 0
(no win seen), and either interval is the whole of [0, 1].
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from league.ratings import Z_95, wilson_interval
from league.sprt import elo_estimate

UNPLAYED_SCORE = 0.5  # the score of a pair that has not played (AlphaStar's Payoff)


def score_rate(wins: float, draws: float, games: float) -> float:
    """Wins plus half the draws, per game; UNPLAYED_SCORE with no games. Counts may be decayed (floats),
    as the payoff table's are."""
    return (wins + 0.5 * draws) / games if games > 0 else UNPLAYED_SCORE


@dataclass(frozen=True)
class Record:
    """Wins, draws and losses of one side over some games. `games` is derived, and stored so that a
    row's `asdict`/`vars` carry it; `str` is "W-D-L"; `+` adds two records (a plain Record)."""

    wins: int
    draws: int
    losses: int
    games: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if min(self.wins, self.draws, self.losses) < 0:
            raise ValueError(f"a record counts no negative games, got {self.wins}-{self.draws}-{self.losses}")
        object.__setattr__(self, "games", self.wins + self.draws + self.losses)

    @classmethod
    def from_goals(cls, goals: Iterable[tuple[int, int]]) -> Record:
        """The record of games given as (own goals, the other side's goals) each."""
        wins = draws = losses = 0
        for ours, theirs in goals:
            wins, draws, losses = wins + (ours > theirs), draws + (ours == theirs), losses + (ours < theirs)
        return Record(wins, draws, losses)

    def counts(self) -> dict[str, int]:
        """wins, draws and losses as keywords, to build a row with more columns: `Row(**record.counts(), ...)`."""
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses}

    @property
    def points(self) -> float:
        """A win 1, a draw 1/2."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Points per game (score_rate); UNPLAYED_SCORE with no games."""
        return score_rate(self.wins, self.draws, self.games)

    @property
    def score_interval(self) -> tuple[float, float]:
        """The score's 95% interval: +-1.96 standard errors of the per-game score over the wins, draws
        and losses (league.sprt.elo_estimate's, which takes a game's widest spread where every game
        ended alike), clipped to [0, 1]; (0, 1) with no games."""
        if not self.games:
            return 0.0, 1.0
        half = Z_95 * elo_estimate([self.losses, self.draws, self.wins]).score_se
        return max(0.0, self.score - half), min(1.0, self.score + half)

    @property
    def win_rate(self) -> float:
        """Wins per game (a draw is not a win); 0 with no games."""
        return self.wins / self.games if self.games else 0.0

    @property
    def win_interval(self) -> tuple[float, float]:
        """The win rate's 95% interval (Wilson, league.ratings.wilson_interval); (0, 1) with no games."""
        return wilson_interval(self.wins, self.games)

    def __add__(self, other: Record) -> Record:
        if not isinstance(other, Record):
            return NotImplemented
        return Record(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)

    def __str__(self) -> str:
        return f"{self.wins}-{self.draws}-{self.losses}"
