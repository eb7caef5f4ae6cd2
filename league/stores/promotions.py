"""Promotions: each change of a stage's champion, and each SPRT test that left the champion in place.

A promotion by hand (`league promote NAME`) is method 'manual'. A gated one is decided by an SPRT
match of the candidate against the stage's champion (arena/promotion.py): method 'sprt' from
`league promote NAME --sprt`, 'training' from `league train`; its row keeps the match and its
statistics, and `promoted` says whether H1 was accepted (1: the candidate is champion now) or
not (0: the champion stays). A title round robin (arena/crown.py: `league crown`, and the end of a
run that promotes during training) is method 'round-robin', its row naming the tournament. Making
the agent champion and writing its row are one transaction.

Readers (the dashboard among them) may open a league home read-only whose schema predates the
table (version 7 and older): they get no promotions rather than an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from league.config import stage_of
from league.errors import LeagueError
from league.schema import PROMOTION_METHODS
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, row_id, utc_now

TABLE = "promotions"
_SELECT = """SELECT p.*, a.name AS agent, c.name AS previous_champion FROM promotions p
             JOIN agents a ON a.id = p.agent_id LEFT JOIN agents c ON c.id = p.previous_champion_id"""
TESTED_METHODS = ("sprt", "training")  # decided by an SPRT match


@dataclass(frozen=True)
class SprtTest:
    """What an SPRT match of a candidate against the champion ended with (the candidate's view)."""

    match_id: int
    decision: str  # H1, H0 or inconclusive
    llr: float | None
    elo: float | None
    elo_lo: float | None
    elo_hi: float | None
    los: float | None
    games: int


@dataclass(frozen=True)
class Promotion:
    """One row of `promotions`, with the agents' names."""

    id: int
    agent: str
    team_size: int
    previous_champion: str | None  # the stage's champion when it was recorded (None: it had none)
    method: str  # manual, sprt, training or round-robin
    promoted: bool  # False: the SPRT did not accept H1 and the champion stayed
    match_id: int | None  # None for a manual promotion
    decision: str | None
    llr: float | None
    elo: float | None
    elo_lo: float | None
    elo_hi: float | None
    los: float | None
    games: int | None
    created: str
    tournament_id: int | None = None  # the title round robin of a 'round-robin' promotion

    @property
    def stage(self) -> str:
        return stage_of(self.team_size)


def _promotion(row: dict[str, Any]) -> Promotion:
    return Promotion(row["id"], row["agent"], row["team_size"], row["previous_champion"], row["method"],
                     bool(row["promoted"]), row["match_id"], row["decision"], row["llr"], row["elo"], row["elo_lo"],
                     row["elo_hi"], row["los"], row["games"], row["created"], row.get("tournament_id"))


class PromotionStore(Store):
    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents

    # ------------------------------------------------------------------ writes

    def promote_manually(self, name: str) -> Promotion | None:
        """Make `name` its stage's champion (the previous one goes back to active) and record it as
        'manual'; None when it already is the champion (nothing changes, nothing is recorded)."""
        with self.transaction():
            agent = self.agents.get(name)
            if agent.status == "champion":
                return None
            return self._insert(name, "manual", None, self._champion_of(name))

    def record_test(self, name: str, method: str, test: SprtTest, tested_against: str | None) -> Promotion:
        """Record what SPRT match `test.match_id` of `name` against `tested_against` (the stage's
        champion when the match began; None: the stage had none) decided, and on H1 make `name`
        the champion, in one transaction. Recording the same match again returns its row.

        Refused, with nothing written, when the stage's champion is no longer `tested_against`
        (another command promoted an agent while the match was played): the test was against
        an agent that no longer holds the title."""
        if method not in TESTED_METHODS:
            raise ValueError(f"an SPRT promotion's method is one of {TESTED_METHODS}, not {method!r}")
        with self.transaction():
            existing = self.for_match(test.match_id)
            if existing is not None:
                return existing
            current = self._champion_still(name, tested_against, f"the match, {test.match_id}, was against "
                                           f"{tested_against or 'no champion'}", "promoted: test it again")
            return self._insert(name, method, test, current)

    def crown(self, name: str, tournament_id: int, held_by: str | None) -> Promotion | None:
        """Make `name` its stage's champion by title round robin `tournament_id`, which was played while `held_by`
        held the title (None: no one did); None when `name` already holds it (nothing is recorded). Refused, with
        nothing written, when the title changed hands while the round robin was played."""
        with self.transaction():
            current = self._champion_still(name, held_by, f"round robin {tournament_id} was played while "
                                           f"{held_by or 'no agent'} held the title", "crowned: play it again")
            if current == name:
                return None
            return self._insert(name, "round-robin", None, current, tournament_id)

    def _champion_still(self, name: str, expected: str | None, when: str, undone: str) -> str | None:
        """The champion of `name`'s stage, which must still be `expected` (the title holder when the test was
        played, `when`); else a LeagueError: `name` was not `undone`."""
        current = self._champion_of(name)
        if current != expected:
            now = f"is now {current!r}" if current else "was demoted"
            raise LeagueError(f"The {self.agents.get(name).stage} champion {now} ({when}); {name} was not {undone}.")
        return current

    def _champion_of(self, name: str) -> str | None:
        """The champion of `name`'s stage; a baseline (every stage) is refused."""
        agent = self.agents.get(name)
        if agent.team_size is None:
            raise LeagueError(agent.not_champion())
        champion = self.agents.champion(agent.team_size)
        return champion.name if champion else None

    def _insert(self, name: str, method: str, test: SprtTest | None, previous: str | None,
                tournament_id: int | None = None) -> Promotion:
        if method not in PROMOTION_METHODS:
            raise ValueError(f"unknown promotion method {method!r}")
        promoted = test is None or test.decision == "H1"
        if promoted:
            agent = self.agents.set_status(name, "champion")  # joins this transaction
        else:
            agent = self.agents.get(name)
        previous_id = self.agents.get(previous).id if previous else None
        t = test
        cur = self.db.execute(
            """INSERT INTO promotions (agent_id, team_size, previous_champion_id, method, promoted, match_id,
                   decision, llr, elo, elo_lo, elo_hi, los, games, created, tournament_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [agent.id, agent.team_size, previous_id, method, int(promoted), t and t.match_id, t and t.decision,
             t and t.llr, t and t.elo, t and t.elo_lo, t and t.elo_hi, t and t.los, t and t.games, utc_now(),
             tournament_id])
        return self.get(int(cur.lastrowid))

    # ------------------------------------------------------------------ reads

    def _exists(self) -> bool:
        """Whether the table is there: a read-only open of an older league home has no promotions."""
        return TABLE in self.db.table_names()

    def _query(self, where: str = "", args: list[Any] | None = None) -> list[Promotion]:
        if not self._exists():
            return []
        sql = f"{_SELECT}{f' WHERE {where}' if where else ''} ORDER BY p.id"
        return [_promotion(r) for r in self.db.query(sql, args or [])]

    def get(self, promotion_id: int) -> Promotion:
        rows = self._query("p.id = ?", [row_id(promotion_id, "promotion")])
        if not rows:
            raise LeagueError(f"No promotion with id {promotion_id}.")
        return rows[0]

    def all(self) -> list[Promotion]:
        return self._query()

    def for_stage(self, team_size: int) -> list[Promotion]:
        """A stage's promotions and tests, oldest first: its line of champions, with the tests that failed."""
        return self._query("p.team_size = ?", [team_size])

    def for_match(self, match_id: int) -> Promotion | None:
        rows = self.citing(match_id)
        return rows[0] if rows else None

    def citing(self, match_id: int) -> list[Promotion]:
        """Every row that cites match `match_id`, oldest first (recording a match's test again returns its
        row, so there is one; a table written otherwise may hold more)."""
        return self._query("p.match_id = ?", [match_id])
