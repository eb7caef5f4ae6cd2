"""Widgets and formatting the pages share."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import data

STAGE_KEY = "stage"  # one stage choice shared by the rating pages
# Widget values that survive visiting a page without that widget (see app.keep_widget_state).
PERSISTENT_KEYS = (STAGE_KEY, "rank_by", "show_retired")


def stage_label(team_size: int) -> str:
    return f"{team_size}v{team_size}"


def stage_picker(root: str, container=st) -> int:
    """The team size to show: a selectbox over the stages the league has, remembered across pages."""
    sizes = data.team_sizes(root)
    counts = data.games_by_team_size(root)
    if st.session_state.get(STAGE_KEY) not in sizes:
        with_games = [s for s in sizes if counts.get(s)]
        st.session_state[STAGE_KEY] = with_games[0] if with_games else sizes[0]
    return container.selectbox("Stage", sizes, key=STAGE_KEY,
                               format_func=lambda s: f"{stage_label(s)} ({counts.get(s, 0):,} games)")


def keep_valid(key: str, options) -> None:
    """Drop from a multiselect's remembered value what is no longer an option (a deleted run, say)."""
    if key in st.session_state:
        allowed = set(options)
        kept = [v for v in st.session_state[key] if v in allowed]
        if kept != st.session_state[key]:  # only then: setting it also overrides the widget's default
            st.session_state[key] = kept


def when(value) -> str:
    """An ISO time as 'YYYY-MM-DD HH:MM' ('' for none)."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return str(value)[:16].replace("T", " ")


def game_label(row) -> str:
    return (f"#{row['id']}  {row['blue']} {row['blue_goals']}-{row['orange_goals']} {row['orange']}"
            f"  ({when(row['played'])})")
