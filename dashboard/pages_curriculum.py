"""Curriculum page: a curriculum's stages in order, each stage's gate checks and its final agent.

What `league train --curriculum` keeps in the registry (tables curricula, curriculum_stages,
gate_checks; docs/schema.md), shown as the climb it is: the stages with their status and steps,
the gate checks each stage made on its way (with the evidence as stored), each stage's run
against the baselines, and the agent each stage ended with. The URL carries the choice
(`?page=curriculum&curriculum=NAME`); a final agent links to the Lineage page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries, ui
from league.ratings import conservative

KEY = "curriculum"
NONE = "\u2014"


def lineage_link(agent: object) -> str | None:
    """The Lineage page showing `agent` (names follow the league's rule, so they need no quoting);
    None for no agent (None or NaN, as pandas reads a NULL)."""
    return f"?page=lineage&agent={agent}" if isinstance(agent, str) and agent else None


def render(root: str) -> None:
    st.header("Curriculum")
    listing = queries.curricula(root)
    if listing.empty:
        st.info("No curricula yet: `league train --curriculum` records its stages, their gate checks and the agent "
                "each stage ends with here (docs/curriculum.md).")
        return
    labels = {r.name: f"{r.name} ({r.status}, stage {r.stage_index + 1} of {r.stages})" for r in listing.itertuples()}
    asked = st.query_params.get(KEY)
    if asked in labels and st.session_state.get("_curriculum_asked") != asked:
        # A link to a curriculum: show it, whatever was chosen before.
        st.session_state["_curriculum_asked"] = asked
        st.session_state[KEY] = asked
    if st.session_state.get(KEY) not in labels:
        st.session_state[KEY] = next(iter(labels))
    name = st.selectbox("Curriculum", list(labels), key=KEY, format_func=labels.get,
                        help="Most recently updated first.")
    if asked != name:
        st.query_params[KEY] = name
        st.session_state["_curriculum_asked"] = name

    spec, stages, checks = queries.curriculum(root, name)
    if spec is None or stages.empty:
        st.warning(f"Curriculum {ui.plain(name)} is no longer in the league.")
        return
    show_summary(listing[listing["name"] == name].iloc[0], stages, checks, spec)
    show_stage_table(stages)
    for stage in stages.itertuples():
        show_stage(root, stage, checks[checks["stage_index"] == stage.stage_index])


def show_summary(row: pd.Series, stages: pd.DataFrame, checks: pd.DataFrame, spec: dict) -> None:
    at = int(row["stage_index"])
    current = f" ({ui.plain(stages['name'].iloc[at])})" if 0 <= at < len(stages) else ""
    source = f" · from {ui.plain(row['source'])}" if row["source"] else ""
    st.caption(f"{row['status']} · stage {at + 1} of {len(stages)}{current} · started {ui.when(row['started'])} · "
               f"updated {ui.when(row['updated'])}{source}")
    if row["message"]:
        say = st.warning if row["status"] == "stopped" else st.info
        say(f"{row['status'].capitalize()}: {ui.plain(row['message'])}")
    done = int(stages["status"].isin(["passed", "advanced"]).sum())
    c1, c2, c3 = st.columns(3)
    c1.metric("Stages done", f"{done} of {len(stages)}")
    c2.metric("Steps trained", f"{int(stages['steps'].sum()):,}")
    c3.metric("Gate checks", f"{len(checks)} ({int(checks['passed'].sum())} passed)")
    if spec:
        with st.expander("The curriculum as last run"):
            st.json(spec, expanded=False)


def show_stage_table(stages: pd.DataFrame) -> None:
    table = pd.DataFrame({
        "#": stages["stage_index"] + 1,
        "stage": stages["name"],
        "team": [ui.stage_label(s) for s in stages["team_size"]],
        "status": stages["status"],
        "steps": stages["steps"],
        "run": stages["run"],
        "start_agent": stages["start_agent"],
        "final_agent": [lineage_link(a) for a in stages["final_agent"]],
        "elo": stages["final_elo"],
        "ts": conservative(stages["final_mu"], stages["final_sigma"]),
        "games": stages["final_games"],
        "checks": [f"{n} ({p} passed)" for n, p in zip(stages["checks"], stages["checks_passed"])],
    })
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "#": st.column_config.NumberColumn("#", format="%d", width="small"),
        "steps": st.column_config.NumberColumn("Steps trained", format="localized",
                                               help="Agent steps trained in the stage."),
        "start_agent": st.column_config.TextColumn("Started from"),
        "final_agent": st.column_config.LinkColumn("Final agent", display_text=r"agent=(.+)$",
                                                   help="The version the stage ended with (opens its lineage)."),
        "elo": st.column_config.NumberColumn("Final Elo", format="%.0f", help="At the stage's team size."),
        "ts": st.column_config.NumberColumn("Final mu - 3 sigma", format="%.1f"),
        "games": st.column_config.NumberColumn("Rated games", format="%d"),
        "checks": st.column_config.TextColumn("Gate checks"),
    })


def show_stage(root: str, stage, checks: pd.DataFrame) -> None:
    label = ui.stage_label(stage.team_size)
    st.subheader(f"{stage.stage_index + 1}. {ui.plain(stage.name)} · {label} · {stage.status}")
    start = stage.start_agent if isinstance(stage.start_agent, str) else "scratch"
    times = f" · started {ui.when(stage.started)}" if isinstance(stage.started, str) else ""
    times += f" · finished {ui.when(stage.finished)}" if isinstance(stage.finished, str) else ""
    st.caption(f"run {ui.plain(stage.run)} · {stage.steps:,} steps trained in the stage · started from {start}{times}")
    if isinstance(stage.final_agent, str):
        rating = (f"Elo {stage.final_elo:.0f} · mu - 3 sigma {conservative(stage.final_mu, stage.final_sigma):.1f} "
                  f"· {stage.final_games} rated {label} games" if stage.final_games else f"no rated {label} game yet")
        st.markdown(f"Final agent: [{stage.final_agent}]({lineage_link(stage.final_agent)}) · {rating}")
    elif stage.status in ("pending", "training"):
        st.caption("No final agent yet: the stage " + ("has not started." if stage.status == "pending"
                                                        else "is still training."))

    rates = queries.baseline_win_rates(root, stage.run)
    if not rates.empty:
        st.altair_chart(ui.climb_chart(rates, title=f"{stage.run}: win rate against the baselines", height=260),
                        width="stretch")
    if checks.empty:
        st.caption("No gate check yet.")
        return
    st.dataframe(check_table(checks), hide_index=True, width="stretch", column_config={
        "checked": st.column_config.DatetimeColumn("Checked", format="YYYY-MM-DD HH:mm"),
        "steps": st.column_config.NumberColumn("Steps", format="localized", help="The stage's steps at the check."),
        "passed": st.column_config.CheckboxColumn("Passed"),
    })
    with st.expander(f"Stage {stage.stage_index + 1}: the criteria as stored"):
        st.dataframe(criteria_table(checks), hide_index=True, width="stretch", column_config={
            "value": st.column_config.NumberColumn("Value", format="%.4g"),
            "threshold": st.column_config.NumberColumn("Threshold", format="%.4g")})


def check_table(checks: pd.DataFrame) -> pd.DataFrame:
    """One row per gate check, newest last: when, which agent, steps, passed, then one column per
    criterion (its reason, marked ok / FAILED), or the one-line evidence when none was configured."""
    table = pd.DataFrame({"checked": pd.to_datetime(checks["checked"], utc=True, format="ISO8601"),
                          "agent": checks["agent"], "steps": checks["steps"], "passed": checks["passed"]})
    names: list[str] = []
    for criteria in checks["criteria"]:
        names += [str(c.get("name")) for c in criteria if str(c.get("name")) not in names]
    for name in names:
        table[name] = [next((("ok: " if c.get("passed") else "FAILED: ") + str(c.get("reason", ""))
                             for c in criteria if str(c.get("name")) == name), NONE) for criteria in checks["criteria"]]
    if not names:
        table["evidence"] = checks["evidence"].to_numpy()
    return table.reset_index(drop=True)


def criteria_table(checks: pd.DataFrame) -> pd.DataFrame:
    """Every criterion of every check as stored: check (its id), agent, steps, criterion, passed, value, threshold, reason."""
    rows = [{"check": check.id, "agent": check.agent, "steps": check.steps, "criterion": c.get("name"),
             "passed": bool(c.get("passed")), "value": c.get("value"), "threshold": c.get("threshold"),
             "reason": c.get("reason")}
            for check in checks.itertuples() for c in check.criteria]
    table = pd.DataFrame(rows, columns=["check", "agent", "steps", "criterion", "passed", "value", "threshold",
                                        "reason"])
    for col in ("value", "threshold"):  # None (nothing measured) becomes NaN
        table[col] = pd.to_numeric(table[col], errors="coerce")
    return table
