"""Migration 0012: match play.

`league match A B --sampled`: how a match's network agents choose their actions, part of what the
match is (a resumed or finished one keeps it). 1: their most likely action (argmax), as every match
played before this column was; 0: drawn from their policy. Community and scripted bots play as they
always do.
"""

from __future__ import annotations

import sqlite_utils


def migrate(db: sqlite_utils.Database) -> None:
    db.execute("ALTER TABLE matches ADD COLUMN deterministic INTEGER NOT NULL DEFAULT 1 "
               "CHECK (deterministic IN (0, 1))")
