"""The league database schema: its migrations (league.migrations, one module a step) applied in
order, and what the stores ask of a database (documented in docs/schema.md).

Each migration runs in one transaction together with its record in `_sqlite_migrations`,
so applying them is idempotent and a failed step leaves the database as it was. The
schema version is the number of applied migrations, mirrored in `PRAGMA user_version`.
"""

from __future__ import annotations

import sqlite3

import sqlite_utils
from sqlite_utils.migrations import Migrations

from league.errors import LeagueError
from league.migrations import migrations
from league.migrations.m0001_initial import ORIGINS, RESULTS, STATUSES
from league.migrations.m0014_crowning import PROMOTION_METHODS

__all__ = ["ORIGINS", "PROMOTION_METHODS", "RESULTS", "STATUSES", "is_foreign", "latest_version", "migrate",
           "migrations", "schema_version"]


def schema_version(db: sqlite_utils.Database) -> int:
    """Number of migrations applied to this database."""
    return len(migrations.applied(db))


def is_foreign(db: sqlite_utils.Database) -> bool:
    """Whether `db` is another application's: it has tables (or migration records) but no rl-league migration.

    An empty database is not foreign, nor one holding only an empty migrations table (left by a
    first migration that failed): a league created there writes over nothing.
    """
    # One read transaction: its reads see one state of the file, so a `league init` committing its
    # first migration between them cannot make a league's own tables look like another application's.
    own = not db.conn.in_transaction
    if own:
        db.conn.execute("BEGIN")
    try:
        if migrations.applied(db):
            return False
        records = Migrations.migrations_table
        names = [n for n in db.table_names() + db.view_names() if not n.startswith("sqlite_")]
        return any(n != records for n in names) or (records in names and db[records].count > 0)
    finally:
        if own:
            db.conn.execute("COMMIT")


def latest_version() -> int:
    """Number of migrations this rl-league knows: all of them are pending on an empty database
    (sqlite-utils lists its registered migrations only through `pending`)."""
    empty = sqlite_utils.Database(memory=True)
    try:
        return len(migrations.pending(empty))
    finally:
        empty.close()


def migrate(db: sqlite_utils.Database) -> int:
    """Apply pending migrations; returns the schema version reached.

    A step that fails on what it means to create (a migration record deleted while its change was
    kept: "duplicate column name", "table ... already exists") is one sentence naming the step, which
    was rolled back.
    """
    try:
        migrations.apply(db)
    except sqlite3.OperationalError as exc:
        failed = next(iter(migrations.pending(db))).name  # the steps before it were applied and recorded
        raise LeagueError(
            f"The league database does not match its own migration records: step {failed} is not "
            f"recorded as applied, yet applying it fails ({exc}); the database was changed outside rl-league "
            "(that step was rolled back): restore it from a backup.") from None
    version = schema_version(db)
    db.execute(f"PRAGMA user_version = {version}")
    return version
