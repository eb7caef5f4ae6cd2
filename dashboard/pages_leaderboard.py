"""Leaderboard page: one stage's agents ranked, with Elo, MLE intervals and TrueSkill."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import match_queries, queries, ui

CHART_TOP_DEFAULT = 30
RANK_KEYS = {"Elo": "elo", "MLE Elo": "mle", "TrueSkill (mu - 3 sigma)": "trueskill"}  # label -> standings key

COLUMNS = {
    "rank": st.column_config.NumberColumn("#", format="%d", width="small"),
    "name": st.column_config.TextColumn("Agent"),
    "sprt": st.column_config.LinkColumn(
        "SPRT", display_text="\u2713 SPRT", width="small",
        help="Promoted to champion on an SPRT match's verdict (H1: at least elo1 better than the champion it "
             "replaced), by `league promote NAME --sprt` or by `league train`; click for the match. "
             "Agents promoted by hand have no mark."),
    "crowned": st.column_config.LinkColumn(
        "Title", display_text="\u265b round robin", width="small",
        help="Crowned champion by a title round robin (`league crown`, or the end of `league train`): every "
             "entrant met every other, and its worst matchup was the best; click for that round robin's Nash page."),
    "status": st.column_config.TextColumn("Status"),
    "elo": st.column_config.NumberColumn("Elo", format="%.0f", help="Incremental Elo after the latest game"),
    "mle": st.column_config.NumberColumn("MLE Elo", format="%.0f",
                                         help="Whole-history maximum-likelihood rating (Elo scale)"),
    "mle_ci": st.column_config.TextColumn("95% interval", help="95% confidence interval of the MLE rating"),
    "mu": st.column_config.NumberColumn("TS mu", format="%.2f"),
    "sigma": st.column_config.NumberColumn("TS sigma", format="%.2f"),
    "ts": st.column_config.NumberColumn("mu - 3 sigma", format="%.2f"),
    "games": st.column_config.NumberColumn("Games", format="%d", width="small"),
    "wins": st.column_config.NumberColumn("W", format="%d", width="small"),
    "draws": st.column_config.NumberColumn("D", format="%d", width="small"),
    "losses": st.column_config.NumberColumn("L", format="%d", width="small"),
    "gd": st.column_config.NumberColumn("GD", format="%+d", help="Goal difference", width="small"),
    "last_played": st.column_config.DatetimeColumn("Last played", format="YYYY-MM-DD HH:mm"),
}


def render(root: str) -> None:
    st.header("Leaderboard")
    c1, c2, c3 = st.columns([1, 1.4, 1])
    team_size = ui.stage_picker(root, c1)
    rank_label = c2.selectbox("Rank by", list(RANK_KEYS), key="rank_by")
    show_retired = c3.checkbox("Show retired agents", key="show_retired")

    ranked = queries.leaderboard(root, team_size, show_retired, RANK_KEYS[rank_label])
    if not int(ranked["games"].sum()):
        st.info(f"No rated games in {ui.stage_label(team_size)} yet: agents are shown at their initial ratings. "
                "Play some with `league tournament`.")
    marks = sprt_marks(match_queries.sprt_promoted(root, team_size))
    crowns = {row.agent: f"?page=nash&tournament={int(row.tournament_id)}"
              for row in match_queries.crowned(root, team_size).itertuples()}
    table = ranked.assign(mle_ci=[f"{lo:.0f} to {hi:.0f}" if pd.notna(lo) else "" for lo, hi in
                                  zip(ranked["mle_low"], ranked["mle_high"])],
                          sprt=[marks.get(name, "") for name in ranked["name"]],
                          crowned=[crowns.get(name, "") for name in ranked["name"]])[list(COLUMNS)]
    table["last_played"] = pd.to_datetime(table["last_played"], utc=True, format="ISO8601")
    st.dataframe(table, hide_index=True, column_config=COLUMNS, width="stretch",
                 height=min(35 * (len(table) + 1) + 3, 640))
    st.caption("Click a column header to sort. Elo is updated game by game; MLE Elo is fitted to every game at "
               "once, with its 95% interval; TrueSkill's conservative rating is mu - 3 sigma."
               + (" \u2713 SPRT: promoted to champion because an SPRT match showed it at least elo1 better than "
                  "the champion before it (H1 accepted); the mark opens that match." if marks else "")
               + (" \u265b round robin: crowned because its worst matchup in a round robin of the strongest (the "
                  "title holder among them) was the best; the mark opens that round robin's Nash page." if crowns
                  else ""))

    played = ranked[ranked["games"] > 0]
    if played.empty:
        return
    st.subheader("Ratings")
    top = st.slider("Agents in the chart", 1, len(played), min(CHART_TOP_DEFAULT, len(played))) \
        if len(played) > 1 else 1
    st.altair_chart(rating_chart(played.head(top), RANK_KEYS[rank_label]), width="stretch")


def sprt_marks(promoted: pd.DataFrame) -> dict[str, str]:
    """Agent -> the link its SPRT mark opens: the match that promoted it (the Matches page if none is cited)."""
    return {row.agent: f"?page=matches&match={int(row.match_id)}" if pd.notna(row.match_id) else "?page=matches"
            for row in promoted.itertuples()}


def rating_chart(rows: pd.DataFrame, key: str) -> alt.LayerChart:
    """Each agent's rating with error bars: MLE with its 95% interval (and the incremental Elo as a
    tick), or TrueSkill mu with mu +- 3 sigma."""
    order = list(rows["name"])
    if key == "trueskill":
        frame = rows.assign(value=rows["mu"], low=rows["mu"] - 3 * rows["sigma"], high=rows["mu"] + 3 * rows["sigma"])
        title, point_name = "TrueSkill mu (bars: mu +- 3 sigma)", "mu"
    else:
        frame = rows.assign(value=rows["mle"], low=rows["mle_low"], high=rows["mle_high"])
        title, point_name = "MLE Elo (bars: 95% interval; tick: incremental Elo)", "MLE Elo"
    frame = frame[["name", "status", "value", "low", "high", "elo", "games"]]
    y = alt.Y("name:N", sort=order, title=None)
    base = alt.Chart(frame).encode(y=y)
    bars = base.mark_rule(strokeWidth=2, color="#7a8699").encode(
        x=alt.X("low:Q", title=title, scale=alt.Scale(zero=False)), x2="high:Q")
    points = base.mark_point(filled=True, size=70).encode(
        x="value:Q",
        color=alt.Color("status:N", scale=alt.Scale(domain=["champion", "active", "retired"],
                                                    range=["#f2b705", "#4c8bf5", "#9e9e9e"])),
        tooltip=[alt.Tooltip("name:N", title="agent"), alt.Tooltip("value:Q", title=point_name, format=".1f"),
                 alt.Tooltip("low:Q", format=".1f"), alt.Tooltip("high:Q", format=".1f"),
                 alt.Tooltip("elo:Q", title="Elo", format=".0f"), "games:Q"])
    layers = [bars, points]
    if key != "trueskill":
        layers.append(base.mark_tick(color="#e45756", thickness=2, size=12).encode(x="elo:Q"))
    return alt.layer(*layers).properties(height=28 * len(frame) + 70)  # + axis and title
