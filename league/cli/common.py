"""What every `league` command shares: consoles, options, error handling, opening the league."""

from __future__ import annotations

import errno
import functools
import math
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from league.stores.database import MAX_ROW_ID
from league.errors import LeagueError, clipped_line, quoted
from league.files import printable


class _SafeConsole(Console):
    """A console that prints every string it is given (table cells included) with control characters
    escaped, and never turns `:name:` into an emoji: names, paths and notes come from users and files."""

    def render_str(self, text: str, **kwargs):
        return super().render_str(printable(text, keep_lines=True), **kwargs)


# Piped output gets a wide console so tables are not squeezed to 80 columns.
out = _SafeConsole(emoji=False) if sys.stdout.isatty() else _SafeConsole(emoji=False, width=160)
err = _SafeConsole(stderr=True, emoji=False)

PROGRESS_LINE_SECONDS = 30.0  # how often a long command prints a progress line when its output is not a terminal


class LineTicker:
    """Whether a progress line is due where output is not a terminal (a bar draws nothing there until it
    ends): the first call, then one every `seconds`."""

    def __init__(self, seconds: float = PROGRESS_LINE_SECONDS) -> None:
        self.seconds, self.last = seconds, None

    def due(self) -> bool:
        if out.is_terminal:
            return False
        now = time.monotonic()
        if self.last is not None and now - self.last < self.seconds:
            return False
        self.last = now
        return True

USAGE_ERROR = 2

# What the machine, not the code, makes a write fail with: a full disk or quota, a file-size
# limit, a read-only file system, missing permissions. They end a command like a LeagueError;
# any other OSError is a bug and keeps its traceback.
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)
PERMISSION_ERRNOS = (errno.EACCES, errno.EPERM)
# A path handed in that the system cannot take (a name over 255 bytes, a path over 4096, a loop of links).
PATH_ERRNOS = (errno.ENAMETOOLONG, errno.ELOOP)
MAX_ERROR_CHARS = 2000  # the longest error line printed: whatever a sentence quotes, it stays one short line
# SQLite's words for the same (its errors carry no errno), as the start of the message.
SQLITE_ENVIRONMENT_ERRORS = ("database or disk is full", "attempt to write a readonly database", "disk I/O error",
                             "unable to open database file")

HomeOpt = Annotated[
    Optional[Path],
    typer.Option("--home", help="League home folder (default: $LEAGUE_HOME, else ./league-home).", show_default=False),
]
StageOpt = Annotated[Optional[str], typer.Option("--stage", help="Team size: 1v1, 2v2 or 3v3.", show_default=False)]
ConfigOpt = Annotated[Optional[Path], typer.Option("--config", help="A YAML file layered over configs/.", show_default=False)]
ROW_ID = {"min": 1, "max": MAX_ROW_ID}  # an id option's range: past SQLite's 64-bit ids no row can match


def check_minutes(minutes: float | None, leave_out: str = "", most: float | None = None) -> None:
    """One sentence for a --minutes that is not a finite number of minutes above 0 and at most `most`
    (default: the config's MINUTES_MAX, a year); None (not given) passes. `leave_out` says what leaving
    the flag out does, for a command where it may be left out. Checked before anything is written."""
    from league.config import MINUTES_MAX

    most = MINUTES_MAX if most is None else most
    if minutes is not None and not (math.isfinite(minutes) and 0 < minutes <= most):
        hint = f" (leave it out to {leave_out})" if leave_out else ""
        raise LeagueError(f"--minutes must be more than 0 and at most {most:g}{hint}, got {minutes:g}.")


def handles_errors(fn):
    """Turn a LeagueError, a write the machine refused (full disk, read-only, no permission), or a path it
    cannot take (too long), into one line of at most MAX_ERROR_CHARS characters on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LeagueError as exc:
            message = str(exc)
        except OSError as exc:
            if exc.errno not in WRITE_ERRNOS + PERMISSION_ERRNOS + PATH_ERRNOS:
                raise
            message = _os_error_sentence(exc)
        except sqlite3.OperationalError as exc:
            if not str(exc).startswith(SQLITE_ENVIRONMENT_ERRORS):
                raise
            message = f"Cannot write the league database {_database_of(kwargs.get('home'))}: {exc}."
        # Escaped: a path or name with [brackets] in the sentence is text, not rich markup.
        line = clipped_line(printable(message), MAX_ERROR_CHARS)
        err.print(f"[bold red]Error:[/] {escape(line)}", highlight=False, soft_wrap=True)
        raise typer.Exit(USAGE_ERROR)

    return wrapper


def _os_error_sentence(exc: OSError) -> str:
    target = exc.filename2 or exc.filename  # a copy or rename names its destination second
    if exc.errno in PATH_ERRNOS:
        return f"{exc.strerror}: {quoted(str(target))}." if target else f"{exc.strerror}."
    if exc.errno in PERMISSION_ERRNOS:
        return f"Permission denied: {target}." if target else f"A file operation was not permitted: {exc.strerror}."
    return f"Cannot write {target}: {exc.strerror}." if target else f"A write failed: {exc.strerror}."


def _database_of(home: Path | None) -> str:
    from league.home import resolve_home

    return str(resolve_home(home).db_path)


def open_league(home: Path | None, config: Path | None = None, readonly: bool = False):
    """The league home and its Registry; `readonly` for commands that write nothing.

    A read-only open works on a home this user cannot write. A league made by an older rl-league
    is still upgraded first wherever its home can be written, as a writing open would.
    """
    from league.config import load_config
    from league.home import resolve_home
    from league.registry import Registry
    from league.schema import latest_version, schema_version

    league_home = resolve_home(home).require()
    cfg = load_config(user_file=config, home_file=league_home.config_path)
    registry = Registry.open(league_home.db_path, cfg.ratings, readonly=readonly)
    if readonly and schema_version(registry.db) < latest_version() and os.access(league_home.root, os.W_OK):
        registry.close()
        Registry.open(league_home.db_path, cfg.ratings).close()  # applies the pending migrations
        registry = Registry.open(league_home.db_path, cfg.ratings, readonly=True)
    return league_home, registry
