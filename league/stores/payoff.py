"""The payoff table: each learner's decayed results against each opponent (AlphaStar's Payoff)."""

from __future__ import annotations

from typing import NamedTuple

from league.results import score_rate
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now


class PayoffRecord(NamedTuple):
    """A learner's results against one opponent: wins, draws and games (decayed counts, so floats)."""

    wins: float = 0.0
    draws: float = 0.0
    games: float = 0.0

    @property
    def score(self) -> float:
        """Wins plus half the draws, per game; league.results.UNPLAYED_SCORE (0.5) for a pair that has not played."""
        return score_rate(self.wins, self.draws, self.games)

    def plus(self, other: PayoffRecord) -> PayoffRecord:
        """Both records' counts added (`+` on a NamedTuple would concatenate)."""
        return PayoffRecord(self.wins + other.wins, self.draws + other.draws, self.games + other.games)


class PayoffStore(Store):

    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents


    def record(self, learner: str, team_size: int, results: dict[str, PayoffRecord], decay: float = 1.0) -> None:
        """Add (wins, draws, games) per opponent name to the learner's payoff, decaying old counts first."""
        with self.transaction():
            now = utc_now()
            for opponent, (wins, draws, games) in results.items():
                opp = self.agents.get(opponent)
                self.db.execute(
                    """INSERT INTO payoff (learner, opponent_id, team_size, wins, draws, games, updated)
                       VALUES (?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT (learner, opponent_id, team_size) DO UPDATE SET
                           wins = wins * ? + excluded.wins, draws = draws * ? + excluded.draws,
                           games = games * ? + excluded.games, updated = excluded.updated""",
                    [learner, opp.id, team_size, wins, draws, games, now, decay, decay, decay],
                )

    def get(self, learner: str, team_size: int) -> dict[str, PayoffRecord]:
        """The learner's record against each opponent, by opponent name."""
        rows = self.db.query(
            """SELECT a.name, p.wins, p.draws, p.games FROM payoff p JOIN agents a ON a.id = p.opponent_id
               WHERE p.learner = ? AND p.team_size = ?""", [learner, team_size])
        return {r["name"]: PayoffRecord(r["wins"], r["draws"], r["games"]) for r in rows}
