"""Migration 0011: league roles.

League roles (`league train --league FILE`): a league's roles, each with its current run (a new one
at every restart of an exploiter), its restarts and the wall-clock seconds it has trained (what the
time shares are kept by); and every check of an exploiter against its target, the reset it caused or
not.
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE leagues (
            name TEXT PRIMARY KEY,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            spec_json TEXT NOT NULL,
            source TEXT NOT NULL,
            status TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            started TEXT NOT NULL,
            updated TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE league_roles (
            league TEXT NOT NULL REFERENCES leagues(name),
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            restart INTEGER NOT NULL DEFAULT 1 CHECK (restart >= 1),
            run TEXT NOT NULL,
            seconds REAL NOT NULL DEFAULT 0 CHECK (seconds >= 0),
            PRIMARY KEY (league, role)
        )"""
    )
    db.execute(
        """
        CREATE TABLE role_checks (
            id INTEGER PRIMARY KEY,
            league TEXT NOT NULL,
            role TEXT NOT NULL,
            restart INTEGER NOT NULL,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            steps INTEGER NOT NULL CHECK (steps >= 0),
            targets TEXT NOT NULL,
            games INTEGER NOT NULL CHECK (games > 0),
            wins INTEGER NOT NULL CHECK (wins >= 0),
            draws INTEGER NOT NULL CHECK (draws >= 0),
            losses INTEGER NOT NULL CHECK (losses >= 0),
            reset TEXT NOT NULL DEFAULT '',
            created TEXT NOT NULL,
            CHECK (wins + draws + losses = games),
            FOREIGN KEY (league, role) REFERENCES league_roles(league, role)
        )"""
    )
