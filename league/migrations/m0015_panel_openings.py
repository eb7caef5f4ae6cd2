"""Migration 0015: how a panel test's games opened.

A panel test (training/panel.py) plays its games from the run's openings (`game.opening_jitter`: each kickoff's cars
moved by up to that many uu), and a score from the five standard kickoff spots is a different measurement: two argmax
agents replay one line from each. `panel_tests.opening_jitter` keeps the openings a test played, for `league show`;
NULL for a test recorded before this step, whose openings were not kept.
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute("ALTER TABLE panel_tests ADD COLUMN opening_jitter REAL CHECK (opening_jitter IS NULL OR "
               "opening_jitter >= 0)")
