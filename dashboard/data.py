"""Cached data for the pages: one read-only connection per league, query results cached briefly.

`st.cache_resource` keeps one read-only Registry per league home (the connection is shared by
every session's script thread, so queries take its lock). A query of the league is one function of
that Registry, `fn(registry, *args)`, marked `@cached_query`: the pages call it with the league home
as a string, `fn(root, *args)`, and `st.cache_data` keeps its result for `TTL_SECONDS` keyed by the
root and the arguments, so reruns from widget changes are cheap while games a tournament records
appear within seconds. A new datum is one query function and its decorator; `fn.read(registry, ...)`
is the query itself (tests, and queries built on others).
"""

from __future__ import annotations

import inspect
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import pandas as pd
import streamlit as st

from arena.replay import ReadBudget, ReplayOverBudget, read_replay

from dashboard.replay_view import ball_timeline, events_table, format_clock, player_payload
from dashboard.training_runs import Metrics, RunFile, list_runs, read_metrics, read_run_info
from league.config import load_config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry

TTL_SECONDS = 10
T = TypeVar("T")
P = ParamSpec("P")
Query = Callable[Concatenate[Registry, P], T]  # a function of the open league's registry


@dataclass
class OpenLeague:
    home: LeagueHome
    registry: Registry  # read-only, with the home's ratings config (registry.ratings_cfg)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, fn: Query[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Call `fn(registry, ...)` on the shared read-only connection."""
        with self.lock:
            return fn(self.registry, *args, **kwargs)


def check_home(root: str) -> LeagueHome:
    """The league home, or a LeagueError saying why there is nothing to show."""
    home = LeagueHome(Path(root))
    if not home.root.exists():
        raise LeagueError(f"There is no league at {home.root} (the folder does not exist). "
                          f"Create one with `league init --home {home.root}`, or pass --home.")
    return home.require()


@st.cache_resource(show_spinner=False)
def _open(root: str) -> OpenLeague:
    home = check_home(root)
    cfg = load_config(home_file=home.config_path).ratings
    # Read-only, so the dashboard also serves a home it may not write (a share, another user's);
    # an empty or foreign database is refused there with its one sentence.
    registry = Registry.open(home.db_path, cfg, readonly=True)
    return OpenLeague(home, registry)


def open_league(root: str) -> OpenLeague:
    """The shared read-only league (LeagueError if missing or unreadable; failures are not cached)."""
    check_home(root)  # a league deleted since it was opened is reported, not served stale
    try:
        return _open(root)
    except sqlite3.DatabaseError as exc:
        raise LeagueError(f"The league database at {root} cannot be read ({exc}).") from None


def clear_caches() -> None:
    st.cache_data.clear()


