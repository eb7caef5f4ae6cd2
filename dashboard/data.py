"""Cached data for the pages: one read-only connection per league, query results cached briefly.

`st.cache_resource` keeps one read-only Registry per league home (the connection is shared by
every session's script thread, so queries take its lock). `st.cache_data` keeps query results
for `TTL_SECONDS`, so reruns from widget changes are cheap while games a tournament records
appear within seconds. Functions take the league home as a string so it can be a cache key.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from arena.replay import ReadBudget, ReplayOverBudget, read_replay

from dashboard import match_queries, queries, roles_queries
from dashboard.replay_view import ball_timeline, events_table, format_clock, player_payload
from dashboard.training_runs import Metrics, RunFile, list_runs, read_metrics, read_run_info
from league.config import RatingsConfig, load_config
from league.errors import LeagueError
from league.home import LeagueHome
from league.ratings import MleRatings
from league.registry import Registry

TTL_SECONDS = 10
T = TypeVar("T")


@dataclass
class OpenLeague:
    home: LeagueHome
    registry: Registry
    ratings_cfg: RatingsConfig
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call `fn(db, ...)` on the shared read-only connection."""
        with self.lock:
            return fn(self.registry.db, *args, **kwargs)


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
    return OpenLeague(home, registry, cfg)


def open_league(root: str) -> OpenLeague:
    """The shared read-only league (LeagueError if missing or unreadable; failures are not cached)."""
    check_home(root)  # a league deleted since it was opened is reported, not served stale
    try:
        return _open(root)
    except sqlite3.DatabaseError as exc:
        raise LeagueError(f"The league database at {root} cannot be read ({exc}).") from None


def clear_caches() -> None:
    st.cache_data.clear()


# --------------------------------------------------------------------------- league-wide


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def summary(root: str) -> dict[str, int]:
    return open_league(root).run(queries.summary)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def team_sizes(root: str) -> list[int]:
    return open_league(root).run(queries.team_sizes)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def games_by_team_size(root: str) -> dict[int, int]:
    return open_league(root).run(queries.games_by_team_size)


# --------------------------------------------------------------------------- ratings


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def pair_results(root: str, team_size: int) -> pd.DataFrame:
    return open_league(root).run(queries.pair_results, team_size)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def mle(root: str, team_size: int) -> MleRatings:
    league = open_league(root)
    return league.run(queries.mle, team_size, league.ratings_cfg)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def leaderboard(root: str, team_size: int, include_retired: bool, by: str = "elo") -> pd.DataFrame:
    """The stage's standings with MLE ratings and 95% intervals, best first by `by` (league.standings)."""
    league = open_league(root)
    return league.run(queries.leaderboard, team_size, league.ratings_cfg, include_retired, by)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def rating_history(root: str, names: tuple[str, ...], team_size: int) -> pd.DataFrame:
    return open_league(root).run(queries.rating_history, list(names), team_size)


