"""Migration 0010: probes.

Exploitability probes (`league probe NAME`): a best response trained against the target alone, then
played against it; `wins` of `games` is the probe's record, a lower bound on the target's
exploitability (league.probes). The probe's final snapshot is kept (retired) as `probe_id`.
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE probes (
            id INTEGER PRIMARY KEY,
            target_id INTEGER NOT NULL REFERENCES agents(id),
            probe_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            minutes REAL NOT NULL CHECK (minutes > 0),
            steps INTEGER NOT NULL CHECK (steps >= 0),
            games INTEGER NOT NULL CHECK (games > 0),
            wins INTEGER NOT NULL CHECK (wins >= 0),
            draws INTEGER NOT NULL CHECK (draws >= 0),
            losses INTEGER NOT NULL CHECK (losses >= 0),
            seed INTEGER NOT NULL,
            created TEXT NOT NULL,
            CHECK (wins + draws + losses = games)
        )"""
    )
    db.execute("CREATE INDEX probes_target ON probes(target_id, team_size)")
