"""Exploitability probes (`league probe NAME`): each probe's result against its target, for `league show`
and the promotion gate (`promotion.max_exploitability`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from league.names import split_version
from league.probes import ProbeResult
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now


@dataclass(frozen=True)
class ProbeRecord:
    """One stored probe: its result, when it was recorded and the target's steps trained now."""

    result: ProbeResult
    created: str
    target_steps: int


def _result(r: dict[str, Any], start: str | None) -> ProbeResult:
    return ProbeResult(wins=r["wins"], draws=r["draws"], losses=r["losses"], target=r["target"], probe=r["probe"],
                       team_size=r["team_size"], minutes=r["minutes"], steps=r["steps"], seed=r["seed"], start=start)


_SELECT = """SELECT p.*, t.name AS target, t.steps_trained AS target_steps, a.name AS probe FROM probes p
             JOIN agents t ON t.id = p.target_id JOIN agents a ON a.id = p.probe_id"""


class ProbeStore(Store):
    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents

    def add(self, result: ProbeResult) -> None:
        with self.transaction():
            self.db.execute(
                """INSERT INTO probes (target_id, probe_id, team_size, minutes, steps, games, wins, draws, losses, seed,
                                       created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [self.agents.get(result.target).id, self.agents.get(result.probe).id, result.team_size, result.minutes,
                 result.steps, result.games, result.wins, result.draws, result.losses, result.seed, utc_now()])

    def of(self, target: str) -> list[ProbeResult]:
        """The probes of `target`, oldest first (none on a read-only home older than the probes table)."""
        if "probes" not in self.db.table_names():
            return []
        return [_result(r, self._start(r["probe"]))
                for r in self.db.query(f"{_SELECT} WHERE t.name = ? ORDER BY p.id", [target])]

    def all(self) -> list[ProbeRecord]:
        """Every probe, oldest first (none on a read-only home older than the probes table)."""
        if "probes" not in self.db.table_names():
            return []
        return [ProbeRecord(_result(r, self._start(r["probe"])), r["created"], r["target_steps"])
                for r in self.db.query(f"{_SELECT} ORDER BY p.id")]

    def _start(self, probe: str) -> str | None:
        """The agent the probe's run started from (`league probe --from`): the first ancestor of its final snapshot
        outside its run, as the lineage records it (one query, climbing only through the run's own versions); None
        for a probe that started fresh."""
        run = (split_version(probe) or (probe, 0))[0]
        rows = self.db.execute(
            """WITH RECURSIVE chain(id, parent_id, name) AS (
                   SELECT id, parent_id, name FROM agents WHERE name = ?
                   UNION ALL
                   SELECT a.id, a.parent_id, a.name FROM agents a JOIN chain c ON a.id = c.parent_id
                   WHERE substr(c.name, 1, length(?)) = ?)
               SELECT name FROM chain""", [probe, f"{run}-v", f"{run}-v"]).fetchall()
        outside = [name for (name,) in rows if (split_version(name) or (name, 0))[0] != run]
        return outside[0] if outside else None

    def latest(self, target: str, team_size: int) -> ProbeResult | None:
        """The most recent probe of `target` at `team_size`, or None."""
        found = [p for p in self.of(target) if p.team_size == team_size]
        return found[-1] if found else None
