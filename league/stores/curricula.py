"""Curricula: a curriculum's stages, its progress through them and its gate checks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from league.errors import LeagueError, unknown_name
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now


@dataclass(frozen=True)
class CurriculumStage:
    """One stage of a curriculum: its run, its progress and the agents it started from and ended with."""

    curriculum: str
    stage_index: int
    name: str
    team_size: int
    run: str
    status: str
    start_agent_id: int | None
    start_steps: int
    steps: int
    final_agent_id: int | None
    started: str | None
    finished: str | None
    start_agent: str | None  # the agents' names
    final_agent: str | None


@dataclass(frozen=True)
class Curriculum:
    """A curriculum's progress; `stages` are filled by `CurriculumStore.get` (empty from `all`)."""

    name: str
    status: str
    stage_index: int
    spec_json: str
    source: str
    message: str
    started: str
    updated: str
    stages: tuple[CurriculumStage, ...] = ()

    @property
    def spec(self) -> dict[str, Any]:
        """The curriculum spec it was (last) started with, as stored: a plain dict."""
        return json.loads(self.spec_json)


@dataclass(frozen=True)
class GateCheck:
    """One check of a stage's gate: the agent checked, at how many steps, and each criterion's verdict."""

    id: int
    curriculum: str
    stage_index: int
    agent_id: int
    steps: int
    passed: bool
    criteria_json: str
    checked: str
    agent: str  # the agent's name

    @property
    def criteria(self) -> list[dict[str, Any]]:
        return json.loads(self.criteria_json)


@dataclass(frozen=True)
class StageAgent:
    """An agent a curriculum stage started from (role 'start') or ended with (role 'final')."""

    agent: str
    curriculum: str
    stage: str  # the stage's name
    role: str