# --------------------------------------------------------------------------- agents


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def agents(root: str) -> pd.DataFrame:
    return open_league(root).run(queries.agents)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def lineage_layout(root: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes (name, x = generation, y = row) and edges (parent, child, x, y, x2, y2) of the lineage."""
    graph = open_league(root).run(queries.lineage_graph)
    pos = queries.tree_layout(graph)
    nodes = pd.DataFrame([{"name": n, "x": pos[n][0], "y": pos[n][1]} for n in graph.nodes],
                         columns=["name", "x", "y"])
    edges = pd.DataFrame([{"parent": a, "child": b, "x": pos[a][0], "y": pos[a][1], "x2": pos[b][0], "y2": pos[b][1]}
                          for a, b in graph.edges], columns=["parent", "child", "x", "y", "x2", "y2"])
    return nodes, edges


def agent_details(root: str, name: str) -> dict[str, Any] | None:
    return open_league(root).run(queries.agent_details, name)


# --------------------------------------------------------------------------- tournaments and games


def tournaments(root: str) -> pd.DataFrame:
    """Not cached: the Tournaments page polls it while one is running (one small query)."""
    return open_league(root).run(queries.tournaments)


def tournament_standings(root: str, tournament_id: int) -> pd.DataFrame:
    league = open_league(root)
    return league.run(queries.tournament_standings, tournament_id, league.ratings_cfg)


def latest_games(root: str, tournament_id: int, limit: int) -> pd.DataFrame:
    """Not cached, like `tournaments`: the newest games of a tournament."""
    return open_league(root).run(queries.games, tournament_id=tournament_id, limit=limit)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def games(root: str, **filters: Any) -> pd.DataFrame:
    return open_league(root).run(queries.games, **filters)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def agents_in_games(root: str, tournament_id: int | None, outside_tournaments: bool) -> list[str]:
    return open_league(root).run(queries.agents_in_games, tournament_id, outside_tournaments)


def game(root: str, game_id: int) -> dict[str, Any] | None:
    return open_league(root).run(queries.game, game_id)


# --------------------------------------------------------------------------- matches and promotions


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def matches(root: str) -> pd.DataFrame:
    return open_league(root).run(match_queries.matches)


@dataclass
class MatchView:
    """One match as the Matches page shows it: its row (match_queries.match), pairs, the
    statistics after each complete pair, and the promotions that cite it."""

    match: dict[str, Any]
    pairs: pd.DataFrame
    path: pd.DataFrame
    promotions: pd.DataFrame


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def match(root: str, match_id: int) -> MatchView | None:
    """One match read together (None if there is no such match)."""
    league = open_league(root)
    with league.lock:
        db = league.registry.db
        row = match_queries.match(db, match_id)
        if row is None:
            return None
        pairs = match_queries.match_pairs(db, match_id)
        promotions = match_queries.promotions(db, match_id)
    path = statistics_path(pairs, row["params_json"], int(row["batch_pairs"]), int(row["max_games"]))
    return MatchView(row, pairs, path, promotions)


@st.cache_data(ttl=600, max_entries=32, show_spinner=False)
def statistics_path(pairs: pd.DataFrame, params_json: str | None, batch_pairs: int, max_games: int) -> pd.DataFrame:
    """match_queries.statistics_path, kept while the pairs stay the same (an LLR per pair costs about
    a millisecond: seconds for a long match, so a finished match is not recomputed every TTL_SECONDS)."""
    return match_queries.statistics_path(pairs, match_queries.match_params(params_json), batch_pairs, max_games)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def sprt_promoted(root: str, team_size: int) -> pd.DataFrame:
    """The agents promoted at this team size by an SPRT (match_queries.sprt_promoted)."""
    return open_league(root).run(match_queries.sprt_promoted, team_size)


# --------------------------------------------------------------------------- curricula and the climb


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def curricula(root: str) -> pd.DataFrame:
    return open_league(root).run(queries.curricula)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def curriculum(root: str, name: str) -> tuple[dict[str, Any] | None, pd.DataFrame, pd.DataFrame]:
    """One curriculum's spec (None if it is gone), stages and gate checks, read together."""
    league = open_league(root)
    return (league.run(queries.curriculum_spec, name), league.run(queries.curriculum_stages, name),
            league.run(queries.gate_checks, name))


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def baseline_win_rates(root: str, run: str, opponents: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The run's versions against each baseline (or each of `opponents`) in evaluation games
    (queries.baseline_win_rates)."""
    league = open_league(root)
    if opponents is None:
        return league.run(queries.baseline_win_rates, run)
    return league.run(queries.baseline_win_rates, run, opponents)


# --------------------------------------------------------------------------- leagues of roles and probes


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def role_leagues(root: str) -> list[str]:
    """The leagues of roles, most recently started last (roles_queries.role_leagues)."""
    return open_league(root).run(roles_queries.role_leagues)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def roles_view(root: str, name: str) -> roles_queries.RolesView:
    """One league of roles: its roles, runs and exploiter checks (roles_queries.roles_view)."""
    return open_league(root).run(roles_queries.roles_view, name)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def probes(root: str, runs: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Exploitability probes (of the snapshots of `runs`, or all of them; roles_queries.probes)."""
    return open_league(root).run(roles_queries.probes, runs)


# --------------------------------------------------------------------------- community bots


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def community_bots(root: str) -> pd.DataFrame:
    """The league's community bots with the league's record against each (queries.community_bots)."""
    return open_league(root).run(queries.community_bots)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False)
def community_results(root: str, bot: str) -> pd.DataFrame:
    """Every member's record against the bot (queries.community_results)."""
    return open_league(root).run(queries.community_results, bot)


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
