"""The Live page: games being watched (`league watch A B`), redrawn about once a second while they play.

`league watch` rewrites the game so far as a replay under the league home (live/, atomically,
twice a second; metadata `live` true until its last write). This page lists those files, newest
first, and draws the chosen one at its latest frame in a fragment that reruns every
REFRESH_SECONDS while the game is live; a finished game is the ordinary replay player. The
drawing is one call (`draw_frame`), so another view (a 3D one) can take its place.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from dashboard import data, ui
from dashboard.replay_view import format_clock, player_html
from league.errors import LeagueError
from league.home import LeagueHome

REFRESH_SECONDS = 1.0
STALE_SECONDS = 10.0  # a live game not rewritten for this long: its `league watch` stopped (Ctrl-C, killed)
LIVE_KEY = "live"  # the replay metadata key arena.watch sets while a game plays
PICK_KEY = "live_game"


def live_games(root: str) -> list[Path]:
    """The watched games' replay files, newest first."""
    folder = LeagueHome(Path(root)).live
    if not folder.is_dir():
        return []
    stamped = []
    for path in folder.glob("*.replay"):
        try:
            stamped.append((path.stat().st_mtime, path))
        except OSError:  # removed since it was listed
            continue
    return [p for _, p in sorted(stamped, reverse=True)]


def status(meta: dict, mtime: float, now: float | None = None) -> str:
    """"live", "finished", or "stopped" (live, but not rewritten for STALE_SECONDS)."""
    if meta.get(LIVE_KEY) is not True:
        return "finished"
    return "live" if (time.time() if now is None else now) - mtime < STALE_SECONDS else "stopped"


def render(root: str) -> None:
    st.header("Live games")
    games = live_games(root)
    if not games:
        st.info("No game has been watched in this league yet. Start one with `league watch A B` (for example "
                "`league watch rule necto`); it shows here while it plays.")
        return
    names = [p.name for p in games]
    if st.session_state.get(PICK_KEY) not in names:  # first visit, or the game chosen was removed
        st.session_state[PICK_KEY] = names[0]
    picked = st.selectbox("Game", names, key=PICK_KEY, help="Watched games, newest first (the 20 newest are kept).")
    path = games[names.index(picked)]
    try:
        mtime = path.stat().st_mtime
        live = status(data.replay_view(str(path)).meta, mtime) == "live"
    except OSError:
        live = False  # gone since it was listed: _show says so
    except LeagueError as exc:
        st.error(str(exc))
        return
    if live:
        st.fragment(_refresh, run_every=REFRESH_SECONDS)(str(path))
    else:
        _show(path)


def _refresh(path: str) -> None:
    """Rerun while the game plays; a game that has just finished redraws the whole page once, as a replay."""
    try:
        if not _show(Path(path)):
            st.rerun()
    except LeagueError as exc:
        st.error(str(exc))


def _show(path: Path) -> bool:
    """Draw the game at its latest frame; whether it is still live."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        st.warning(f"{ui.plain(path.name)} is gone (only the newest watched games are kept).")
        return False
    view = data.replay_view(str(path))
    meta = view.meta
    state = status(meta, mtime)
    blue, orange = meta["score"]
    st.markdown(f"### :blue[{ui.plain(meta['blue'])}] {blue} - {orange} :orange[{ui.plain(meta['orange'])}]")
    clock = format_clock(max(0.0, meta.get("game_seconds", 0) - meta["length_seconds"]))
    st.caption(f"{state} · {meta['team_size']}v{meta['team_size']} · seed {meta['seed']} · "
               f"{format_clock(meta['length_seconds'])} played, {clock} left")
    draw_frame(view, live=state == "live")
    return state == "live"


def draw_frame(view: data.ReplayView, live: bool) -> None:
    """The game view: the replay player at the latest frame while live, from the kick-off once finished."""
    start = view.steps - 1 if live else 0
    st.iframe(player_html(view.payload, start, autoplay=False), height="content", alt="Live game")
