"""Agents: every version the league knows, its status, parent and checkpoint."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from league.agent_facts import Distilled, Manifest, sampling_temperature
from league.config import stage_of
from league.errors import LeagueError, unknown_name
from league.names import check_name, split_version
from league.schema import STATUSES
from league.stores.database import Store, row_id, utc_now

BASELINES = {
    "random": "Uniformly random actions from the action table.",
    "rule": "Scripted bot: drives behind the ball, shoots, falls back to defend.",
    "atba": "Scripted bot: always towards the ball, boosting when far and facing it; never aims or defends.",
    "rule-pro": "Scripted bot: rule plus boost management, shadowing, and in teams rotation "
                "(one car challenges, the next supports, the last holds goal-side).",
}


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    kind: str
    team_size: int | None  # None: plays every stage (baselines)
    status: str
    parent_id: int | None
    created: str
    checkpoint_path: str | None
    checkpoint_sha256: str | None
    config_json: str | None
    steps_trained: int
    notes: str

    @property
    def stage(self) -> str:
        sizes = self.team_sizes
        return ", ".join(stage_of(n) for n in sizes) if sizes else "any"

    @property
    def team_sizes(self) -> list[int] | None:
        """The team sizes it plays: its stage's, a community bot's manifest's; None for every size (baselines)."""
        return [self.team_size] if self.team_size else _manifest_sizes(self.community)

    @cached_property
    def config(self) -> dict[str, Any] | None:
        """The config it was stored with: a trained agent's training config, a community bot's manifest."""
        return json.loads(self.config_json) if self.config_json else None

    @cached_property
    def community(self) -> Manifest | None:
        """A community bot's manifest (None for any other kind, or one not in the documented form)."""
        return Manifest.parse((self.config or {}).get("community")) if self.kind == "community" else None

    @cached_property
    def distilled_from(self) -> Distilled | None:
        """The teacher it was distilled from (a distilling run's snapshot), or None."""
        return Distilled.parse((self.config or {}).get("distilled_from"))

    @cached_property
    def temperature(self) -> float:
        """The temperature it samples at: the ppo.temperature it trained at (1 where none is recorded)."""
        return sampling_temperature(self.config, f"Agent {self.name!r}")

    def plays(self, team_size: int) -> bool:
        """Whether it plays `team_size`v`team_size`: its stage's agents do; a baseline plays every size, a
        community bot the sizes its manifest lists."""
        return _plays(self.team_size, self.community, team_size)

    def not_a_start(self) -> str | None:
        """Why a run cannot start from this agent's weights (`--from`), in one sentence; None for a trained network."""
        if self.kind in ("mlp", "lstm") and self.checkpoint_path:
            return None
        return (f"{self.name!r} is a {self.kind} agent without trained weights; --from needs a trained agent (an mlp "
                "or lstm version).")

    def not_champion(self) -> str:
        """Why an agent of no stage (team_size None) cannot be a champion, in one sentence."""
        what = "a community bot" if self.kind == "community" else "a baseline that plays every stage"
        return f"{self.name!r} is {what}; only a stage's own agents can be champion."


def plays(kind: str, own_size: int | None, config: dict[str, Any] | None, team_size: int) -> bool:
    """Agent.plays for a row read without its Agent (league.standings reads many at once)."""
    return _plays(own_size, Manifest.parse((config or {}).get("community")) if kind == "community" else None,
                  team_size)


def _plays(own_size: int | None, manifest: Manifest | None, team_size: int) -> bool:
    if own_size is not None:
        return own_size == team_size
    sizes = _manifest_sizes(manifest)
    return sizes is None or team_size in sizes


def _manifest_sizes(manifest: Manifest | None) -> list[int] | None:
    """The team sizes a community bot's manifest lists (None for any other kind, or none listed)."""
    return list(manifest.team_sizes) if manifest is not None and manifest.team_sizes is not None else None


