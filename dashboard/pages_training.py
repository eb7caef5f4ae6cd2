"""Training page: the metrics training runs wrote to <league home>/runs/ (docs/training-metrics.md),
the climb: each run's versions against the baselines in the registry's evaluation games, and the learning
curve against the evaluation panel (dashboard/panel_view.py)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, queries, ui
from dashboard.distill_view import show_distillation
from dashboard.panel_view import show_panel_curves
from dashboard.training_runs import NAMESPACES, long_form, metric_sort_key
from league.registry import BASELINES

PREFERRED = ("charts/episode_reward", "charts/steps_per_second", "losses/policy_loss", "losses/value_loss",
             "eval/win_rate")
AXES = {"Steps": "step", "Wall time (s)": "seconds"}


def render(root: str) -> None:
    st.header("Training")
    runs = data.training_runs(root)
    if not runs:
        st.info("No training runs yet: runs write their metrics to runs/<run name>/metrics.jsonl in the league "
                "home (format: docs/training-metrics.md).")
        return
    by_name = {r.name: r for r in runs}
    c1, c2 = st.columns([3, 1])
    ui.keep_valid("training_runs", by_name)
    chosen = c1.multiselect("Runs", list(by_name), default=[runs[0].name], key="training_runs",
                            help="Most recently written first.")
    axis_label = c2.radio("Over", list(AXES), horizontal=True, key="training_axis")
    if not chosen:
        st.info("Choose one or more runs.")
        return

    frames, infos, rows = {}, {}, []
    for name in chosen:
        run = by_name[name]
        metrics = data.training_metrics(str(run.path), run.size, run.mtime)
        frames[name] = metrics.frame
        last = metrics.frame.iloc[-1] if len(metrics.frame) else None
        rows.append({"run": name, "records": len(metrics.frame),
                     "last step": None if last is None else int(last["step"]),
                     "elapsed": None if last is None else pd.to_timedelta(last.get("seconds"), unit="s"),
                     "updated": pd.Timestamp(run.mtime, unit="s", tz="UTC"),
                     "bad lines": metrics.skipped_lines})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config={
        "updated": st.column_config.DatetimeColumn("Updated", format="YYYY-MM-DD HH:mm:ss")})
    for name in chosen:
        info = infos[name] = data.run_info(str(by_name[name].path))
        if info:
            with st.expander(f"{ui.plain(name)}: run.json"):
                st.json(info)
    show_climb(root, chosen)
    show_panel_curves(root, frames)
    axis = AXES[axis_label]
    show_distillation(root, frames, infos, axis, axis_label)

    available = sorted({c for f in frames.values() for c in f.columns if c not in ("step", "time", "seconds")},
                       key=metric_sort_key)
    if not available:
        st.info("These runs have not written any metric yet.")
        return
    defaults = [m for m in available if m in PREFERRED or any(m.startswith(p + "/") for p in PREFERRED)]
    ui.keep_valid("training_metrics", available)
    metrics = st.multiselect("Metrics", available, default=defaults or available[:4], key="training_metrics",
                             help=f"Namespaced keys ({', '.join(p + '/' for p in NAMESPACES)}...).")
    if not metrics:
        return
    long = long_form(frames, metrics, axis)
    cols = st.columns(2)
    for i, metric in enumerate(metrics):
        part = long[long["metric"] == metric]
        chart = (alt.Chart(part).mark_line().encode(
            x=alt.X("x:Q", title=axis_label), y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
            color=alt.Color("run:N", legend=ui.runs_legend(len(chosen))),
            tooltip=["run:N", alt.Tooltip("x:Q", title=axis_label, format=",.0f"),
                     alt.Tooltip("value:Q", format=".4g")])
            .properties(title=metric, height=ui.CHART_HEIGHT))
        cols[i % 2].altair_chart(chart, width="stretch")


def show_climb(root: str, runs: list[str]) -> None:
    """Win rate against each baseline over steps, from the evaluation games of each run's versions."""
    st.subheader("Win rate against the baselines")
    # Community bots count as evaluation opponents too, once evaluation plays them (ui.opponent_colours
    # gives them colours of their own).
    opponents = (*BASELINES, *queries.community_bots(root)["name"])
    found = {run: queries.baseline_win_rates(root, run, opponents) for run in runs}
    played = {run: rates for run, rates in found.items() if not rates.empty}
    if not played:
        whose = "this run's" if len(runs) == 1 else "these runs'"
        st.caption(f"No evaluation games of {whose} versions (RUN-v1, RUN-v2, ...) against a baseline "
                   f"({', '.join(BASELINES)}) yet.")
        return
    st.caption("Evaluation games of each version (RUN-v1, RUN-v2, ...) against each baseline (and community bot) it "
               "played, over the version's steps trained; a draw is neither a win nor a loss (draws are in the tooltips and the table).")
    cols = st.columns(2 if len(played) > 1 else 1)
    for i, (run, rates) in enumerate(played.items()):
        cols[i % len(cols)].altair_chart(ui.climb_chart(rates, title=run), width="stretch")
    if len(played) < len(runs):
        st.caption("No evaluation games against a baseline yet: " + ", ".join(ui.plain(r) for r in runs if r not in played)
                   + ".")
    with st.expander("The games behind the chart"):
        table = pd.concat([rates.assign(run=run) for run, rates in played.items()], ignore_index=True)
        st.dataframe(table[["run", "version", "steps", "baseline", "games", "wins", "draws", "losses", "win_rate",
                            "draw_rate"]], hide_index=True, width="stretch", column_config={
            "steps": st.column_config.NumberColumn("Steps", format="localized"),
            "win_rate": st.column_config.NumberColumn("Win rate", format="percent"),
            "draw_rate": st.column_config.NumberColumn("Draw rate", format="percent")})
