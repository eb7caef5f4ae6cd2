"""Exports: each bot folder made from an agent (`league export --rlbot`), for `league show`."""

from __future__ import annotations

from dataclasses import dataclass

from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now


@dataclass(frozen=True)
class ExportRecord:
    format: str
    path: str
    zip_path: str | None
    deterministic: bool
    manifest_sha256: str
    created: str


class ExportStore(Store):
    def __init__(self, database: Database, agents: AgentStore):
        super().__init__(database)
        self.agents = agents

    def record(self, agent: str, format: str, path: str, zip_path: str | None, deterministic: bool,
               manifest_sha256: str) -> None:
        with self.transaction():
            agent_id = self.agents.get(agent).id
            self.db.execute(
                """INSERT INTO exports (agent_id, format, path, zip_path, deterministic, manifest_sha256, created)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                [agent_id, format, path, zip_path, int(deterministic), manifest_sha256, utc_now()])

    def of(self, agent: str) -> list[ExportRecord]:
        """The agent's exports, oldest first (none on a read-only home older than the exports table)."""
        if "exports" not in self.db.table_names():
            return []
        rows = self.db.query(
            """SELECT e.* FROM exports e JOIN agents a ON a.id = e.agent_id WHERE a.name = ? ORDER BY e.id""",
            [agent])
        return [ExportRecord(r["format"], r["path"], r["zip_path"], bool(r["deterministic"]),
                             r["manifest_sha256"], r["created"]) for r in rows]
