"""League roles (`league train --league FILE`): each league's roles, their current runs, restarts and
trained seconds, and every check of an exploiter against its targets."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from league.errors import LeagueError, quoted
from league.results import Record
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now


@dataclass(frozen=True)
class RoleState:
    """One role of a league: its current run (a new one at each restart) and the seconds it has trained."""

    league: str
    role: str
    kind: str  # main | main_exploiter | league_exploiter
    restart: int  # 1 for the first run; each reset adds one
    run: str
    seconds: float


@dataclass(frozen=True, kw_only=True)
class RoleCheck(Record):
    """An exploiter's snapshot played against its targets, with its record (league.results) against them;
    `reset` says why the role restarted after it (won: it reached the reset win rate; steps: its restart
    spent the step cap), empty if it went on."""

    league: str
    role: str
    restart: int
    agent: str
    steps: int
    targets: tuple[str, ...]
    reset: str
    created: str


@dataclass(frozen=True)
class LeagueRun:
    name: str
    team_size: int
    spec_json: str
    source: str
    status: str
    message: str
    started: str
    updated: str

    @property
    def spec(self) -> dict[str, Any]:
        return json.loads(self.spec_json)


class RoleStore(Store):
    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents

    def _has_tables(self) -> bool:
        return "leagues" in self.db.table_names()  # a read-only home older than version 11 has none

    def start(self, name: str, team_size: int, spec: dict[str, Any], source: str,
              roles: list[tuple[str, str, str]]) -> None:
        """Create league `name` with its roles ((role, kind, first run) each), or mark it running again; a role
        the league already has keeps its state."""
        now = utc_now()
        with self.transaction():
            self.db.execute(
                """INSERT INTO leagues (name, team_size, spec_json, source, status, message, started, updated)
                   VALUES (?, ?, ?, ?, 'running', '', ?, ?)
                   ON CONFLICT(name) DO UPDATE SET spec_json = excluded.spec_json, source = excluded.source,
                   status = 'running', message = '', updated = excluded.updated""",
                [name, team_size, json.dumps(spec, sort_keys=True), source, now, now])
            for role, kind, run in roles:
                self.db.execute("INSERT OR IGNORE INTO league_roles (league, role, kind, run) VALUES (?, ?, ?, ?)",
                                [name, role, kind, run])

    def finish(self, name: str, status: str, message: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE leagues SET status = ?, message = ?, updated = ? WHERE name = ?",
                            [status, message, utc_now(), name])

    def get(self, name: str) -> LeagueRun:
        rows = list(self.db.query("SELECT * FROM leagues WHERE name = ?", [name])) if self._has_tables() else []
        if not rows:
            known = self.names()
            hint = f"; leagues here: {', '.join(known)}" if known else "; start one with `league train --league FILE`"
            raise LeagueError(f"No league named {quoted(name)}{hint}.")
        return LeagueRun(**rows[0])

    def names(self) -> list[str]:
        if not self._has_tables():
            return []
        return [r["name"] for r in self.db.query("SELECT name FROM leagues ORDER BY started, name")]

    def roles(self, name: str) -> list[RoleState]:
        if not self._has_tables():
            return []
        rows = self.db.query("SELECT * FROM league_roles WHERE league = ? ORDER BY rowid", [name])
        return [RoleState(**r) for r in rows]

    def role(self, name: str, role: str) -> RoleState:
        found = [r for r in self.roles(name) if r.role == role]
        if not found:
            raise LeagueError(f"League {name!r} has no role {role!r}.")
        return found[0]

    def add_seconds(self, name: str, role: str, seconds: float) -> None:
        with self.transaction():
            self.db.execute("UPDATE league_roles SET seconds = seconds + ? WHERE league = ? AND role = ?",
                            [max(0.0, seconds), name, role])

    def record_check(self, check: RoleCheck, next_run: tuple[int, str] | None = None) -> None:
        """Keep `check`; with `next_run`, (restart, run) after a reset, the role moves to them in the same
        transaction, so a check is never kept without the reset it caused."""
        with self.transaction():
            self.db.execute(
                """INSERT INTO role_checks (league, role, restart, agent_id, steps, targets, games, wins, draws,
                                            losses, reset, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [check.league, check.role, check.restart, self.agents.get(check.agent).id, check.steps,
                 ",".join(check.targets), check.games, check.wins, check.draws, check.losses, check.reset,
                 check.created or utc_now()])
            if next_run is not None:
                self.db.execute("UPDATE league_roles SET restart = ?, run = ? WHERE league = ? AND role = ?",
                                [*next_run, check.league, check.role])

    def checks(self, name: str, role: str | None = None) -> list[RoleCheck]:
        """The checks of league `name` (of one role), oldest first."""
        if not self._has_tables():
            return []
        where, args = ("c.league = ?", [name]) if role is None else ("c.league = ? AND c.role = ?", [name, role])
        rows = self.db.query(f"""SELECT c.*, a.name AS agent FROM role_checks c JOIN agents a ON a.id = c.agent_id
                                 WHERE {where} ORDER BY c.id""", args)
        return [RoleCheck(league=r["league"], role=r["role"], restart=r["restart"], agent=r["agent"], steps=r["steps"],
                          targets=tuple(t for t in r["targets"].split(",") if t), wins=r["wins"], draws=r["draws"],
                          losses=r["losses"], reset=r["reset"], created=r["created"]) for r in rows]
