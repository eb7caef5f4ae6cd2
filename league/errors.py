"""Errors a person can cause. The CLI turns each into one sentence and exit code 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class LeagueError(Exception):
    """A problem with user input or the league home, explained in one sentence."""


class ConfigError(LeagueError):
    """A configuration file or flag that does not fit the config schema."""


class NotFoundError(LeagueError):
    """A name that does not exist in the registry."""


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The existing names closest to `name`, for 'did you mean' hints."""
    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.4)


def unknown_name(what: str, name: str, candidates: Iterable[str]) -> NotFoundError:
    """A NotFoundError that names the closest existing names."""
    near = closest(name, candidates)
    hint = f"; did you mean {', '.join(repr(c) for c in near)}?" if near else "."
    return NotFoundError(f"No {what} named {name!r}{hint}")
