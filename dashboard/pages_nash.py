"""Nash averaging page: a stage's payoff matrix (the meta-game of league.nash), over every game of the
stage or one tournament's, as a heat map with the Nash support marked, how full the matrix is, and
each agent's Nash weight and Nash-averaged score. The numbers are league.nash_standings', the same
as `league leaderboard --by nash [--tournament ID]` (docs/league-roles.md, "Nash averaging")."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard import queries, ui
from dashboard.data import cached_query
from dashboard.pages_head_to_head import heatmap
from dashboard.queries import score_matrix
from league.nash import NashAverage
from league.nash_standings import SPARSE_BELOW, NashStandings, RoundRobin, read_nash, round_robins
from league.registry import Registry
from league.standings import PairRecord

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


ALL_GAMES = 0  # the "every game of the stage" choice of the games selector
SCOPE_KEY = "nash_scope"


@cached_query
def nash(reg: Registry, team_size: int, include_retired: bool, tournament_id: int | None = None
         ) -> tuple[NashStandings, pd.DataFrame]:
    """league.nash_standings.read_nash (the same as `league leaderboard --by nash [--tournament ID]`),
    and the members' games per pair (pair_rows) for the heat map."""
    result = read_nash(reg.db, team_size, reg.ratings_cfg, include_retired=include_retired,
                       tournament_id=tournament_id)
    return result, pair_rows(result.records, result.nash.members)


@cached_query
def full_round_robins(reg: Registry, team_size: int) -> list[RoundRobin]:
    return round_robins(reg.db, team_size)


def _query_tournament() -> int | None:
    try:
        return int(st.query_params.get("tournament", ""))
    except ValueError:
        return None


def scope_picker(root: str, team_size: int, container) -> int:
    """ALL_GAMES or the id of one tournament of the stage whose games to weigh (`tournament=ID` in the URL)."""
    listing = queries.tournaments(root)
    listing = listing[listing["team_size"] == team_size]
    full = {t.id for t in full_round_robins(root, team_size)}
    labels = {ALL_GAMES: f"Every game of {ui.stage_label(team_size)}"}
    for t in listing.itertuples():
        labels[int(t.id)] = (f"#{t.id} {t.name} ({t.entrants} entrants, {t.finished_games} games"
                             + (", full round robin)" if int(t.id) in full else ")"))
    asked = _query_tournament()
    if asked in labels and st.session_state.get("_nash_asked") != asked:
        st.session_state["_nash_asked"] = asked
        st.session_state[SCOPE_KEY] = asked
    if st.session_state.get(SCOPE_KEY) not in labels:
        st.session_state[SCOPE_KEY] = ALL_GAMES
    chosen = container.selectbox("Games", list(labels), key=SCOPE_KEY, format_func=labels.get,
                                 help="Every game of the stage, or one tournament's games alone (its entrants, "
                                      "as `league leaderboard --by nash --tournament ID`).")
    if chosen != ALL_GAMES:
        st.query_params["tournament"] = str(chosen)
    elif "tournament" in st.query_params:
        del st.query_params["tournament"]
    return chosen


def _choose(tournament_id: int) -> None:
    st.session_state[SCOPE_KEY] = tournament_id


def render(root: str) -> None:
    st.header("Nash averaging")
    c1, c2, c3 = st.columns([1, 2, 1])
    team_size = ui.stage_picker(root, c1)
    scope = scope_picker(root, team_size, c2)
    show_retired = c3.checkbox("Show retired agents", key="show_retired", disabled=scope != ALL_GAMES,
                               help="One tournament's table lists its entrants, whatever their status.")
    board, pairs = nash(root, team_size, show_retired, None if scope == ALL_GAMES else scope)
    result = board.nash
    if not result.members:
        st.info(f"No games between different agents in {ui.plain(board.where)} yet: there is no payoff "
                "matrix to average. Play some with `league tournament`.")
        return
    fullness(root, board)
    table = ranked_table(board)
    labels = support_labels(result)
    shown = table["name"].tolist()
    if len(shown) > 2:
        top = st.slider("Agents in the matrix", 2, len(shown), min(MATRIX_DEFAULT, len(shown)), key="nash_top")
        shown = shown[:top]
    cells = score_matrix(pairs, shown).replace({"agent": labels, "opponent": labels})
    st.altair_chart(heatmap(cells, [labels[n] for n in shown]), width="content")
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


def fullness(root: str, board: NashStandings) -> None:
    """How full the payoff matrix is; when too sparse to mean anything, a warning and the tournaments
    whose games form a full round robin, each a button that weighs its games instead."""
    text = (f"Payoff matrix {board.fill:.0%} full: {board.met_pairs:,} of {board.pairs:,} pairs of agents met "
            f"in {ui.plain(board.where)}.")
    if not board.too_sparse:
        st.caption(text)
        return
    st.warning(f"{text} Too sparse to mean anything: fewer than {SPARSE_BELOW:.0%} of the pairs met, so most of "
               "the matrix is pairs that never met counted as even; the support then holds agents nobody tested, "
               "and each of them scores 0 by construction.")
    full = full_round_robins(root, board.team_size)
    if not full:
        st.caption("No tournament of this stage forms a full round robin yet: play one (`league tournament "
                   "--games 10`) and choose it above.")
        return
    st.caption("These tournaments' games form a full round robin (every pair of entrants met):")
    cols = st.columns(min(len(full), 4))
    for i, t in enumerate(full[:8]):
        cols[i % len(cols)].button(f"#{t.id} {ui.plain(t.name)}: {t.entrants} entrants, {t.games} games", key=f"nash_rr_{t.id}",
                                   on_click=_choose, args=(t.id,))


def ranked_table(board: NashStandings) -> pd.DataFrame:
    """One row per member, best Nash score first (NashStandings.rows)."""
    rows = board.rows()
    return pd.DataFrame({
        "rank": [r.rank for r in rows], "name": [r.name for r in rows], "support": [r.weight > 0 for r in rows],
        "weight": [r.weight for r in rows], "score": [r.score for r in rows], "games": [r.games for r in rows],
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
