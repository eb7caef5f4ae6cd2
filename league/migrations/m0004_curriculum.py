"""Migration 0004: curriculum.

A curriculum's progress, so `league train --curriculum` resumes where it stopped and `league
curriculum status` can show it: one row per curriculum, one per stage, one per gate check.
"""

from __future__ import annotations

import sqlite_utils

CURRICULUM_STATUSES = ("running", "interrupted", "stopped", "finished")
STAGE_STATUSES = ("pending", "training", "passed", "failed", "advanced")


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""
        CREATE TABLE curricula (
            name TEXT PRIMARY KEY,
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {CURRICULUM_STATUSES}),
            stage_index INTEGER NOT NULL DEFAULT 0,
            spec_json TEXT NOT NULL,
            source TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            started TEXT NOT NULL,
            updated TEXT NOT NULL
        )"""
    )
    db.execute(
        f"""
        CREATE TABLE curriculum_stages (
            curriculum TEXT NOT NULL REFERENCES curricula(name),
            stage_index INTEGER NOT NULL,
            name TEXT NOT NULL,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            run TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN {STAGE_STATUSES}),
            start_agent_id INTEGER REFERENCES agents(id),
            start_steps INTEGER NOT NULL DEFAULT 0,
            steps INTEGER NOT NULL DEFAULT 0,
            final_agent_id INTEGER REFERENCES agents(id),
            started TEXT,
            finished TEXT,
            PRIMARY KEY (curriculum, stage_index)
        )"""
    )
    db.execute(
        """
        CREATE TABLE gate_checks (
            id INTEGER PRIMARY KEY,
            curriculum TEXT NOT NULL REFERENCES curricula(name),
            stage_index INTEGER NOT NULL,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            steps INTEGER NOT NULL,
            passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
            criteria_json TEXT NOT NULL,
            checked TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX gate_checks_stage ON gate_checks(curriculum, stage_index)")
