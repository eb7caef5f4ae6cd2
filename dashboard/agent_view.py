"""An agent's page under the lineage graph: what `league show NAME` prints (where its weights come from and
their licence included), its ratings per stage, every opponent it met, and its games against any one of
them. Text from the league (notes, paths, names) is shown in data grids, as text: never as Markdown."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries, ui
from dashboard.queries_agent import agent_facts

GAMES_SHOWN = 20
EVERY_OPPONENT = ""  # the opponent filter's "every opponent" choice
GAME_LINK = st.column_config.LinkColumn("Game", display_text=r"game=(\d+)$", help="Watch it on the Replays page.")


def show_agent(root: str, name: str) -> None:
    found = agent_facts(root, name)
    if found is None:
        st.warning(f"Agent {ui.plain(name)} is no longer in the league.")
        return
    st.subheader(ui.plain(name))
    st.dataframe(pd.DataFrame(found, columns=["fact", "value"]), hide_index=True, width="stretch",
                 column_config={"fact": st.column_config.TextColumn("", width="small"),
                                "value": st.column_config.TextColumn("")})
    details = queries.agent_details(root, name)
    ratings = pd.DataFrame(details["ratings"] if details else [])
    if ratings.empty:
        st.caption("No rated games yet.")
        return
    st.dataframe(ratings_table(ratings), hide_index=True, width="stretch", column_config={
        "Elo": st.column_config.NumberColumn(format="%.0f"),
        "TS mu": st.column_config.NumberColumn(format="%.2f"),
        "TS sigma": st.column_config.NumberColumn(format="%.2f")})
    opponents(root, name, [int(s) for s in ratings["team_size"]])


def ratings_table(ratings: pd.DataFrame) -> pd.DataFrame:
    """The agent's ratings per stage (league.stores.games.Rating's fields) under readable names."""
    return pd.DataFrame({
        "Stage": [ui.stage_label(s) for s in ratings["team_size"]], "Elo": ratings["elo"], "TS mu": ratings["mu"],
        "TS sigma": ratings["sigma"], "Games": ratings["games"], "W": ratings["wins"], "D": ratings["draws"],
        "L": ratings["losses"], "Last played": [ui.when(t) for t in ratings["last_played"]]})


def opponent_records(root: str, name: str, team_sizes: list[int]) -> pd.DataFrame:
    """Every opponent the agent met, per stage (a mixed game counts against each member of the other side):
    games, W-D-L and score rate from the agent's view, most games first."""
    parts = []
    for size in team_sizes:
        pairs = queries.pair_results(root, size)
        parts.append(pairs[pairs["agent"] == name].assign(stage=ui.stage_label(size)))
    met = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if met.empty:
        return pd.DataFrame(columns=["opponent", "stage", "games", "W-D-L", "score_rate"])
    met = met.sort_values(["games", "opponent"], ascending=[False, True], kind="stable")
    return pd.DataFrame({"opponent": met["opponent"], "stage": met["stage"], "games": met["games"],
                         "W-D-L": [f"{w}-{d}-{lo}" for w, d, lo in zip(met["wins"], met["draws"], met["losses"])],
                         "score_rate": met["score_rate"]})


def opponents(root: str, name: str, team_sizes: list[int]) -> None:
    """Its record against each opponent, then its latest games against the one chosen (or against anyone)."""
    records = opponent_records(root, name, team_sizes)
    st.markdown("**Opponents**")
    st.dataframe(records, hide_index=True, width="stretch", height=min(35 * (len(records) + 1) + 3, 320),
                 column_config={"opponent": st.column_config.TextColumn("Opponent"), "stage": "Stage",
                                "games": st.column_config.NumberColumn("Games", format="%d"),
                                "score_rate": st.column_config.NumberColumn("Score rate", format="percent")})
    choices = [EVERY_OPPONENT, *dict.fromkeys(records["opponent"])]
    key = "agent_opponent"
    if st.session_state.get(key) not in choices:
        st.session_state[key] = EVERY_OPPONENT
    versus = st.selectbox("Games against", choices, key=key, format_func=lambda o: o or "every opponent",
                          help="Its latest games against one opponent, e.g. a community bot it rarely meets.")
    games = queries.games(root, agent=name, versus=versus or None, limit=GAMES_SHOWN)
    more = "+" if len(games) == GAMES_SHOWN else ""
    st.caption(f"Latest games ({len(games)}{more}), newest first; a mixed team is shown with all its members.")
    st.dataframe(queries.games_listing(games), hide_index=True, width="stretch", column_config={"game": GAME_LINK})
