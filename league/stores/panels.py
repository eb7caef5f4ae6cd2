"""Panel tests: a snapshot's record against each member of the evaluation panel (training/panel.py), for
`league show` (what an agent was measured against) and the panel's choice of the best snapshots so far."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from league.ratings import Z_95
from league.results import Record
from league.sprt import elo_estimate, logistic_elo
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now

TABLE = "panel_tests"


@dataclass(frozen=True)
class PanelTest:
    """One stored test: the candidate, whether no member beat it, and its record against each member."""

    id: int
    agent: str
    team_size: int
    run: str
    steps: int
    passed: bool
    beaten_by: str | None
    seconds: float
    seed: int
    created: str
    records: dict[str, Record]  # member -> the candidate's record against it
    opening_jitter: float | None = None  # the openings its games played (game.opening_jitter); None: not recorded

    @property
    def undecided(self) -> bool:
        """Whether the test was cut short, neither passed nor beaten: its run's share of the clock (panel.max_share)
        ran out mid-test."""
        return not self.passed and self.beaten_by is None

    @property
    def verdict(self) -> str:
        """How the test ended, in words: passed, a member beat it, or cut short undecided when its run's share of
        the clock ran out (panel.max_share)."""
        if self.passed:
            return "passed (half or more against each)"
        if self.beaten_by is not None:
            return f"{self.beaten_by} beat it"
        return "undecided (its run's share of the clock ran out)"

    @property
    def total(self) -> Record:
        """The candidate's record over the whole panel."""
        return sum(self.records.values(), Record(0, 0, 0))

    @property
    def worst(self) -> tuple[str, Record] | None:
        """The member the candidate scored least against, with that record (None: no games)."""
        played = [(m, r) for m, r in self.records.items() if r.games]
        return min(played, key=lambda mr: mr[1].score) if played else None

    @property
    def elo(self) -> float:
        """The candidate's Elo against the panel as a whole: the logistic Elo of its mean score per member
        (each member weighs the same, however many games it had)."""
        played = [r.score for r in self.records.values() if r.games]
        return logistic_elo(sum(played) / len(played)) if played else math.nan

    @property
    def elo_interval(self) -> tuple[float, float]:
        """The 95% interval of `elo`, from the same estimate: the mean of the per-member scores, whose standard error
        is the root of the members' squared standard errors over their count (each over its own games); (nan, nan)
        with no games. Not the pooled record's interval, which weighs the members by their games and can leave out
        the point it is drawn about."""
        played = [r for r in self.records.values() if r.games]
        if not played:
            return math.nan, math.nan
        mean = sum(r.score for r in played) / len(played)
        se = math.sqrt(sum(elo_estimate([r.losses, r.draws, r.wins]).score_se ** 2 for r in played)) / len(played)
        return logistic_elo(max(0.0, mean - Z_95 * se)), logistic_elo(min(1.0, mean + Z_95 * se))


class PanelStore(Store):
    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents

    def add(self, agent: str, run: str, steps: int, records: dict[str, Record], *, passed: bool,
            beaten_by: str | None, seconds: float, seed: int, opening_jitter: float | None = None) -> PanelTest:
        """Record one test (its games played with openings of `opening_jitter` uu; None: not said) and its per-member
        records in one transaction."""
        with self.transaction():
            a = self.agents.get(agent)
            beaten_id = self.agents.get(beaten_by).id if beaten_by else None
            cur = self.db.execute(
                """INSERT INTO panel_tests (agent_id, team_size, run, steps, passed, beaten_by_id, seconds, seed,
                                            created, opening_jitter) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [a.id, a.team_size, run, steps, int(passed), beaten_id, seconds, seed, utc_now(), opening_jitter])
            test_id = int(cur.lastrowid)
            for member, r in records.items():
                self.db.execute("INSERT INTO panel_results (test_id, member_id, wins, draws, losses) "
                                "VALUES (?, ?, ?, ?, ?)", [test_id, self.agents.get(member).id, r.wins, r.draws,
                                                            r.losses])
        return self._query("t.id = ?", [test_id])[0]

    def _query(self, where: str, args: list[Any]) -> list[PanelTest]:
        if TABLE not in self.db.table_names():  # a read-only home older than the table
            return []
        tests = list(self.db.query(
            f"""SELECT t.*, a.name AS agent, b.name AS beaten_by FROM panel_tests t JOIN agents a ON a.id = t.agent_id
                LEFT JOIN agents b ON b.id = t.beaten_by_id WHERE {where} ORDER BY t.id""", args))
        if not tests:
            return []
        marks = ",".join("?" * len(tests))
        records: dict[int, dict[str, Record]] = {t["id"]: {} for t in tests}
        for r in self.db.query(f"""SELECT r.*, m.name AS member FROM panel_results r JOIN agents m ON m.id = r.member_id
                                   WHERE r.test_id IN ({marks}) ORDER BY r.rowid""", [t["id"] for t in tests]):
            records[r["test_id"]][r["member"]] = Record(r["wins"], r["draws"], r["losses"])
        return [PanelTest(t["id"], t["agent"], t["team_size"], t["run"], t["steps"], bool(t["passed"]), t["beaten_by"],
                          t["seconds"], t["seed"], t["created"], records[t["id"]], t.get("opening_jitter"))
                for t in tests]  # a read-only home older than version 15 has no opening_jitter

    def of(self, agent: str) -> list[PanelTest]:
        """The panel tests of `agent`, oldest first."""
        return self._query("a.name = ?", [agent])

    def for_run(self, run: str) -> list[PanelTest]:
        """A training run's panel tests, oldest first."""
        return self._query("t.run = ?", [run])

    def for_stage(self, team_size: int) -> list[PanelTest]:
        """Every panel test at `team_size`, oldest first."""
        return self._query("t.team_size = ?", [team_size])
