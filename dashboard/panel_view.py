"""The Training page's learning curve against the evaluation panel (training/panel.py, training/judge.py): what
a run wrote to its metrics.jsonl at each panel test (`panel/...` keys, read as any other metric), and the tests
themselves from the league (league.stores.panels).

A panel row holds the snapshot's Elo against the panel as a whole (`panel/elo`) with its 95% interval
(`panel/elo_lo`, `panel/elo_hi`), the run's CPU-minutes so far (`panel/cpu_minutes`, the curve's x), whether it
passed or ended undecided (`panel/undecided`: its run's share of the clock ran out mid-test), its games and
worst matchup's score, and `panel/champion_elo` when the stage's champion has a panel test
of its own.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import ui
from dashboard.data import cached_query
from league.registry import Registry

X = "panel/cpu_minutes"
KEYS = {"panel/elo": "elo", "panel/elo_lo": "elo_lo", "panel/elo_hi": "elo_hi", "panel/champion_elo": "champion_elo",
        "panel/passed": "passed", "panel/undecided": "undecided", "panel/games": "games",
        "panel/worst_score": "worst_score"}
# Point colour by the test's outcome: undecided, its run's share of the clock ran out mid-test (panel.max_share)
RESULTS = {"passed": "#54a24b", "beaten": "#e45756", "undecided": "#9d9d9d"}
MEMBER = "vs "  # a member's score column is "vs NAME": never one of the table's own columns, whatever the name


def curve(frame: pd.DataFrame) -> pd.DataFrame:
    """The run's panel rows (those with an Elo and CPU-minutes): step, cpu_minutes, one column per KEYS value
    (NaN where a row lacks the key) and result ("passed", "beaten" or "undecided"; a row written before
    `panel/undecided` existed reads "beaten" unless it passed)."""
    if "panel/elo" not in frame or X not in frame:
        return pd.DataFrame(columns=["step", "cpu_minutes", *KEYS.values(), "result"])
    rows = frame[frame["panel/elo"].notna() & frame[X].notna()]
    points = rows.reindex(columns=["step", X, *KEYS]).rename(columns={X: "cpu_minutes", **KEYS})
    points["result"] = ["passed" if p >= 0.5 else "undecided" if u >= 0.5 else "beaten"
                        for p, u in zip(points["passed"].fillna(0.0), points["undecided"].fillna(0.0))]
    return points.reset_index(drop=True)


@cached_query
def panel_tests(reg: Registry, run: str) -> pd.DataFrame:
    """The run's panel tests, oldest first: snapshot, steps, result ("passed", "beaten by NAME"), games, elo (against
    the panel as a whole), and the snapshot's score against each member as a "vs MEMBER" column (None: no games)."""
    tests = reg.panel_store.for_run(run)
    members = list(dict.fromkeys(m for t in tests for m in t.records))
    rows = [{"snapshot": t.agent, "steps": t.steps,
             "result": "undecided" if t.undecided else "passed" if t.passed else f"beaten by {t.beaten_by}",
             "games": t.total.games, "elo": t.elo,
             **{MEMBER + m: t.records[m].score if m in t.records and t.records[m].games else None for m in members}}
            for t in tests]
    return pd.DataFrame(rows, columns=["snapshot", "steps", "result", "games", "elo", *(MEMBER + m for m in members)])


def curve_chart(points: pd.DataFrame, title: str) -> alt.LayerChart:
    """Each snapshot's Elo against the panel over CPU-minutes, a point (coloured by its result) with its 95%
    interval as a vertical bar, and the champion's Elo against the panel as a dashed step line where known."""
    x = alt.X("cpu_minutes:Q", title="CPU-minutes (wall clock x cores)")
    y_title = "Elo against the panel"
    tooltip = [alt.Tooltip("step:Q", format=","), alt.Tooltip("cpu_minutes:Q", title="CPU-minutes", format=",.1f"),
               alt.Tooltip("elo:Q", format=".0f"), alt.Tooltip("elo_lo:Q", title="95% low", format=".0f"),
               alt.Tooltip("elo_hi:Q", title="95% high", format=".0f"), "result:N", alt.Tooltip("games:Q", format="d"),
               alt.Tooltip("worst_score:Q", title="worst matchup's score", format=".0%")]
    layers = []
    bars = points.dropna(subset=["elo_lo", "elo_hi"])
    if len(bars):
        layers.append(alt.Chart(bars).mark_rule(opacity=0.4, strokeWidth=3).encode(
            x=x, y=alt.Y("elo_lo:Q", title=y_title), y2="elo_hi:Q", tooltip=tooltip))
    layers.append(alt.Chart(points).mark_point(filled=True, size=60, opacity=1).encode(
        x=x, y=alt.Y("elo:Q", title=y_title, scale=alt.Scale(zero=False)), tooltip=tooltip,
        color=alt.Color("result:N", scale=alt.Scale(domain=list(RESULTS), range=list(RESULTS.values())),
                        legend=alt.Legend(orient="top", title=None))))
    champion = points.dropna(subset=["champion_elo"])
    if len(champion):
        layers.append(alt.Chart(champion).mark_line(interpolate="step-after", strokeDash=[6, 4], color="#8a8f98")
                      .encode(x=x, y=alt.Y("champion_elo:Q", title=y_title),
                              tooltip=[alt.Tooltip("cpu_minutes:Q", title="CPU-minutes", format=",.1f"),
                                       alt.Tooltip("champion_elo:Q", title="champion's Elo", format=".0f")]))
    return alt.layer(*layers).properties(title=title, height=ui.CHART_HEIGHT)


def show_panel_curves(root: str, frames: dict[str, pd.DataFrame]) -> None:
    """The section, for the chosen runs with panel rows or panel tests; nothing when none has either."""
    found = {run: (curve(frame), panel_tests(root, run)) for run, frame in frames.items()}
    found = {run: (points, tests) for run, (points, tests) in found.items() if len(points) or len(tests)}
    if not found:
        return
    st.subheader("Learning curve against the evaluation panel")
    st.caption("Each evaluated snapshot's Elo against the evaluation panel as a whole (its mean score per member), "
               "the bar its 95% interval, over the run's CPU-minutes; the dashed step line is the stage's champion's "
               "Elo against the panel it met. Only a snapshot no member beat goes on to the SPRT against the champion.")
    for run, (points, tests) in found.items():
        if len(found) > 1:
            st.markdown(f"**{ui.plain(run)}**")
        if len(points):
            st.altair_chart(curve_chart(points, title=run), width="stretch")
        if len(tests):
            members = [c for c in tests.columns if c.startswith(MEMBER)]
            st.dataframe(tests, hide_index=True, width="stretch", column_config={
                "steps": st.column_config.NumberColumn("Steps", format="localized"),
                "games": st.column_config.NumberColumn("Games", format="%d"),
                "elo": st.column_config.NumberColumn("Elo vs panel", format="%.0f"),
                **{c: st.column_config.NumberColumn(format="percent") for c in members}})
    missing = [run for run in frames if run not in found]
    if missing:
        st.caption("No panel tests yet: " + ", ".join(ui.plain(r) for r in missing) + ".")
