"""Migration 0008: promotions.

Gated promotion: each change of a stage's champion (`league promote`, by hand or after an SPRT match
against the champion, or by training), and each SPRT that left the champion in place.
"""

from __future__ import annotations

import sqlite_utils

from league.migrations.m0007_matches import MATCH_DECISIONS

PROMOTION_METHODS = ("manual", "sprt", "training")


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""
        CREATE TABLE promotions (
            id INTEGER PRIMARY KEY,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            previous_champion_id INTEGER REFERENCES agents(id),
            method TEXT NOT NULL CHECK (method IN {PROMOTION_METHODS}),
            promoted INTEGER NOT NULL CHECK (promoted IN (0, 1)),  -- 0: the SPRT did not accept H1, the champion stays
            match_id INTEGER REFERENCES matches(id),
            decision TEXT CHECK (decision IS NULL OR decision IN {MATCH_DECISIONS}),
            llr REAL, elo REAL, elo_lo REAL, elo_hi REAL, los REAL, games INTEGER,
            created TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX promotions_stage ON promotions(team_size, agent_id)")
