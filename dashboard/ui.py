"""Widgets and formatting the pages share."""

from __future__ import annotations

import re

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data
from league.files import printable
from league.registry import BASELINES

STAGE_KEY = "stage"  # one stage choice shared by the rating pages
# Widget values that survive visiting a page without that widget (see app.keep_widget_state).
PERSISTENT_KEYS = (STAGE_KEY, "rank_by", "show_retired")
# One colour per baseline whatever subset a chart shows, so rule is the same colour everywhere.
BASELINE_COLOURS = dict(zip(BASELINES, ("#8a8f98", "#e45756", "#f58518", "#4c78a8", "#54a24b", "#b279a2")))


_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:/@&=])")


def plain(text: str) -> str:
    """`text` (a name or path read from a file) for a markdown element: control characters shown as
    escapes (league.files.printable), markdown's own characters backslash-escaped, so it shows as
    itself and never as a link, an image or formatting."""
    return _MARKDOWN.sub(r"\\\1", printable(text))


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


def climb_chart(rates: pd.DataFrame, title: str = "", height: int = 300) -> alt.LayerChart:
    """A run's win rate against each baseline over its steps (queries.baseline_win_rates rows):
    one line per baseline, a point per version, a dashed line at an even 50%."""
    present = [b for b in BASELINE_COLOURS if b in set(rates["baseline"])]
    present += sorted(set(rates["baseline"]) - set(present))
    colours = [BASELINE_COLOURS.get(b, "#9d755d") for b in present]
    lines = alt.Chart(rates).mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=alt.X("steps:Q", title="steps trained", axis=alt.Axis(format="~s")),
        y=alt.Y("win_rate:Q", title="win rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("baseline:N", scale=alt.Scale(domain=present, range=colours),
                        legend=alt.Legend(orient="right", title="baseline")),
        tooltip=["version:N", alt.Tooltip("steps:Q", format=","), "baseline:N", "games:Q", "wins:Q", "draws:Q",
                 "losses:Q", alt.Tooltip("win_rate:Q", title="win rate", format=".0%"),
                 alt.Tooltip("draw_rate:Q", title="draw rate", format=".0%")])
    even = alt.Chart(pd.DataFrame({"even": [0.5]})).mark_rule(strokeDash=[4, 4], color="#8a8f98").encode(
        y="even:Q")
    return alt.layer(even, lines).properties(title=title, height=height)