class CachedQuery(Generic[P, T]):
    """A query of the league as the pages call it: `query(root, *args)` runs `read(registry, *args)` on the
    league at `root` (open_league's shared registry, under its lock), its result cached by `st.cache_data`
    for `ttl` seconds keyed by the root and the arguments (not cached with ttl 0: read on every call)."""

    def __init__(self, read: Query[P, T], ttl: float) -> None:
        self.read = read
        self.ttl = ttl
        self.__doc__, self.__name__, self.__qualname__ = read.__doc__, read.__name__, read.__qualname__
        self.__module__ = read.__module__

        def from_root(root: str, *args: Any, **kwargs: Any) -> T:
            return open_league(root).run(read, *args, **kwargs)

        # Streamlit keys a function's cache by its module, qualified name and source, and names its
        # arguments by its signature: the query's own (every `from_root` has the same source, so without
        # them two queries would share their entries), the registry in front replaced by the root.
        from_root.__module__, from_root.__name__, from_root.__qualname__ = (
            read.__module__, read.__name__, read.__qualname__)
        from_root.__wrapped__ = read  # type: ignore[attr-defined]  # inspect.getsource reads the query's
        params = list(inspect.signature(read).parameters.values())[1:]
        from_root.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter("root", inspect.Parameter.POSITIONAL_OR_KEYWORD), *params])
        self._call = st.cache_data(ttl=ttl, show_spinner=False)(from_root) if ttl > 0 else from_root

    def __call__(self, root: str, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._call(root, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<cached_query {self.__module__}.{self.__qualname__} ttl={self.ttl}>"


@overload
def cached_query(read: Query[P, T], /) -> CachedQuery[P, T]: ...
@overload
def cached_query(*, ttl: float = TTL_SECONDS) -> Callable[[Query[P, T]], CachedQuery[P, T]]: ...


def cached_query(read=None, /, *, ttl=TTL_SECONDS):
    """Mark `read(registry, *args)` as a query the pages call with the league's root: `@cached_query`
    (results kept TTL_SECONDS), or `@cached_query(ttl=0)` for one a page polls (read on every call)."""
    if read is None:
        return lambda fn: CachedQuery(fn, ttl)
    return CachedQuery(read, ttl)


# --------------------------------------------------------------------------- replays


def confined_replay_path(home_root: Path, stored: str) -> Path | None:
    """The file a game's stored replay path names, or None when it lies outside `<home>/replays`.

    A relative path is taken from the league home (as tournaments store it). The check is made on
    the text first (an absolute path elsewhere, or `..` climbing out, is refused without a look at
    the file system), then on the path with every symlink resolved, so a link inside the replays
    folder that points out of it is refused too. Nothing is opened or read, and the answer does
    not depend on whether the file exists (a path holding a NUL byte, which no file has, is refused
    too). The returned path is the resolved one, so what is read
    is what was checked.
    """
    if "\x00" in stored:  # no file has such a name (and os calls raise ValueError on it)
        return None
    replays = Path(os.path.normpath(home_root / "replays"))
    wanted = Path(os.path.normpath(home_root / stored))  # an absolute `stored` replaces home_root
    real_replays = Path(os.path.realpath(replays))
    if not (_within(wanted, replays) or _within(wanted, real_replays)):
        return None
    real = Path(os.path.realpath(wanted))
    return real if _within(real, real_replays) else None


def _within(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


@dataclass
class ReplayView:
    meta: dict[str, Any]
    payload: dict[str, Any]
    events: pd.DataFrame
    timeline: pd.DataFrame
    steps: int
    seconds_per_step: float
    mtime: float  # of the file read, so a rewritten file (a live game) is read again


# The dashboard's replay budget: a page decodes a whole replay into memory, so it takes at most 10
# minutes of game clock at tick skip 1 (80 at a league game's tick skip 8) and 20,000 events (the
# reader's own bounds are an hour and 3.5 million), refused from the file's header before anything
# is inflated; the player then embeds at most replay_view.MAX_FRAMES frames.
REPLAY_BUDGET = ReadBudget(steps=72_000, events=20_000)


def replay_view(path: str) -> ReplayView:
    """Everything the Replays and Live pages need from one file, cached by its path alone: a file
    rewritten since (a live game, twice a second) replaces its entry rather than adding one, so the
    cache holds one view a file however often it changes.

    Raises LeagueError for a missing, corrupt or foreign file (arena.replay's message), and for one
    over REPLAY_BUDGET (one sentence saying how to play it instead).
    """
    view = _replay_view(path)
    if _mtime(path) != view.mtime:
        _replay_view.clear(path)
        view = _replay_view(path)
    return view


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


@st.cache_data(ttl=600, max_entries=8, show_spinner="Loading replay...")
def _replay_view(path: str) -> ReplayView:
    mtime = _mtime(path)  # before the read: a file rewritten during it is read again next time
    try:
        replay = read_replay(Path(path), REPLAY_BUDGET)
    except ReplayOverBudget as exc:
        found, budget = exc.header, exc.budget
        raise LeagueError(
            f"The replay holds {found.steps:,} steps and {found.events:,} events "
            f"({format_clock(found.seconds())} of game clock), more than the dashboard draws ({budget.steps:,} steps "
            f"and {budget.events:,} events), so it is not decoded here; `league replay play FILE --viewer rocketsimvis` "
            "plays it in a 3D viewer.") from None
    return ReplayView(meta=replay.meta, payload=player_payload(replay), events=events_table(replay),
                      timeline=ball_timeline(replay), steps=replay.steps, seconds_per_step=replay.seconds_per_step(),
                      mtime=mtime)


# --------------------------------------------------------------------------- training runs


def training_runs(root: str) -> list[RunFile]:
    return list_runs(LeagueHome(Path(root)).runs)


@st.cache_data(ttl=TTL_SECONDS, max_entries=64, show_spinner=False)
def training_metrics(path: str, size: int, mtime: float) -> Metrics:
    """One run's metrics (size and mtime key the cache, so a growing file is re-read)."""
    return read_metrics(Path(path))


def run_info(path: str) -> dict[str, Any]:
    return read_run_info(Path(path).parent)
