"""Migration 0013: panel tests.

The evaluation panel (training/panel.py): a snapshot's games against the league's strongest members
(its teacher, the community bots of its stage, the champion, the best snapshots so far), played in
mirrored pairs until one member clearly beats it or every member has had its games. A test's row says
whether no member beat the candidate (`passed`); one `panel_results` row per member keeps the record
against it, which is what `league show` reports a champion was measured against.
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE panel_tests (
            id INTEGER PRIMARY KEY,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            run TEXT NOT NULL,
            steps INTEGER NOT NULL CHECK (steps >= 0),
            passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
            beaten_by_id INTEGER REFERENCES agents(id),
            seconds REAL NOT NULL CHECK (seconds >= 0),
            seed INTEGER NOT NULL,
            created TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX panel_tests_agent ON panel_tests(agent_id, team_size)")
    db.execute(
        """
        CREATE TABLE panel_results (
            test_id INTEGER NOT NULL REFERENCES panel_tests(id),
            member_id INTEGER NOT NULL REFERENCES agents(id),
            wins INTEGER NOT NULL CHECK (wins >= 0),
            draws INTEGER NOT NULL CHECK (draws >= 0),
            losses INTEGER NOT NULL CHECK (losses >= 0),
            PRIMARY KEY (test_id, member_id)
        )"""
    )
