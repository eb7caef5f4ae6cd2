"""Migration 0001: initial: the agents, tournaments, games, ratings and rating_history tables."""

from __future__ import annotations

import sqlite_utils

STATUSES = ("active", "champion", "retired")
ORIGINS = ("tournament", "evaluation", "manual")
RESULTS = ("blue", "orange", "draw")


def migrate(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""
        CREATE TABLE agents (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            team_size INTEGER CHECK (team_size IS NULL OR team_size BETWEEN 1 AND 3),
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN {STATUSES}),
            parent_id INTEGER REFERENCES agents(id),
            created TEXT NOT NULL,
            checkpoint_path TEXT,
            checkpoint_sha256 TEXT,
            config_json TEXT,
            steps_trained INTEGER NOT NULL DEFAULT 0,
            notes TEXT NOT NULL DEFAULT ''
        )"""
    )
    db.execute(
        """
        CREATE TABLE tournaments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            status TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
            seed INTEGER NOT NULL,
            games_per_pair INTEGER NOT NULL,
            planned_games INTEGER NOT NULL,
            finished_games INTEGER NOT NULL DEFAULT 0,
            entrants_json TEXT NOT NULL,
            config_json TEXT NOT NULL,
            created TEXT NOT NULL,
            finished TEXT
        )"""
    )
    db.execute(
        f"""
        CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            origin TEXT NOT NULL CHECK (origin IN {ORIGINS}),
            tournament_id INTEGER REFERENCES tournaments(id),
            schedule_index INTEGER,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            blue_agent_id INTEGER NOT NULL REFERENCES agents(id),
            orange_agent_id INTEGER NOT NULL REFERENCES agents(id),
            seed INTEGER NOT NULL,
            blue_goals INTEGER NOT NULL CHECK (blue_goals >= 0),
            orange_goals INTEGER NOT NULL CHECK (orange_goals >= 0),
            result TEXT NOT NULL CHECK (result IN {RESULTS}),
            length_seconds REAL NOT NULL CHECK (length_seconds >= 0),
            replay_path TEXT,
            played TEXT NOT NULL,
            UNIQUE (tournament_id, schedule_index)
        )"""
    )
    db.execute("CREATE INDEX games_blue ON games(blue_agent_id)")
    db.execute("CREATE INDEX games_orange ON games(orange_agent_id)")
    db.execute(
        """
        CREATE TABLE ratings (
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            elo REAL NOT NULL,
            mu REAL NOT NULL,
            sigma REAL NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0,
            draws INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0,
            goals_for INTEGER NOT NULL DEFAULT 0,
            goals_against INTEGER NOT NULL DEFAULT 0,
            last_played TEXT,
            PRIMARY KEY (agent_id, team_size)
        )"""
    )
    db.execute(
        """
        CREATE TABLE rating_history (
            id INTEGER PRIMARY KEY,
            game_id INTEGER NOT NULL REFERENCES games(id),
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL,
            elo_before REAL NOT NULL,
            elo_after REAL NOT NULL,
            mu_before REAL NOT NULL,
            mu_after REAL NOT NULL,
            sigma_before REAL NOT NULL,
            sigma_after REAL NOT NULL,
            played TEXT NOT NULL,
            UNIQUE (game_id, agent_id)
        )"""
    )
    db.execute("CREATE INDEX rating_history_agent ON rating_history(agent_id, team_size)")
