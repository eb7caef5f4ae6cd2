"""League roles page: a league of roles (`league train --league FILE`, docs/league-roles.md) as `league
roles` shows it and more: each role's share of the clock (wanted and had), its runs and restarts, every
exploiter check's W-D-L against its targets with its win rate and 95% interval, and the exploitability
probes (`league probe NAME`) of the league's snapshots over time. The URL names the league shown
(`?page=roles&league=NAME`)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import roles_queries, ui

LEAGUE_KEY = "roles_league"
ALL_PROBES_KEY = "roles_all_probes"
HOW_TO_START = ("No league of roles has run here yet. Start one with `league train --league "
                "configs/league-roles.yaml --minutes 60` (docs/league-roles.md); `league roles` shows it in the "
                "terminal.")
KIND_LABELS = {"main": "main agent", "main_exploiter": "main exploiter", "league_exploiter": "league exploiter"}


def render(root: str) -> None:
    st.header("League roles")
    names = roles_queries.role_leagues(root)
    if not names:
        st.info(HOW_TO_START)
        show_probes(root, None)
        return
    name = choose_league(names)
    view = roles_queries.roles_view(root, name)
    league = view.league
    stage = ui.stage_label(league.team_size)
    st.caption(f"League **{ui.plain(name)}** ({ui.plain(league.source)}, {stage}): {league.status}"
               + (f" — {ui.plain(league.message)}" if league.message else "")
               + f" · started {ui.when(league.started)} · updated {ui.when(league.updated)}")
    show_shares(view.roles)
    show_runs(view.runs)
    show_checks(view.checks, view.roles)
    show_probes(root, tuple(view.runs["run"]))


def choose_league(names: list[str]) -> str:
    """The league to show: the URL's, else the one chosen before, else the most recently started."""
    asked = st.query_params.get("league")
    if asked in names and st.session_state.get("_roles_asked") != asked:
        st.session_state["_roles_asked"] = asked
        st.session_state[LEAGUE_KEY] = asked
    if st.session_state.get(LEAGUE_KEY) not in names:
        st.session_state[LEAGUE_KEY] = names[-1]
    order = list(reversed(names))  # most recently started first
    name = st.selectbox("League", order, key=LEAGUE_KEY, help="Most recently started first.")
    if asked != name:
        st.query_params["league"] = name
        st.session_state["_roles_asked"] = name
    return name


def show_shares(roles: pd.DataFrame) -> None:
    st.subheader("Share of the clock")
    if roles.empty:
        st.caption("This league has no roles recorded.")
        return
    long = pd.concat([roles.assign(which="wanted", value=roles["share"]),
                      roles.assign(which="had", value=roles["had"])], ignore_index=True)
    chart = alt.Chart(long).mark_bar().encode(
        y=alt.Y("role:N", sort=list(roles["role"]), title=None),
        yOffset=alt.YOffset("which:N", sort=["wanted", "had"]),
        x=alt.X("value:Q", title="share of the time trained", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("which:N", title=None, sort=["wanted", "had"],
                        scale=alt.Scale(range=["#8a8f98", "#4c78a8"])),
        tooltip=["role:N", "kind:N", "which:N", alt.Tooltip("value:Q", format=".1%"),
                 alt.Tooltip("minutes:Q", format=".1f", title="minutes trained")],
    ).properties(height=alt.Step(18), title="wanted (the roles file's shares) and had")
    st.altair_chart(chart, width="stretch")
    table = roles.assign(kind=[KIND_LABELS.get(k, k) for k in roles["kind"]])
    st.dataframe(table[["role", "kind", "share", "had", "minutes", "run", "restarts", "resets_won", "resets_steps"]],
                 hide_index=True, width="stretch", column_config={
                     "role": st.column_config.TextColumn("Role"),
                     "share": st.column_config.NumberColumn("Share wanted", format="percent"),
                     "had": st.column_config.NumberColumn("Share had", format="percent",
                                                          help="Its trained seconds over all the roles' seconds."),
                     "minutes": st.column_config.NumberColumn("Minutes trained", format="%.1f"),
                     "run": st.column_config.TextColumn("Current run"),
                     "restarts": st.column_config.NumberColumn("Restarts", format="%d"),
                     "resets_won": st.column_config.NumberColumn(
                         "Resets: won", format="%d", help="Checks that reached the reset win rate."),
                     "resets_steps": st.column_config.NumberColumn(
                         "Resets: steps", format="%d", help="Restarts that spent the step cap.")})


def show_runs(runs: pd.DataFrame) -> None:
    st.subheader("Runs and restarts")
    st.caption("One run per restart of each role (an exploiter starts a new run `-r<k>` at each reset); its "
               "snapshots are RUN-v1, RUN-v2, ... and stay in the league, so the main agent keeps playing them.")
    table = runs.assign(latest=[f"?page=lineage&agent={n}" if n else None for n in runs["latest"]])
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "restart": st.column_config.NumberColumn("Restart", format="%d"),
        "snapshots": st.column_config.NumberColumn("Snapshots", format="%d"),
        "latest": st.column_config.LinkColumn("Latest snapshot", display_text=r"agent=(.+)$",
                                              help="On the Lineage page."),
        "steps": st.column_config.NumberColumn("Steps", format="localized"),
        "ended": st.column_config.TextColumn("Ended", help="reset (won) or reset (steps), or current.")})


