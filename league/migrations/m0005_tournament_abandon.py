"""Migration 0005: tournament abandon.

`league tournament --abandon ID`: a tournament can end as 'abandoned', with a message saying why.
SQLite cannot change a CHECK constraint in place, so the table is rebuilt under the same name with
the same ids. Foreign keys are deferred to the commit: dropping the old table leaves the games'
references dangling until the new table holds their rows again.
"""

from __future__ import annotations

import sqlite_utils

TOURNAMENT_STATUSES = ("running", "finished", "interrupted", "failed", "abandoned")


def migrate(db: sqlite_utils.Database) -> None:
    db.execute("PRAGMA defer_foreign_keys = ON")
    db.execute("CREATE TEMP TABLE tournaments_copy AS SELECT * FROM tournaments")
    db.execute("DROP TABLE tournaments")
    db.execute(
        f"""
        CREATE TABLE tournaments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {TOURNAMENT_STATUSES}),
            seed INTEGER NOT NULL,
            games_per_pair INTEGER NOT NULL,
            planned_games INTEGER NOT NULL,
            finished_games INTEGER NOT NULL DEFAULT 0,
            entrants_json TEXT NOT NULL,
            config_json TEXT NOT NULL,
            created TEXT NOT NULL,
            finished TEXT,
            message TEXT NOT NULL DEFAULT ''
        )"""
    )
    db.execute(
        """INSERT INTO tournaments (id, name, team_size, status, seed, games_per_pair, planned_games,
               finished_games, entrants_json, config_json, created, finished)
           SELECT id, name, team_size, status, seed, games_per_pair, planned_games, finished_games,
               entrants_json, config_json, created, finished FROM tournaments_copy"""
    )
    db.execute("DROP TABLE tournaments_copy")
