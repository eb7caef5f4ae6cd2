"""Nash averaging page: a stage's payoff matrix (the meta-game of league.nash) as a heat map with the
Nash support marked, and each agent's Nash weight and Nash-averaged score (the dashboard's
`league leaderboard --by nash`; docs/league-roles.md, "Nash averaging")."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import sqlite_utils
import streamlit as st

from dashboard import data, ui
from dashboard.pages_head_to_head import heatmap
from dashboard.queries import score_matrix
from league.config import RatingsConfig
from league.nash import NashAverage, nash_average
from league.standings import PairRecord, read_pair_records, read_standings

SUPPORT_MARK = "\u2605"  # before the name of an agent the Nash mixture plays
MATRIX_DEFAULT = 30  # agents in the heat map at first, best Nash score first

COLUMNS = {
    "rank": st.column_config.NumberColumn("#", format="%d", width="small"),
    "name": st.column_config.TextColumn("Agent"),
    "support": st.column_config.CheckboxColumn("In the support", width="small",
                                               help="The Nash mixture plays this agent (weight > 0)."),
    "weight": st.column_config.NumberColumn("Nash weight", format="%.3f",
                                            help="Its share of the maximum-entropy Nash mixture."),
    "score": st.column_config.NumberColumn(
        "Nash score", format="%+.3f",
        help="Its expected score against the Nash mixture, minus 1/2: 0 on the support, below 0 off it."),
    "games": st.column_config.NumberColumn("Games", format="%d", width="small",
                                           help="Its games against the other agents listed."),
}


def read_nash(db: sqlite_utils.Database, team_size: int, cfg: RatingsConfig,
              include_retired: bool) -> tuple[NashAverage, pd.DataFrame]:
    """Nash averaging of the stage's listed agents (league.standings: who is listed) over their
    games, and those games' results per pair (pair_rows)."""
    board = read_standings(db, team_size, cfg, include_retired=include_retired)
    records = read_pair_records(db, team_size)
    result = nash_average([row.name for row in board.rows], records)
    return result, pair_rows(records, result.members)


@st.cache_data(ttl=data.TTL_SECONDS, show_spinner=False)
def nash(root: str, team_size: int, include_retired: bool) -> tuple[NashAverage, pd.DataFrame]:
    league = data.open_league(root)
    return league.run(read_nash, team_size, league.ratings_cfg, include_retired)


def render(root: str) -> None:
    st.header("Nash averaging")
    c1, c2 = st.columns([1, 1])
    team_size = ui.stage_picker(root, c1)
    show_retired = c2.checkbox("Show retired agents", key="show_retired")
    result, pairs = nash(root, team_size, show_retired)
    if not result.members:
        st.info(f"No games between different agents in {ui.stage_label(team_size)} yet: there is no payoff "
                "matrix to average. Play some with `league tournament`.")
        return
    table = ranked_table(result)
    labels = support_labels(result)
    shown = table["name"].tolist()
    if len(shown) > 2:
        top = st.slider("Agents in the matrix", 2, len(shown), min(MATRIX_DEFAULT, len(shown)), key="nash_top")
        shown = shown[:top]
    cells = score_matrix(pairs, shown).replace({"agent": labels, "opponent": labels})
    st.altair_chart(heatmap(cells, [labels[n] for n in shown]), width="stretch")
    st.caption(f"The payoff matrix: each cell is the row agent's score rate against the column agent (win 1, "
               f"draw 1/2; the meta-game's payoff is that minus 1/2) and the number in it the games they played; "
               f"an empty cell is a pair that never met, counted as even. {SUPPORT_MARK} marks the Nash support: "
               "the agents the maximum-entropy Nash mixture plays.")
    st.dataframe(table, hide_index=True, column_config=COLUMNS, width="stretch",
                 height=min(35 * (len(table) + 1) + 3, 640))
    notes = [("The Nash score is what an agent scores against the mixture of the agents nobody beats on "
              "average; copies of one strategy share its weight, so many snapshots of one run do not inflate it.")]
    if result.unplayed_pairs:
        n = len(result.unplayed_pairs)
        notes.append(f"{n} pair{'s' if n != 1 else ''} of agents never met and count as even.")
    if result.left_out:
        notes.append(f"Left out, with no game against a listed agent: {', '.join(result.left_out)}.")
    st.caption(" ".join(notes))


def ranked_table(result: NashAverage) -> pd.DataFrame:
    """One row per member, best Nash score first (NashAverage.ranking)."""
    order = list(result.ranking())
    return pd.DataFrame({
        "rank": range(1, len(order) + 1),
        "name": [result.members[i] for i in order],
        "support": [result.weights[i] > 0 for i in order],
        "weight": [result.weights[i] for i in order],
        "score": [round(result.scores[i], 9) or 0.0 for i in order],  # no "-0.000" from rounding
        "games": [sum(result.games[i]) for i in order],
    })


def support_labels(result: NashAverage) -> dict[str, str]:
    """Each member's name as the heat map shows it: marked when the Nash mixture plays it."""
    return {m: f"{SUPPORT_MARK} {m}" if w > 0 else m for m, w in zip(result.members, result.weights)}


def pair_rows(records: Sequence[PairRecord], members: Sequence[str]) -> pd.DataFrame:
    """The records between members (those the meta-game counts) as queries.pair_results' rows: one
    per ordered pair that met, with games, wins, draws, losses and score_rate."""
    kept = set(members)
    forward = pd.DataFrame([(r.agent, r.opponent, r.wins, r.draws, r.losses) for r in records
                            if r.agent in kept and r.opponent in kept and r.agent != r.opponent],
                           columns=["agent", "opponent", "wins", "draws", "losses"])
    backward = forward.rename(columns={"agent": "opponent", "opponent": "agent", "wins": "losses", "losses": "wins"})
    pairs = pd.concat([forward, backward]).groupby(["agent", "opponent"], as_index=False).sum()
    pairs["games"] = pairs["wins"] + pairs["draws"] + pairs["losses"]
    pairs["score_rate"] = (pairs["wins"] + pairs["draws"] / 2) / pairs["games"]
    return pairs
