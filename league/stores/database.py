"""The league database file: opening it safely, and the one connection every store shares.

SQLite through sqlite-utils, in WAL mode with foreign keys on. Every multi-row write runs in
one `BEGIN IMMEDIATE` transaction (`Database.transaction`), so concurrent writers queue instead
of failing and a failure part-way leaves nothing half-written.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import sqlite_utils

from league.errors import LeagueError, clipped_line
from league.schema import is_foreign, latest_version, schema_version

BUSY_TIMEOUT_SECONDS = 60.0
MAX_ROW_ID = 2**63 - 1  # SQLite's INTEGER is 64-bit signed: a larger Python int cannot even be bound


def row_id(value: int, what: str) -> int:
    """`value`, an id handed in, to look up; a LeagueError naming `what` when no row can have it (an id
    past SQLite's 64-bit range would be an OverflowError from the driver, not an answer)."""
    if not 0 < value <= MAX_ROW_ID:
        raise LeagueError(f"No {what} with id {clipped_line(str(value), 40)}.")
    return value


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def connect(path: Path, readonly: bool = False) -> sqlite_utils.Database:
    """A sqlite-utils Database on `path` (read-only connections never write or migrate)."""
    if readonly:
        uri = Path(path).absolute().as_uri()  # percent-encoded: a '?' or '#' in a folder name stays a name
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # SQLite opens lazily: fail here
        except sqlite3.OperationalError:
            conn.close()
            wal = Path(f"{path}-wal")
            if os.access(Path(path).parent, os.W_OK) or (wal.is_file() and wal.stat().st_size > 0):
                raise
            # Reading a WAL database takes its -shm file, which mode=ro cannot create in a folder
            # it may not write (a read-only share or mount, another user's home). With no WAL
            # content beside it (the last connection to close folds the WAL into the main file
            # and removes it), the main file holds every commit, so reading it as immutable is
            # exact. What such a reader gives up: a writer with rights to the folder that starts
            # later is not seen, which a read-only view of a league can live with.
            conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=BUSY_TIMEOUT_SECONDS,
                                   check_same_thread=False)
    else:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS)
    conn.execute("PRAGMA foreign_keys = ON")
    return sqlite_utils.Database(conn)


def require_writable(path: Path) -> None:
    """Refuse, in one sentence, a write to a database (or its folder) this user may not write.

    SQLite would open it read-only without a word and fail at the first write; in WAL mode a
    writer also creates the -wal and -shm files next to the database, so the folder counts.
    """
    for target in (path.parent, path) if path.exists() else (path.parent,):
        if not os.access(target, os.W_OK):
            which = "" if target == path.parent else f" ({target.name} cannot be written)"
            raise LeagueError(f"The league home {path.parent} is read-only{which}, so this command cannot run; "
                              "the commands that only read the league still work.")


def open_league_db(path: Path, readonly: bool) -> tuple[sqlite_utils.Database, int]:
    """A connection to a league database (or an empty one) and its schema version.

    Refuses, closing the connection, a file SQLite cannot read, one it cannot open, and another
    application's database, whose tables a migration would otherwise be added to.
    """
    if path.exists() and not os.access(path, os.R_OK):
        raise LeagueError(f"Cannot read the league database {path}: permission denied.")
    db = None
    try:
        db = connect(path, readonly=readonly)
        foreign = is_foreign(db)
        version = schema_version(db)
    except sqlite3.OperationalError as exc:  # the file is there but cannot be opened (permissions, locks, I/O)
        if db is not None:
            db.conn.close()
        raise LeagueError(f"Cannot read the league database {path}: {exc}.") from None
    except sqlite3.DatabaseError:  # SQLite's own verdict: not a database, or a corrupt one
        if db is not None:
            db.conn.close()
        raise LeagueError(f"{path} is not a league database (it cannot be read as SQLite).") from None
    if foreign:
        db.conn.close()
        raise LeagueError(f"{path} is another application's SQLite database (it has tables, but none of "
                          "rl-league's), so it was left untouched; choose another league home.")
    if version > latest_version():
        db.conn.close()
        raise LeagueError(
            f"{path} has schema version {version}, newer than this rl-league understands ({latest_version()}); "
            "upgrade rl-league."
        )
    return db, version


class Database:
    """One connection and its one write transaction, shared by every store of a league."""

    def __init__(self, db: sqlite_utils.Database):
        self.db = db

    def close(self) -> None:
        self.db.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested calls join the outer one."""
        conn = self.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()


class Store:
    """A part of the league database: its queries, on the shared connection and transaction."""

    def __init__(self, database: Database):
        self.database = database
        self.db = database.db
        self.transaction = database.transaction
