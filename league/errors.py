"""Errors a person can cause. The CLI turns each into one sentence and exit code 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


QUOTED_CHARS = 80  # the most of a name, path or value handed in that a sentence quotes


def quoted(text: str, limit: int = QUOTED_CHARS) -> str:
    """`text` quoted (repr) for a sentence, cut to its first `limit` characters with its length when longer:
    a name or value handed in can be megabytes long, and one sentence stays one short line."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def clipped_line(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how long it was: the last bound on a line the CLI prints."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters in all)"


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
    """A NotFoundError that names the closest existing names (the name quoted clipped: it may be megabytes)."""
    near = closest(name, candidates)
    hint = f"; did you mean {', '.join(repr(c) for c in near)}?" if near else "."
    return NotFoundError(f"No {what} named {quoted(name)}{hint}")
