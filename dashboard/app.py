"""The Streamlit entry point: `league dashboard` runs `streamlit run dashboard/app.py -- --home DIR`.

`main()` resolves the league home (the --home argument after `--`, else $LEAGUE_HOME, else
./league-home), draws the sidebar and hands off to one page function. The page is named in the
URL (`?page=replays&game=12`), so any view can be linked to. Nothing here writes: the
database is opened read-only (dashboard/data.py) and replays are read through arena.replay.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import streamlit as st

from dashboard import (
    data,
    pages_community,
    pages_curriculum,
    pages_head_to_head,
    pages_history,
    pages_leaderboard,
    pages_lineage,
    pages_live,
    pages_matches,
    pages_nash,
    pages_replays,
    pages_roles,
    pages_tournaments,
    pages_training,
    queries,
    ui,
)
from league.errors import LeagueError
from league.home import resolve_home

PAGES: dict[str, tuple[str, Callable[[str], None]]] = {
    "leaderboard": ("Leaderboard", pages_leaderboard.render),
    "history": ("Rating history", pages_history.render),
    "head-to-head": ("Head-to-head", pages_head_to_head.render),
    "nash": ("Nash averaging", pages_nash.render),
    "lineage": ("Lineage", pages_lineage.render),
    "tournaments": ("Tournaments", pages_tournaments.render),
    "matches": ("Matches", pages_matches.render),
    "replays": ("Replays", pages_replays.render),
    "live": ("Live games", pages_live.render),
    "training": ("Training", pages_training.render),
    "curriculum": ("Curriculum", pages_curriculum.render),
    "roles": ("League roles", pages_roles.render),
    "community": ("Community", pages_community.render),
}
PAGE_KEY = "page"


def home_argument(argv: list[str]) -> str | None:
    """The --home value among the script's arguments (other arguments are ignored)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--home")
    known, _ = parser.parse_known_args(argv)
    return known.home


def keep_widget_state() -> None:
    """Streamlit forgets a widget's value when a run does not draw it; re-storing the shared
    keys keeps, say, the chosen stage while visiting the Replays page."""
    for key in (PAGE_KEY, *ui.PERSISTENT_KEYS):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def choose_page() -> str:
    if st.session_state.get(PAGE_KEY) not in PAGES:
        asked = st.query_params.get(PAGE_KEY)
        st.session_state[PAGE_KEY] = asked if asked in PAGES else next(iter(PAGES))
        if asked is not None and asked not in PAGES:  # a mistyped or old link: say so, not silently elsewhere
            st.warning(f"There is no page {ui.plain(asked)!s} here: showing the {PAGES[next(iter(PAGES))][0]} "
                       f"instead. The pages: {', '.join(PAGES)}.")
    page = st.sidebar.radio("Page", list(PAGES), key=PAGE_KEY, format_func=lambda p: PAGES[p][0],
                            label_visibility="collapsed")
    if st.query_params.get(PAGE_KEY) != page:
        st.query_params.clear()  # page-specific parameters (game=...) belong to the previous page
        st.query_params[PAGE_KEY] = page
    return page


def sidebar_summary(root: str) -> None:
    counts = queries.summary(root)
    st.sidebar.caption(f"{counts['agents']} agents · {counts['games']:,} games · {counts['tournaments']} tournaments")
    if st.sidebar.button("Refresh", help=f"Re-read the league now (otherwise data is at most "
                                         f"{data.TTL_SECONDS} s old)."):
        data.clear_caches()


def main() -> None:
    st.set_page_config(page_title="rl-league", layout="wide")
    keep_widget_state()
    home = resolve_home(home_argument(sys.argv[1:]))
    root = str(home.root)
    st.sidebar.title("rl-league")
    page = choose_page()
    st.sidebar.caption(f"League: `{root}`")
    try:
        data.open_league(root)
    except LeagueError as exc:
        st.error(str(exc))
        return
    sidebar_summary(root)
    try:
        PAGES[page][1](root)
    except LeagueError as exc:  # e.g. the league was deleted while the page was open
        st.error(str(exc))


if __name__ == "__main__":
    main()
