"""Migration 0007: matches.

`league match A B`: a head-to-head played as a tournament of two entrants (its games are that
tournament's), with what the match tests and where its statistics stand after each batch.
"""

from __future__ import annotations

import sqlite_utils

MATCH_MODES = ("sprt", "fixed")
MATCH_STATUSES = ("running", "interrupted", "finished", "abandoned")
MATCH_DECISIONS = ("H1", "H0", "inconclusive")


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""
        CREATE TABLE matches (
            id INTEGER PRIMARY KEY,
            tournament_id INTEGER NOT NULL UNIQUE REFERENCES tournaments(id),
            a_agent_id INTEGER NOT NULL REFERENCES agents(id),
            b_agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            mode TEXT NOT NULL CHECK (mode IN {MATCH_MODES}),
            params_json TEXT,
            max_games INTEGER NOT NULL CHECK (max_games >= 2 AND max_games % 2 = 0),
            batch_pairs INTEGER NOT NULL CHECK (batch_pairs >= 1),
            game_seconds REAL NOT NULL CHECK (game_seconds > 0),
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {MATCH_STATUSES}),
            decision TEXT CHECK (decision IS NULL OR decision IN {MATCH_DECISIONS}),
            llr REAL,
            counts_json TEXT NOT NULL DEFAULT '[0, 0, 0, 0, 0]',
            elo REAL,
            elo_lo REAL,
            elo_hi REAL,
            nelo REAL,
            nelo_lo REAL,
            nelo_hi REAL,
            los REAL,
            games INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL,
            finished TEXT,
            CHECK (a_agent_id <> b_agent_id)
        )"""
    )
    db.execute("CREATE INDEX matches_agents ON matches(a_agent_id, b_agent_id)")
