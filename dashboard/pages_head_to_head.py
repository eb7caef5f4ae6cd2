"""Head-to-head page: score rates between agents as a heatmap, and one pair in detail."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import queries, ui

DEFAULT_AGENTS = 12
GAMES_SHOWN = 50
GAME_LINK_TEXT = r"game=(\d+)$"  # a link ?page=replays&game=ID shows as ID


def render(root: str) -> None:
    st.header("Head-to-head")
    c1, c2 = st.columns([1, 3])
    team_size = ui.stage_picker(root, c1)
    pairs = queries.pair_results(root, team_size)
    if pairs.empty:
        st.info(f"No games between different agents in {ui.stage_label(team_size)} yet.")
        return
    board = queries.leaderboard(root, team_size, True)
    met = set(pairs["agent"])
    ranked = [n for n in board["name"] if n in met]
    names = c2.multiselect("Agents in the matrix", ranked, default=met_default(ranked, pairs, DEFAULT_AGENTS),
                           key=f"h2h_agents_{team_size}", help="Listed best Elo first; at first the best agents that "
                                                               "met one another.")
    if len(names) >= 2:
        cells = queries.score_matrix(pairs, names)
        st.altair_chart(heatmap(cells, names), width="content")
        mixed = int(pairs["mixed"].sum()) // 2
        st.caption("Each cell is the row agent's score rate against the column agent (win 1, draw 1/2); "
                   "the number is the games they played."
                   + (" A mixed-team game counts for every member against every member of the other side."
                      if mixed else ""))
    else:
        st.info("Choose at least two agents for the matrix.")

    st.subheader("One pair")
    p1, p2 = st.columns(2)
    a = p1.selectbox("Agent A", ranked, index=0, key=f"h2h_a_{team_size}")
    b = p2.selectbox("Agent B", ranked, index=min(1, len(ranked) - 1), key=f"h2h_b_{team_size}")
    if a == b:
        st.info("Choose two different agents.")
        return
    fit = queries.mle(root, team_size)
    record = pairs[(pairs["agent"] == a) & (pairs["opponent"] == b)]
    m1, m2, m3 = st.columns(3)
    m1.metric("Likelihood of superiority (A over B)", f"{fit.los(a, b):.1%}",
              help=f"The probability that {a} is stronger than {b}, from the MLE fit of every game.")
    diff = fit.rating(a) - fit.rating(b)
    m2.metric("MLE rating difference", f"{diff:+.0f} Elo")
    if record.empty:
        m3.metric("Head-to-head", "never met")
    else:
        r = record.iloc[0]
        m3.metric(f"{a} vs {b} (W-D-L)", f"{int(r.wins)}-{int(r.draws)}-{int(r.losses)}",
                  help=f"score rate {r.score_rate:.2f} over {int(r.games)} games, goals {int(r.goals_for)}-"
                       f"{int(r.goals_against)}")
        show_games(root, team_size, a, b)


def met_default(ranked: list[str], pairs: pd.DataFrame, most: int) -> list[str]:
    """The matrix's first agents: the best-ranked agent that met anyone, then, best first, each agent that met one
    already chosen, up to `most`; so the matrix is never empty (the top versions of one run may never have met)."""
    opponents: dict[str, set[str]] = {}
    for agent, opponent in zip(pairs["agent"], pairs["opponent"]):
        opponents.setdefault(agent, set()).add(opponent)
    chosen = [n for n in ranked if opponents.get(n)][:1]
    while chosen and len(chosen) < most:
        met = set().union(*(opponents[n] for n in chosen))
        found = next((n for n in ranked if n in met and n not in chosen), None)
        if found is None:
            break
        chosen.append(found)
    return [n for n in ranked if n in chosen]


def show_games(root: str, team_size: int, a: str, b: str) -> None:
    """The games between A and B (on opposite sides, alone or in mixed teams, whose whole teams are shown)."""
    games = queries.games(root, agent=a, versus=b, team_size=team_size, limit=GAMES_SHOWN)
    if games.empty:
        return
    table = queries.games_listing(games)
    st.caption(f"Their games, newest first (at most {GAMES_SHOWN}); a mixed team is shown with all its members.")
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "game": st.column_config.LinkColumn("Game", display_text=GAME_LINK_TEXT, help="Watch it on the Replays page.")})


CELL_PX = (28, 120)  # a cell's side: at least readable, at most a sensible share of the page
MATRIX_PX = 480  # the side the matrix aims for, between the cells' bounds


def cell_side(agents: int) -> int:
    """A heat map cell's side in px for `agents` rows: MATRIX_PX shared, within CELL_PX, so two agents get
    a 240 px matrix and thirty stay readable (840 px)."""
    low, high = CELL_PX
    return max(low, min(high, MATRIX_PX // max(agents, 1)))


def heatmap(cells: pd.DataFrame, names: list[str]) -> alt.LayerChart:
    """Score rates between agents, each cell cell_side() px square, its size set per cell (a Vega-Lite step)
    so the labels and the colour legend are drawn beside the matrix, never squeezed into it. Every label is
    drawn: Vega-Lite hides overlapping labels by default (every other one, on a nominal axis, once slanted
    labels' boxes touch), so the column labels stand upright (-90 degrees) where each has its cell's width,
    and overlap is off. Draw it with width="content": a stretched chart is refitted to the page's width."""
    side = alt.Step(cell_side(len(names)))
    base = alt.Chart(cells).encode(
        x=alt.X("opponent:N", sort=names, title="opponent",
                axis=alt.Axis(labelAngle=-90, labelOverlap=False, labelLimit=220, orient="top")),
        y=alt.Y("agent:N", sort=names, title="agent", axis=alt.Axis(labelOverlap=False, labelLimit=220)))
    rects = base.mark_rect().encode(
        color=alt.Color("score_rate:Q", title="score rate", scale=alt.Scale(domain=[0, 1], scheme="redblue"),
                        legend=alt.Legend(orient="right", format="%", gradientLength=160)),
        tooltip=["agent:N", "opponent:N", "games:Q", "wins:Q", "draws:Q", "losses:Q",
                 alt.Tooltip("score_rate:Q", format=".2f")])
    text = base.mark_text(fontSize=11).encode(
        text=alt.condition("datum.games > 0", "games:Q", alt.value("")),
        color=alt.condition("datum.score_rate > 0.8 || datum.score_rate < 0.2", alt.value("white"), alt.value("black")))
    return alt.layer(rects, text).properties(width=side, height=side)
