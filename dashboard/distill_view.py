"""The Training page's distillation section: what a run that distils a teacher (`league train
--distill TEACHER`, docs/distill.md) wrote to its metrics.jsonl, read here as any other metric.

A distilling run's update rows carry `distill/phase` (1 while distilling, 0 after), its held-out
figures (`distill/held_out_agreement`, the share of new states where the student's most likely
action is the teacher's, and `distill/held_out_cross_entropy`, before the batch is trained on) and
`charts/guide_weight`; its evaluation rows `eval/win_rate/<teacher>` when the teacher is among the
evaluation opponents. The teacher's name is the run's config (run.json: training.distill.teacher).
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import queries, ui
from dashboard.training_runs import long_form
from league.sprt import Z95, elo_estimate

PHASE = "distill/phase"
AGREEMENT = "distill/held_out_agreement"
CROSS_ENTROPY = "distill/held_out_cross_entropy"
GUIDE = "charts/guide_weight"
DISTILL_KEYS = (PHASE, AGREEMENT, CROSS_ENTROPY, GUIDE)
CHARTS = ((AGREEMENT, "held-out agreement (argmax)", True), (CROSS_ENTROPY, "held-out cross-entropy", False),
          (GUIDE, "guide weight", False))  # (metric, title, a share drawn in %)


def distilled(frame: pd.DataFrame) -> bool:
    """Whether a run's metrics hold any distillation figure."""
    return any(k in frame and frame[k].notna().any() for k in DISTILL_KEYS)


def teacher_of(info: dict[str, Any]) -> str | None:
    """The teacher a run distilled (its run.json's config: training.distill.teacher), or None."""
    try:
        teacher = info["config"]["training"]["distill"]["teacher"]
    except (KeyError, TypeError):
        return None
    return teacher if isinstance(teacher, str) and teacher else None


def phase_ends(frame: pd.DataFrame, x: str) -> list[float]:
    """Where the distillation phase ended: `x` of each update row with distill/phase 1 followed by one
    with 0 (the last update that distilled)."""
    if PHASE not in frame:
        return []
    rows = frame[[x, PHASE]].dropna()
    phase = rows[PHASE].to_numpy()
    return [float(v) for v, now, after in zip(rows[x], phase[:-1], phase[1:]) if now >= 0.5 > after]


def teacher_rates(frames: dict[str, pd.DataFrame], teachers: dict[str, str | None], x: str) -> pd.DataFrame:
    """run, teacher, x, value rows: each run's evaluation score rate against its own teacher."""
    parts = [long_form({run: frames[run]}, [f"eval/win_rate/{teacher}"], x).assign(teacher=teacher)
             for run, teacher in teachers.items() if teacher]
    found = [p for p in parts if len(p)]
    return (pd.concat(found, ignore_index=True) if found
            else pd.DataFrame(columns=["run", "metric", "x", "value", "teacher"]))


def teacher_games(root: str, run: str, teacher: str | None) -> dict[str, object]:
    """The evaluation games behind the run's last score against its teacher: its last version that played the
    teacher, the games, W-D-L, the score rate and its 95% interval (empty when the league holds none)."""
    versions = queries.baseline_win_rates(root, run, (teacher,)) if teacher else pd.DataFrame()
    if versions.empty:
        return {}
    last = versions.iloc[-1]
    wins, draws, losses = int(last["wins"]), int(last["draws"]), int(last["losses"])
    estimate = elo_estimate([losses, draws, wins])
    low, high = (max(0.0, estimate.score - Z95 * estimate.score_se), min(1.0, estimate.score + Z95 * estimate.score_se))
    return {"last score vs teacher": estimate.score, "games behind it": wins + draws + losses,
            "W-D-L": f"{wins}-{draws}-{losses}", "95% interval": f"{low:.0%} to {high:.0%}",
            "of version": last["version"]}


def summary(frames: dict[str, pd.DataFrame], teachers: dict[str, str | None], root: str) -> pd.DataFrame:
    """One row per distilling run: its teacher, where the phase ended, the held-out agreement (best
    and last) and the last evaluation score rate against the teacher, with the games behind it and its
    95% interval (from the league's evaluation games; the metrics' figure when the league has none)."""
    rows = []
    for run, frame in frames.items():
        ends = phase_ends(frame, "step")
        agreement = frame[AGREEMENT].dropna() if AGREEMENT in frame else pd.Series(dtype=float)
        rate_key = f"eval/win_rate/{teachers[run]}"
        rates = frame[rate_key].dropna() if teachers[run] and rate_key in frame else pd.Series(dtype=float)
        distilling = PHASE in frame and frame[PHASE].dropna().iloc[-1:].eq(1).any()
        rows.append({"run": run, "teacher": teachers[run] or "", "phase ended at step": ends[-1] if ends else None,
                     "distilling now": bool(distilling),
                     "best held-out agreement": agreement.max() if len(agreement) else None,
                     "last held-out agreement": agreement.iloc[-1] if len(agreement) else None,
                     "last score vs teacher": rates.iloc[-1] if len(rates) else None,
                     "games behind it": None, "W-D-L": "", "95% interval": "", "of version": "",
                     **teacher_games(root, run, teachers[run])})
    return pd.DataFrame(rows)


