"""Migration 0006: exports.

`league export NAME --rlbot DIR`: each export made, so `league show` can list where an agent went.
"""

from __future__ import annotations

import sqlite_utils

EXPORT_FORMATS = ("rlbot",)


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""
        CREATE TABLE exports (
            id INTEGER PRIMARY KEY,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            format TEXT NOT NULL CHECK (format IN ({", ".join(repr(f) for f in EXPORT_FORMATS)})),
            path TEXT NOT NULL,
            zip_path TEXT,
            deterministic INTEGER NOT NULL CHECK (deterministic IN (0, 1)),
            manifest_sha256 TEXT NOT NULL,
            created TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX exports_agent ON exports(agent_id)")