def show_checks(checks: pd.DataFrame, roles: pd.DataFrame) -> None:
    st.subheader("Exploiter checks")
    if checks.empty:
        st.caption("No exploiter check yet: an exploiter's snapshot plays its targets after each of its slices.")
        return
    st.caption("After each of its slices an exploiter's latest snapshot plays its targets (the main agent's "
               "latest; a league exploiter's also the newest other members), most likely actions, not rated. "
               "Its win rate with the 95% interval (Wilson); the dashed line is the role's reset win rate, "
               "and a filled point a check that reset the role.")
    points = checks.assign(check=[f"#{i}" for i in checks["id"]], resets=checks["reset"] != "")
    x = alt.X("steps:Q", title="exploiter's steps (this restart)")
    colour = alt.Color("role:N", title="role")
    bars = alt.Chart(points).mark_rule(strokeWidth=2, opacity=0.6).encode(x=x, y="win_low:Q", y2="win_high:Q",
                                                                          color=colour)
    dots = alt.Chart(points).mark_point(size=70).encode(
        x=x, y=alt.Y("win_rate:Q", title="win rate against its targets", axis=alt.Axis(format="%"),
                     scale=alt.Scale(domain=[0, 1])),
        color=colour, shape=alt.Shape("restart:O", title="restart"),
        fill=alt.condition("datum.resets", alt.Color("role:N", legend=None), alt.value("transparent")),
        tooltip=["check:N", "role:N", "restart:O", "agent:N", "against:N", "games:Q", "wins:Q", "draws:Q",
                 "losses:Q", alt.Tooltip("win_rate:Q", format=".0%"), alt.Tooltip("win_low:Q", format=".0%"),
                 alt.Tooltip("win_high:Q", format=".0%"), "reset:N"])
    layers = [bars, dots]
    thresholds = roles.dropna(subset=["reset_win_rate"])
    if not thresholds.empty:
        layers.append(alt.Chart(thresholds).mark_rule(strokeDash=[6, 4]).encode(
            y="reset_win_rate:Q", color=colour, tooltip=["role:N", alt.Tooltip("reset_win_rate:Q", format=".0%")]))
    st.altair_chart(alt.layer(*layers).properties(height=280), width="stretch")
    table = checks.assign(wdl=[f"{w}-{d}-{l}" for w, d, l in zip(checks["wins"], checks["draws"], checks["losses"])])
    st.dataframe(table[["created", "role", "restart", "agent", "steps", "against", "wdl", "games", "win_rate",
                        "win_low", "win_high", "reset"]].iloc[::-1],
                 hide_index=True, width="stretch", column_config={
                     "created": st.column_config.DatetimeColumn("Checked", format="YYYY-MM-DD HH:mm"),
                     "steps": st.column_config.NumberColumn("Steps", format="localized"),
                     "against": st.column_config.TextColumn("Against"),
                     "wdl": st.column_config.TextColumn("W-D-L"),
                     "win_rate": st.column_config.NumberColumn("Win rate", format="percent"),
                     "win_low": st.column_config.NumberColumn("95% low", format="percent"),
                     "win_high": st.column_config.NumberColumn("95% high", format="percent"),
                     "reset": st.column_config.TextColumn("Reset", help="won: it reached the reset win rate; "
                                                                        "steps: its restart spent the step cap.")})


