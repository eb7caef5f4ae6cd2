"""The Live page: games being watched (`league watch A B`), redrawn about once a second while they play.

`league watch` rewrites the game so far as a replay under the league home (live/, atomically,
twice a second; metadata `live` true until its last write, read by arena.replay.is_live). This
page lists those files, newest first, and draws the chosen one at its latest frame in a fragment
that reruns every REFRESH_SECONDS while the game is live; a finished game is the ordinary replay
player. The drawing is one call (`draw_frame`), so another view (a 3D one) can take its place.

The page follows new games: another fragment looks at the live folder every FOLLOW_SECONDS, and a
file it has not seen (a `league watch` started since: arena.watch names each game's file anew)
reruns the page, which then shows that game, whether the page showed none, a finished game or a
game chosen by hand. A rerun with no new file keeps the reader's choice.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from arena.replay import is_live
from dashboard import data, ui
from dashboard.replay_view import format_clock, player_html
from league.errors import LeagueError
from league.home import LeagueHome

REFRESH_SECONDS = 1.0
FOLLOW_SECONDS = 2.0  # how often an open page looks for a game started since it was drawn
STALE_SECONDS = 10.0  # a live game not rewritten for this long: its `league watch` stopped (Ctrl-C, killed)
PICK_KEY = "live_game"
SEEN_KEY = "live_games_seen"  # the files the page has listed, so a new one is told from a known one


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


def newest_unseen(names: list[str], seen: list[str] | None) -> str | None:
    """The newest of `names` (newest first) that is not in `seen`: a game started since the page last
    listed the folder; None when there is none or the page has not listed it before."""
    if seen is None:
        return None
    known = set(seen)
    return next((n for n in names if n not in known), None)


def status(meta: dict, mtime: float, now: float | None = None) -> str:
    """"live", "finished", or "stopped" (live, but not rewritten for STALE_SECONDS)."""
    if not is_live(meta):
        return "finished"
    return "live" if (time.time() if now is None else now) - mtime < STALE_SECONDS else "stopped"


def render(root: str) -> None:
    st.header("Live games")
    games = live_games(root)
    names = [p.name for p in games]
    new = newest_unseen(names, st.session_state.get(SEEN_KEY))
    st.session_state[SEEN_KEY] = names
    st.fragment(_follow, run_every=FOLLOW_SECONDS)(root, tuple(names))
    if not games:
        st.info("No game has been watched in this league yet. Start one with `league watch A B` (for example "
                "`league watch rule necto`); it shows here while it plays.")
        return
    if new is not None:  # a game started since the page was drawn: show it
        st.session_state[PICK_KEY] = new
    elif st.session_state.get(PICK_KEY) not in names:  # first visit, or the game chosen was removed
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


def _follow(root: str, names: tuple[str, ...]) -> None:
    """Rerun the page when the live folder holds a game it did not list (`names`): a new watch."""
    known = set(names)
    if any(p.name not in known for p in live_games(root)):
        st.rerun()


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