class AgentStore(Store):
    def _row(self, name: str) -> dict[str, Any] | None:
        rows = list(self.db.query("SELECT * FROM agents WHERE name = ?", [name]))
        return rows[0] if rows else None

    def insert(self, **values: Any) -> int:
        values.setdefault("created", utc_now())
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        cur = self.db.execute(f"INSERT INTO agents ({cols}) VALUES ({marks})", list(values.values()))
        return int(cur.lastrowid)

    def ensure_baselines(self) -> None:
        with self.transaction():
            for name, notes in BASELINES.items():
                if not self._row(name):
                    self.insert(name=name, kind=name, team_size=None, notes=notes)

    def names(self) -> list[str]:
        return [r["name"] for r in self.db.query("SELECT name FROM agents ORDER BY id")]

    def run_versions(self, run: str) -> list[str]:
        """A training run's snapshot names (RUN-v1, RUN-v2, ...), oldest first."""
        found = [(split[1], name) for name in self.names() if (split := split_version(name)) and split[0] == run]
        return [n for _, n in sorted(found)]

    def latest_version(self, run: str) -> str | None:
        """A training run's newest snapshot, or None before its first."""
        versions = self.run_versions(run)
        return versions[-1] if versions else None

    def find(self, name: str) -> Agent | None:
        """The agent named `name`, or None (`get` says, with the nearest names, that there is none)."""
        row = self._row(name)
        return Agent(**row) if row else None

    def get(self, name: str) -> Agent:
        row = self._row(name)
        if row is None:
            raise unknown_name("agent", name, self.names())
        return Agent(**row)

    def by_id(self, agent_id: int) -> Agent:
        rows = list(self.db.query("SELECT * FROM agents WHERE id = ?", [row_id(agent_id, "agent")]))
        if not rows:
            raise LeagueError(f"No agent with id {agent_id}.")
        return Agent(**rows[0])

    def all(self, team_size: int | None = None, include_retired: bool = False) -> list[Agent]:
        """Agents in creation order; with `team_size`, those of that stage plus the all-stage baselines."""
        where, args = [], []
        if team_size is not None:
            where.append("(team_size = ? OR team_size IS NULL)")
            args.append(team_size)
        if not include_retired:
            where.append("status != 'retired'")
        sql = "SELECT * FROM agents" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return [Agent(**r) for r in self.db.query(sql, args)]

    def add(self, name: str, kind: str, team_size: int | None, parent: str | None = None,
            checkpoint_path: str | None = None, checkpoint_sha256: str | None = None,
            config: dict[str, Any] | None = None, steps_trained: int = 0, notes: str = "",
            status: str = "active") -> Agent:
        """Register a new agent version (`status` retired: one no mix or tournament ever picks up, a probe's)."""
        check_name(name)
        if status not in ("active", "retired"):
            raise LeagueError(f"A new agent is active or retired, not {status!r}.")
        with self.transaction():
            if self._row(name):
                raise LeagueError(f"An agent named {name!r} already exists; choose another name.")
            parent_id = self.get(parent).id if parent else None
            self.insert(name=name, kind=kind, team_size=team_size, parent_id=parent_id,
                        checkpoint_path=checkpoint_path, checkpoint_sha256=checkpoint_sha256,
                        config_json=json.dumps(config, sort_keys=True) if config is not None else None,
                        steps_trained=steps_trained, notes=notes, status=status)
        return self.get(name)

    def set_status(self, name: str, status: str) -> Agent:
        """Set an agent's status; promoting demotes the stage's previous champion to active."""
        if status not in STATUSES:
            raise LeagueError(f"Unknown status {status!r}; expected one of {', '.join(STATUSES)}.")
        with self.transaction():
            agent = self.get(name)
            if status == "champion":
                if agent.team_size is None:
                    raise LeagueError(agent.not_champion())
                self.db.execute(
                    "UPDATE agents SET status = 'active' WHERE status = 'champion' AND team_size = ? AND id != ?",
                    [agent.team_size, agent.id],
                )
            self.db.execute("UPDATE agents SET status = ? WHERE id = ?", [status, agent.id])
        return self.get(name)

    def count(self) -> int:
        return int(next(self.db.query("SELECT COUNT(*) AS n FROM agents"))["n"])

    def stage_sizes(self) -> list[int]:
        """The team sizes of the stages that have agents (baselines, of every stage, count for none), smallest first."""
        return [int(r["team_size"]) for r in self.db.query(
            "SELECT DISTINCT team_size FROM agents WHERE team_size IS NOT NULL ORDER BY team_size")]

    def of_kind(self, kind: str) -> list[Agent]:
        """Every agent of `kind` (retired ones included), in creation order."""
        return [Agent(**r) for r in self.db.query("SELECT * FROM agents WHERE kind = ? ORDER BY id", [kind])]

    def children(self, name: str) -> list[Agent]:
        """The agents whose parent is `name`, in creation order (none for an unknown name)."""
        return [Agent(**r) for r in self.db.query(
            "SELECT c.* FROM agents c JOIN agents p ON p.id = c.parent_id WHERE p.name = ? ORDER BY c.id", [name])]

    def versions(self, runs: Sequence[str]) -> dict[str, list[tuple[int, Agent]]]:
        """Each run's snapshots, the agents named RUN-v1, RUN-v2, ..., as (k, agent), k ascending; one
        query for every run."""
        found: dict[str, list[tuple[int, Agent]]] = {run: [] for run in runs}
        if not runs:
            return found
        like = " OR ".join("name LIKE ? ESCAPE '\\'" for _ in runs)
        escaped = [run.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "-v%" for run in runs]
        for row in self.db.query(f"SELECT * FROM agents WHERE {like}", escaped):
            version = split_version(row["name"])
            if version and version[0] in found:
                found[version[0]].append((version[1], Agent(**row)))
        return {run: sorted(versions, key=lambda v: (v[0], v[1].name)) for run, versions in found.items()}

    def champion(self, team_size: int) -> Agent | None:
        rows = list(self.db.query("SELECT * FROM agents WHERE status = 'champion' AND team_size = ?", [team_size]))
        return Agent(**rows[0]) if rows else None