def show_probes(root: str, runs: tuple[str, ...] | None) -> None:
    """The probes of the league's snapshots (or every probe, when asked or when there is no league)."""
    st.subheader("Exploitability probes")
    if runs is not None:
        every = st.checkbox("Every probe in the league home", key=ALL_PROBES_KEY,
                            help="Not only those of this league's snapshots.")
        runs = None if every else runs
    found = roles_queries.probes(root, runs)
    if found.empty:
        whose = "of this league's snapshots " if runs is not None else ""
        st.caption(f"No probe {whose}yet: `league probe NAME --minutes 10` trains a best response against NAME "
                   "alone and plays it; its win rate is a lower bound on how exploitable NAME is.")
        return
    st.caption("Each probe's win rate against its target (wins / games; draws are not wins) with its 95% Wilson "
               "interval, over the time it was run: a lower bound on how exploitable the target is. Compare "
               "probes of equal minutes.")
    x = alt.X("created:T", title="probed")
    colour = alt.Color("run:N", title="target's run")
    bars = alt.Chart(found).mark_rule(strokeWidth=2, opacity=0.6).encode(x=x, y="win_low:Q", y2="win_high:Q",
                                                                         color=colour)
    dots = alt.Chart(found).mark_point(filled=True, size=70).encode(
        x=x, y=alt.Y("win_rate:Q", title="probe's win rate", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=colour, tooltip=["target:N", "probe:N", alt.Tooltip("start:N", title="from"),
                               alt.Tooltip("minutes:Q", format=".1f"), alt.Tooltip("steps:Q", format=","), "games:Q",
                               "wins:Q", "draws:Q", "losses:Q",
                               alt.Tooltip("win_rate:Q", format=".0%"), alt.Tooltip("win_low:Q", format=".0%"),
                               alt.Tooltip("win_high:Q", format=".0%")])
    st.altair_chart(alt.layer(bars, dots).properties(height=260), width="stretch")
    table = found.assign(stage=[ui.stage_label(s) for s in found["team_size"]],
                         wdl=[f"{w}-{d}-{l}" for w, d, l in zip(found["wins"], found["draws"], found["losses"])])
    st.dataframe(table[["created", "target", "stage", "probe", "start", "minutes", "steps", "wdl", "win_rate",
                        "win_low", "win_high"]].iloc[::-1],
                 hide_index=True, width="stretch", column_config={
                     "created": st.column_config.DatetimeColumn("Probed", format="YYYY-MM-DD HH:mm"),
                     "start": st.column_config.TextColumn("From", help="The weights the probe started from "
                                                          "(league probe --from), or fresh"),
                     "minutes": st.column_config.NumberColumn("Minutes", format="%.1f"),
                     "steps": st.column_config.NumberColumn("Probe's steps", format="localized"),
                     "wdl": st.column_config.TextColumn("W-D-L (probe's)"),
                     "win_rate": st.column_config.NumberColumn("Win rate", format="percent"),
                     "win_low": st.column_config.NumberColumn("95% low", format="percent"),
                     "win_high": st.column_config.NumberColumn("95% high", format="percent")})
