"""The one rule for every name a person gives the league: agents, training runs, curricula.

Names become file names (checkpoints, run folders, replay files named after both agents),
so the rule keeps them inside one path component: ASCII letters, digits, '-', '_' and '.',
starting with a letter or digit (so never '.', '..' or an option-like '-x'), and short
enough that a replay named after two agents always fits a file name.
"""

from __future__ import annotations

import re

from league.errors import LeagueError, quoted

MAX_NAME_LENGTH = 64
# A run's versions are RUN-v1, RUN-v2, ...: room for the suffix keeps every version a valid name.
VERSION_SUFFIX_ROOM = 8
MAX_RUN_NAME_LENGTH = MAX_NAME_LENGTH - VERSION_SUFFIX_ROOM
NAME_RULE = "letters, digits, '-', '_' or '.', starting with a letter or digit"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def check_name(name: object, what: str = "Agent name", max_length: int = MAX_NAME_LENGTH) -> str:
    """`name` if it follows the rule, else a LeagueError that states the rule."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > max_length:
        shown = quoted(name) if isinstance(name, str) else repr(name)
        raise LeagueError(f"{what} {shown} is not allowed: use 1 to {max_length} {NAME_RULE}.")
    return name


def check_run_name(name: object, what: str = "Run name") -> str:
    """A training run's name: like an agent name, with room left for its versions' '-vN'."""
    return check_name(name, what, MAX_RUN_NAME_LENGTH)


# A training run's snapshot versions: RUN-v1, RUN-v2, ... (training/snapshots.py names them).
_VERSION = re.compile(r"(?P<run>.+)-v(?P<k>[0-9]+)")


def split_version(name: str) -> tuple[str, int] | None:
    """(run, version number) of a snapshot name ('ppo-1v1-v12' -> ('ppo-1v1', 12)); None for other names."""
    m = _VERSION.fullmatch(name)
    return (m.group("run"), int(m.group("k"))) if m else None
