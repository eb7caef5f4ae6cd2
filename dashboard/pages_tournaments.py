"""Tournaments page: every tournament with its status; a running one refreshes by itself."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries, ui
from league.config import openings_text

REFRESH_SECONDS = 5
RECENT_GAMES = 20


def render(root: str) -> None:
    st.header("Tournaments")
    listing = queries.tournaments(root)
    if listing.empty:
        st.info("No tournaments yet. Start one with `league tournament --games 25`.")
        return
    running = bool((listing["status"] == "running").any())
    # A running tournament's progress and standings re-read themselves every few seconds.
    live = st.fragment(run_every=REFRESH_SECONDS if running else None)(_body)
    live(root)


def _body(root: str) -> None:
    listing = queries.tournaments(root)
    table = listing.assign(stage=[ui.stage_label(s) for s in listing["team_size"]],
                           created=pd.to_datetime(listing["created"], utc=True, format="ISO8601"),
                           finished=pd.to_datetime(listing["finished"], utc=True, format="ISO8601"),
                           games=[f"{f} / {p}" for f, p in zip(listing["finished_games"], listing["planned_games"])])
    st.dataframe(table[["id", "name", "stage", "status", "progress", "games", "entrants", "games_per_pair",
                        "created", "finished"]],
                 hide_index=True, width="stretch", column_config={
                     "id": st.column_config.NumberColumn("#", format="%d", width="small"),
                     "progress": st.column_config.ProgressColumn("Progress", min_value=0.0, max_value=1.0,
                                                                 format="percent"),
                     "games_per_pair": st.column_config.NumberColumn("Games per pair", format="%d"),
                     "created": st.column_config.DatetimeColumn("Created", format="YYYY-MM-DD HH:mm"),
                     "finished": st.column_config.DatetimeColumn("Finished", format="YYYY-MM-DD HH:mm"),
                 })
    if (listing["status"] == "running").any():
        st.caption(f"Running tournaments refresh every {REFRESH_SECONDS} s.")

    ids = list(listing["id"])
    labels = {int(r.id): f"#{r.id} {r.name} ({ui.stage_label(r.team_size)}, {r.status})"
              for r in listing.itertuples()}
    default = next((int(r.id) for r in listing.itertuples() if r.status == "running"), int(ids[0]))
    if st.session_state.get("tournament") not in labels:
        st.session_state["tournament"] = default
    tid = st.selectbox("Tournament", list(labels), key="tournament", format_func=labels.get)
    row = listing[listing["id"] == tid].iloc[0]
    st.progress(float(row["progress"]),
                text=f"{row['finished_games']} of {row['planned_games']} games played ({row['status']})")
    st.caption(f"Seed {row['seed']} · {openings_text(row['opening_jitter'])}")
    standings = queries.tournament_standings(root, tid)
    if not int(standings["games"].sum()):
        st.info("No games recorded in this tournament yet.")
        return
    st.subheader("Standings")
    st.dataframe(standings, hide_index=True, width="stretch", column_config={
        "points": st.column_config.NumberColumn("Points", format="%.1f"),
        "gd": st.column_config.NumberColumn("GD", format="%+d"),
        "score_rate": st.column_config.NumberColumn("Score rate", format="%.2f"),
    })
    st.subheader("Latest games")
    recent = queries.latest_games(root, tid, RECENT_GAMES)
    recent = recent.assign(score=[f"{b}-{o}" for b, o in zip(recent["blue_goals"], recent["orange_goals"])],
                           played=pd.to_datetime(recent["played"], utc=True, format="ISO8601"),
                           replay=[f"?page=replays&game={g}&show={'watch' if pd.notna(p) and p else 'details'}"
                                   for g, p in zip(recent["id"], recent["replay_path"])])
    st.dataframe(recent[["id", "schedule_index", "blue", "score", "orange", "result", "played", "replay"]],
                 hide_index=True, width="stretch", column_config={
                     "id": st.column_config.NumberColumn("Game", format="%d"),
                     "schedule_index": st.column_config.NumberColumn("Schedule #", format="%d"),
                     "played": st.column_config.DatetimeColumn("Played", format="YYYY-MM-DD HH:mm:ss"),
                     "replay": st.column_config.LinkColumn("Replay", display_text=r"show=(\w+)$"),
                 })