class CurriculumStore(Store):

    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents


    def start(self, name: str, spec: dict[str, Any], source: str,
                         stages: Sequence[tuple[str, int, str]]) -> Curriculum:
        """Create a curriculum's progress rows, or check that a resumed one has the same stages.

        `stages`: (stage name, team size, run name) in order. A resumed curriculum keeps its
        progress and takes the new spec (budgets and gates may change; the stages may not).
        """
        with self.transaction():
            now = utc_now()
            known = [(r["name"], r["team_size"], r["run"]) for r in self.db.query(
                "SELECT name, team_size, run FROM curriculum_stages WHERE curriculum = ? ORDER BY stage_index", [name])]
            if known and known != [tuple(s) for s in stages]:
                raise LeagueError(
                    f"Curriculum {name!r} was started with the stages {', '.join(n for n, _, _ in known)}; "
                    "resume it with the same stages, or start one under another name.")
            if known:
                self.db.execute("UPDATE curricula SET spec_json = ?, source = ?, updated = ? WHERE name = ?",
                                [json.dumps(spec, sort_keys=True), source, now, name])
            else:
                self.db.execute(
                    """INSERT INTO curricula (name, status, stage_index, spec_json, source, started, updated)
                       VALUES (?, 'running', 0, ?, ?, ?, ?)""", [name, json.dumps(spec, sort_keys=True), source, now, now])
                for i, (stage, team_size, run) in enumerate(stages):
                    self.db.execute(
                        """INSERT INTO curriculum_stages (curriculum, stage_index, name, team_size, run)
                           VALUES (?, ?, ?, ?, ?)""", [name, i, stage, team_size, run])
        return self.get(name)

    def all(self) -> list[Curriculum]:
        """Every curriculum (without its stages), most recently updated first."""
        return [Curriculum(**r) for r in self.db.query("SELECT * FROM curricula ORDER BY updated DESC, name")]

    def stage_counts(self) -> dict[str, int]:
        """How many stages each curriculum has, by name."""
        return {r["curriculum"]: int(r["n"]) for r in self.db.query(
            "SELECT curriculum, COUNT(*) AS n FROM curriculum_stages GROUP BY curriculum")}

    def get(self, name: str) -> Curriculum:
        """One curriculum with its spec and its `stages` (agent ids resolved to names)."""
        rows = list(self.db.query("SELECT * FROM curricula WHERE name = ?", [name]))
        if not rows:
            raise unknown_name("curriculum", name, [r["name"] for r in self.db.query("SELECT name FROM curricula")])
        stages = list(self.db.query(
            """SELECT s.*, a.name AS start_agent, f.name AS final_agent FROM curriculum_stages s
               LEFT JOIN agents a ON a.id = s.start_agent_id LEFT JOIN agents f ON f.id = s.final_agent_id
               WHERE s.curriculum = ? ORDER BY s.stage_index""", [name]))
        return Curriculum(**rows[0], stages=tuple(CurriculumStage(**s) for s in stages))

    def stage_agents(self) -> list[StageAgent]:
        """Every agent a curriculum stage started from or ended with: one per (agent, stage, role)."""
        return [StageAgent(**r) for r in self.db.query(
            """SELECT a.name AS agent, s.curriculum, s.name AS stage, 'start' AS role FROM curriculum_stages s
               JOIN agents a ON a.id = s.start_agent_id
               UNION ALL
               SELECT a.name AS agent, s.curriculum, s.name AS stage, 'final' AS role FROM curriculum_stages s
               JOIN agents a ON a.id = s.final_agent_id
               ORDER BY curriculum, stage, role""")]

    def update(self, name: str, **values: Any) -> None:
        """Set `status`, `stage_index` and/or `message` of a curriculum."""
        allowed = {"status", "stage_index", "message"}
        if not values or set(values) - allowed:
            raise ValueError(f"CurriculumStore.update takes {sorted(allowed)}, got {sorted(values)}")
        sets = ", ".join(f"{k} = ?" for k in values)
        with self.transaction():
            self.db.execute(f"UPDATE curricula SET {sets}, updated = ? WHERE name = ?",
                            [*values.values(), utc_now(), name])

    def update_stage(self, name: str, index: int, **values: Any) -> None:
        """Set a stage's `status`, `steps`, `start_steps`, `started`, `finished`, `start_agent`
        and/or `final_agent` (agent names)."""
        allowed = {"status", "steps", "start_steps", "started", "finished", "start_agent", "final_agent"}
        if not values or set(values) - allowed:
            raise ValueError(f"CurriculumStore.update_stage takes {sorted(allowed)}, got {sorted(values)}")
        with self.transaction():
            cols = {}
            for key, value in values.items():
                if key in ("start_agent", "final_agent"):
                    cols[f"{key}_id"] = self.agents.get(value).id if value else None
                else:
                    cols[key] = value
            sets = ", ".join(f"{k} = ?" for k in cols)
            self.db.execute(f"UPDATE curriculum_stages SET {sets} WHERE curriculum = ? AND stage_index = ?",
                            [*cols.values(), name, index])
            self.db.execute("UPDATE curricula SET updated = ? WHERE name = ?", [utc_now(), name])

    def record_gate_check(self, name: str, index: int, agent: str, steps: int, passed: bool,
                          criteria: list[dict[str, Any]]) -> int:
        """Keep one gate check of a curriculum stage (its games are recorded separately, as evaluation games)."""
        with self.transaction():
            cur = self.db.execute(
                """INSERT INTO gate_checks (curriculum, stage_index, agent_id, steps, passed, criteria_json, checked)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                [name, index, self.agents.get(agent).id, steps, int(passed), json.dumps(criteria), utc_now()])
            self.db.execute("UPDATE curricula SET updated = ? WHERE name = ?", [utc_now(), name])
        return int(cur.lastrowid)

    def gate_checks(self, name: str, index: int | None = None) -> list[GateCheck]:
        """A curriculum's gate checks in order (optionally one stage's), with agent names and criteria."""
        sql = """SELECT g.*, a.name AS agent FROM gate_checks g JOIN agents a ON a.id = g.agent_id
                 WHERE g.curriculum = ?"""
        args: list[Any] = [name]
        if index is not None:
            sql += " AND g.stage_index = ?"
            args.append(index)
        rows = self.db.query(sql + " ORDER BY g.id", args)
        return [GateCheck(**{**r, "passed": bool(r["passed"])}) for r in rows]