def _chart(part: pd.DataFrame, ends: pd.DataFrame, title: str, axis_label: str, share: bool,
           y_title: str | None = None, even: bool = False) -> alt.LayerChart:
    """Lines per run over x, a dashed vertical rule (in the run's colour) where each phase ended, and
    with `even` a dotted line at 50%."""
    colour = alt.Color("run:N", legend=ui.runs_legend(part["run"].nunique()))
    y_axis = alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1]) if share else alt.Axis()
    scale = alt.Scale(domain=[0, 1]) if share else alt.Scale(zero=False)
    lines = alt.Chart(part).mark_line(point=share and len(part) < 60).encode(
        x=alt.X("x:Q", title=axis_label), y=alt.Y("value:Q", title=y_title, scale=scale, axis=y_axis), color=colour,
        tooltip=["run:N", alt.Tooltip("x:Q", title=axis_label, format=",.0f"),
                 alt.Tooltip("value:Q", format=".1%" if share else ".4g")])
    rules = alt.Chart(ends).mark_rule(strokeDash=[6, 4]).encode(
        x="x:Q", color=colour, tooltip=["run:N", alt.Tooltip("x:Q", title="distillation ended", format=",.0f")])
    layers = [lines, rules]
    if even:
        layers.insert(0, alt.Chart(pd.DataFrame({"even": [0.5]})).mark_rule(strokeDash=[2, 2], color="#8a8f98")
                      .encode(y="even:Q"))
    return alt.layer(*layers).properties(title=title, height=ui.CHART_HEIGHT)


def show_distillation(root: str, frames: dict[str, pd.DataFrame], infos: dict[str, dict[str, Any]], x: str,
                      axis_label: str) -> None:
    """The section, for the chosen runs that distilled; nothing for runs that did not."""
    frames = {run: f for run, f in frames.items() if distilled(f)}
    if not frames:
        return
    teachers = {run: teacher_of(infos.get(run, {})) for run in frames}
    st.subheader("Distillation")
    st.caption("Runs that copy a teacher first (league train --distill): agreement with the teacher's most likely "
               "action and the cross-entropy to its distribution on each new batch of the student's own play, "
               "before it is trained on; the guide weight towards the teacher after the phase; and the evaluation "
               "score rate (wins + half the draws) against the teacher. A dashed vertical line marks where the "
               "distillation phase ended. The last score against the teacher is its last evaluated version's, over "
               "the games behind it (training.eval_games, 6 by default: an interval tens of points wide); a match "
               "(`league match`) measures it closely.")
    st.dataframe(summary(frames, teachers, root), hide_index=True, width="stretch", column_config={
        "phase ended at step": st.column_config.NumberColumn(format="localized"),
        "best held-out agreement": st.column_config.NumberColumn(format="percent"),
        "last held-out agreement": st.column_config.NumberColumn(format="percent"),
        "last score vs teacher": st.column_config.NumberColumn(format="percent"),
        "games behind it": st.column_config.NumberColumn(format="%d")})
    ends = pd.DataFrame([{"run": run, "x": v} for run, f in frames.items() for v in phase_ends(f, x)],
                        columns=["run", "x"])
    cols = st.columns(2)
    shown = 0
    for metric, title, share in CHARTS:
        part = long_form(frames, [metric], x)
        if len(part):
            cols[shown % 2].altair_chart(_chart(part, ends, title, axis_label, share), width="stretch")
            shown += 1
    rates = teacher_rates(frames, teachers, x)
    if len(rates):
        named = sorted(set(rates["teacher"]))
        chart = _chart(rates, ends, "score rate against the teacher", axis_label, True,
                       y_title=f"vs {named[0]}" if len(named) == 1 else "vs each run's teacher", even=True)
        cols[shown % 2].altair_chart(chart, width="stretch")
    missing = [run for run in frames if run not in set(rates["run"])]
    if missing:
        st.caption("No evaluation games against the teacher in the metrics yet: " + ", ".join(
            f"{ui.plain(run)} ({ui.plain('eval/win_rate/' + teachers[run]) if teachers[run] else 'its teacher is not in run.json'})"
            for run in missing) + ".")
