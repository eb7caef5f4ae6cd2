"""Migration 0014: a title decided by a round robin.

At the end of a run that promotes during training, the evaluation panel and the run's best snapshots
play a round robin, and the entrant whose worst matchup is best takes the title (arena/crown.py): a
promotion of method 'round-robin' whose row names that tournament. SQLite cannot widen a CHECK
constraint in place, so the table is rebuilt with the same rows.
"""

from __future__ import annotations

import sqlite_utils

from league.migrations.m0007_matches import MATCH_DECISIONS

PROMOTION_METHODS = ("manual", "sprt", "training", "round-robin")
_COLUMNS = ("id, agent_id, team_size, previous_champion_id, method, promoted, match_id, decision, llr, elo, elo_lo, "
            "elo_hi, los, games, created, tournament_id")


def migrate(db: sqlite_utils.Database) -> None:
    # The column first: on a home whose record of this step was deleted while its change was kept, this fails
    # ("duplicate column name") and the step is rolled back, as every other step would (league.schema.migrate).
    db.execute("ALTER TABLE promotions ADD COLUMN tournament_id INTEGER REFERENCES tournaments(id)")
    db.execute(
        f"""
        CREATE TABLE promotions_new (
            id INTEGER PRIMARY KEY,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            previous_champion_id INTEGER REFERENCES agents(id),
            method TEXT NOT NULL CHECK (method IN {PROMOTION_METHODS}),
            promoted INTEGER NOT NULL CHECK (promoted IN (0, 1)),  -- 0: the SPRT did not accept H1, the champion stays
            match_id INTEGER REFERENCES matches(id),
            decision TEXT CHECK (decision IS NULL OR decision IN {MATCH_DECISIONS}),
            llr REAL, elo REAL, elo_lo REAL, elo_hi REAL, los REAL, games INTEGER,
            created TEXT NOT NULL,
            tournament_id INTEGER REFERENCES tournaments(id)  -- the round robin of a 'round-robin' promotion
        )"""
    )
    db.execute(f"INSERT INTO promotions_new ({_COLUMNS}) SELECT {_COLUMNS} FROM promotions")
    db.execute("DROP TABLE promotions")
    db.execute("ALTER TABLE promotions_new RENAME TO promotions")
    db.execute("CREATE INDEX promotions_stage ON promotions(team_size, agent_id)")
