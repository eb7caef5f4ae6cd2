"""Rating history page: chosen agents' ratings over their games and over time."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import queries, ui

DEFAULT_AGENTS = 5
METRICS = {"Elo": "elo", "TrueSkill mu": "mu", "TrueSkill mu - 3 sigma": "ts"}
AXES = {"Games played": "game_no", "Time": "played"}


def render(root: str) -> None:
    st.header("Rating history")
    c1, c2, c3 = st.columns([1, 1, 1])
    team_size = ui.stage_picker(root, c1)
    metric_label = c2.radio("Rating", list(METRICS), horizontal=True, key="history_metric")
    axis_label = c3.radio("Over", list(AXES), horizontal=True, key="history_axis")

    board = queries.leaderboard(root, team_size, True)
    rated = list(board.loc[board["games"] > 0, "name"])
    if not rated:
        st.info(f"No rated games in {ui.stage_label(team_size)} yet, so there is no rating history to show.")
        return
    names = st.multiselect("Agents", rated, default=rated[:DEFAULT_AGENTS], key=f"history_agents_{team_size}",
                           help="Listed best Elo first.")
    if not names:
        st.info("Choose one or more agents.")
        return
    history = queries.rating_history(root, tuple(names), team_size)
    metric, axis = METRICS[metric_label], AXES[axis_label]
    st.altair_chart(history_chart(history, metric, metric_label, axis, axis_label), width="stretch")

    summary = (history.groupby("name", sort=False)
               .agg(games=("game_no", "max"), current=(metric, "last"), peak=(metric, "max"), lowest=(metric, "min"),
                    first_game=("played", "min"), last_game=("played", "max"))
               .reset_index().rename(columns={"name": "agent"}))
    st.dataframe(summary, hide_index=True, width="stretch", column_config={
        "current": st.column_config.NumberColumn(f"{metric_label} now", format="%.1f"),
        "peak": st.column_config.NumberColumn("Peak", format="%.1f"),
        "lowest": st.column_config.NumberColumn("Lowest", format="%.1f"),
        "first_game": st.column_config.DatetimeColumn("First game", format="YYYY-MM-DD HH:mm"),
        "last_game": st.column_config.DatetimeColumn("Last game", format="YYYY-MM-DD HH:mm"),
    })


def history_chart(history: pd.DataFrame, metric: str, metric_label: str, axis: str, axis_label: str) -> alt.Chart:
    x_type = "T" if axis == "played" else "Q"
    x_axis = alt.Axis(format="d", tickMinStep=1) if x_type == "Q" else alt.Axis()
    line = alt.Chart(history).mark_line(point=len(history) <= 400,
                                        interpolate="step-after" if x_type == "Q" else "linear")
    return (line
            .encode(x=alt.X(f"{axis}:{x_type}", title=axis_label, axis=x_axis),
                    y=alt.Y(f"{metric}:Q", title=metric_label, scale=alt.Scale(zero=False)),
                    color=alt.Color("name:N", title="agent"),
                    tooltip=["name:N", "game_no:Q", "game_id:Q", alt.Tooltip("played:T", format="%Y-%m-%d %H:%M"),
                             alt.Tooltip(f"{metric}:Q", format=".2f")])
            .properties(height=420).interactive(bind_y=False))
