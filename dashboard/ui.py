"""Widgets and formatting the pages share."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import queries
from league.files import printable
from league.registry import BASELINES

STAGE_KEY = "stage"  # one stage choice shared by the rating pages
# Widget values that survive visiting a page without that widget (see app.keep_widget_state).
PERSISTENT_KEYS = (STAGE_KEY, "rank_by", "show_retired", "replay_view")
# One colour per baseline whatever subset a chart shows, so rule is the same colour everywhere.
BASELINE_COLOURS = dict(zip(BASELINES, ("#8a8f98", "#e45756", "#f58518", "#4c78a8", "#54a24b", "#b279a2")))
# Other opponents (community bots, say) take one of these, chosen by their name (opponent_colours):
# none is a baseline's, so a community bot never looks like one.
OTHER_COLOURS = ("#72b7b2", "#eeca3b", "#9d755d", "#ff9da6", "#17becf", "#bcbd22", "#9467bd", "#bab0ac")


_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:/@&=])")


def plain(text: str) -> str:
    """`text` (a name or path read from a file) for a markdown element: control characters shown as
    escapes (league.files.printable), markdown's own characters backslash-escaped, so it shows as
    itself and never as a link, an image or formatting."""
    return _MARKDOWN.sub(r"\\\1", printable(text))


CHART_HEIGHT = 300  # a line chart's plot, in px: room for its axis labels and a legend beside it


def runs_legend(runs: int) -> alt.Legend | None:
    """The legend of a chart with a line per run: none for one run (the title names it), else above the plot
    in a row, so it never takes the plot's height."""
    return alt.Legend(orient="top", direction="horizontal", title=None, labelLimit=260) if runs > 1 else None


def stage_label(team_size: int) -> str:
    return f"{team_size}v{team_size}"


def stage_picker(root: str, container=st) -> int:
    """The team size to show: a selectbox over the stages the league has, remembered across pages."""
    sizes = queries.team_sizes(root)
    counts = queries.games_by_team_size(root)
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


def opponent_colours(names: Iterable[str]) -> list[str]:
    """A colour for each opponent a chart shows: a baseline its own (BASELINE_COLOURS); any other
    name (a community bot) the OTHER_COLOURS entry its name picks, so it keeps its colour from chart
    to chart, moving on to the next free one when another name in the same chart has it."""
    names = list(names)
    taken = {BASELINE_COLOURS[n] for n in names if n in BASELINE_COLOURS}
    colours = []
    for name in names:
        if name in BASELINE_COLOURS:
            colours.append(BASELINE_COLOURS[name])
            continue
        start = zlib.crc32(name.encode("utf-8", "surrogatepass"))
        free = [OTHER_COLOURS[(start + i) % len(OTHER_COLOURS)] for i in range(len(OTHER_COLOURS))]
        colour = next((c for c in free if c not in taken), free[0])  # more names than colours: they repeat
        taken.add(colour)
        colours.append(colour)
    return colours


def climb_chart(rates: pd.DataFrame, title: str = "", height: int = 300) -> alt.LayerChart:
    """A run's win rate against each baseline over its steps (queries.baseline_win_rates rows):
    one line per baseline, a point per version, a dashed line at an even 50%."""
    present = [b for b in BASELINE_COLOURS if b in set(rates["baseline"])]
    present += sorted(set(rates["baseline"]) - set(present))
    colours = opponent_colours(present)
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


def versus_chart(versions: pd.DataFrame, opponent: str, title: str = "", height: int = 320) -> alt.LayerChart:
    """Training runs against one opponent over their steps (queries.community_climb rows): one line
    per run through its versions' win rates, each point with its 95% interval as a vertical bar,
    and a dashed line at an even 50%."""
    x = alt.X("steps:Q", title="steps trained", axis=alt.Axis(format="~s"))
    y_title = f"win rate against {opponent}"
    y = alt.Y("win_rate:Q", title=y_title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    colour = alt.Color("run:N", scale=alt.Scale(scheme="tableau10"), legend=alt.Legend(orient="right", title="run"))
    tooltip = ["run:N", alt.Tooltip("agent:N", title="version"), alt.Tooltip("steps:Q", format=","), "games:Q",
               "wins:Q", "draws:Q", "losses:Q", alt.Tooltip("win_rate:Q", title="win rate", format=".0%"),
               alt.Tooltip("win_low:Q", title="95% low", format=".0%"),
               alt.Tooltip("win_high:Q", title="95% high", format=".0%"),
               alt.Tooltip("score_rate:Q", title="score rate", format=".0%")]
    bars = alt.Chart(versions).mark_rule(opacity=0.35, strokeWidth=3).encode(
        x=x, y=alt.Y("win_low:Q", title=y_title), y2="win_high:Q", color=colour, tooltip=tooltip)
    lines = alt.Chart(versions).mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=x, y=y, color=colour, detail="run:N", tooltip=tooltip)
    even = alt.Chart(pd.DataFrame({"even": [0.5]})).mark_rule(strokeDash=[4, 4], color="#8a8f98").encode(
        y=alt.Y("even:Q", title=y_title))
    return alt.layer(even, bars, lines).properties(title=title, height=height)


def follow_link(asked, options, key: str, missing: str) -> None:
    """Select `asked` (a value from the page's URL) in the widget `key` once per new link, whatever
    was chosen before; warn `missing` about one not among `options`; else keep the choice, or the
    first option."""
    if asked is not None and asked not in options:
        st.warning(missing)
    if asked in options and st.session_state.get(f"_{key}_asked") != asked:
        st.session_state[f"_{key}_asked"] = asked
        st.session_state[key] = asked
    if st.session_state.get(key) not in options:
        st.session_state[key] = next(iter(options))
