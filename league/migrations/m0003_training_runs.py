"""Migration 0003: training runs.

One row per training run with its latest headline metrics (the full series is in runs/).
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE training_runs (
            run TEXT PRIMARY KEY,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            started TEXT NOT NULL,
            updated TEXT NOT NULL,
            steps INTEGER NOT NULL DEFAULT 0,
            metrics_json TEXT NOT NULL DEFAULT '{}'
        )"""
    )
