"""Migration 0009: game members.

Mixed teams (`league match "A+necto" "B+C" --stage 2v2`): who drove each car of a game where a side
is a team of several members. Such a game is marked `mixed` and lists every car of both sides here;
its blue_agent_id and orange_agent_id hold each side's first member (car slot 0). A game of two
single agents has no rows here and mixed = 0, exactly as before.
"""

from __future__ import annotations

import sqlite_utils

SIDES = ("blue", "orange")


def migrate(db: sqlite_utils.Database) -> None:
    db.execute("ALTER TABLE games ADD COLUMN mixed INTEGER NOT NULL DEFAULT 0 CHECK (mixed IN (0, 1))")
    db.execute(
        f"""
        CREATE TABLE game_members (
            game_id INTEGER NOT NULL REFERENCES games(id),
            side TEXT NOT NULL CHECK (side IN {SIDES}),
            slot INTEGER NOT NULL CHECK (slot BETWEEN 0 AND 2),
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            PRIMARY KEY (game_id, side, slot)
        )"""
    )
    db.execute("CREATE INDEX game_members_agent ON game_members(agent_id)")
