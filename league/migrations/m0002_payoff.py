"""Migration 0002: payoff.

The learner's results against each opponent, decayed so old results fade (AlphaStar's Payoff).
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE payoff (
            learner TEXT NOT NULL,
            opponent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            wins REAL NOT NULL DEFAULT 0,
            draws REAL NOT NULL DEFAULT 0,
            games REAL NOT NULL DEFAULT 0,
            updated TEXT NOT NULL,
            PRIMARY KEY (learner, opponent_id, team_size)
        )"""
    )
