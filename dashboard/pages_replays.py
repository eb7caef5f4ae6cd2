"""Replays page: choose a tournament and a game (filtered by agent and result) and watch it.

The URL carries the choice (`?page=replays&game=ID`, and `&view=2d` for the top-down view), so a
game can be linked to directly. The player shows the game in 3D by default; the 2D view stays for
a quick look.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, queries, ui
from dashboard.replay_view import GOAL_LEAD_SECONDS, VIEWS, format_clock, player_html
from league.errors import LeagueError

OUTSIDE = -1  # the "games outside tournaments" choice
GAME_LIST_LIMIT = 1000
ANY_AGENT = "(any agent)"
RESULTS_FOR_AGENT = {"any": "any result", "win": "won", "draw": "drawn", "loss": "lost"}
RESULTS_FOR_GAME = {"any": "any result", "blue": "blue won", "orange": "orange won", "draw": "draw"}
VIEW_KEY = "replay_view"
VIEW_LABELS = {"3d": "3D", "2d": "2D (top-down)"}


MAX_GAME_ID = 2**63 - 1  # SQLite's largest integer: a larger id names no game (and cannot be asked for)


def _query_game() -> int | None:
    try:
        return int(st.query_params.get("game", ""))
    except ValueError:
        return None


def render(root: str) -> None:
    st.header("Replays")
    if not queries.summary(root)["games"]:
        st.info("No games recorded yet. Games played by `league tournament` are recorded with their replays.")
        return
    wanted = _query_game()
    requested = queries.game(root, wanted) if wanted is not None and abs(wanted) <= MAX_GAME_ID else None
    if wanted is not None and requested is None:
        st.warning(f"There is no game #{wanted} in this league.")
    if requested is not None and st.session_state.get("_replay_applied") != wanted:
        # A link to a game: show it, whatever was chosen before.
        st.session_state["_replay_applied"] = wanted
        st.session_state["replay_tournament"] = requested["tournament_id"] or OUTSIDE
        for key in ("replay_agent", "replay_result", "replay_game"):
            st.session_state.pop(key, None)
        st.session_state["replay_with_file"] = False
        st.session_state["replay_game"] = wanted

    listing = queries.tournaments(root)
    labels = {int(r.id): f"#{r.id} {r.name} ({ui.stage_label(r.team_size)}, {r.status}, {r.finished_games} games)"
              for r in listing.itertuples()}
    outside = queries.games(root, outside_tournaments=True, limit=1)
    if not outside.empty or not labels:
        labels[OUTSIDE] = "Games outside tournaments (evaluation, manual)"
    if st.session_state.get("replay_tournament") not in labels:
        st.session_state["replay_tournament"] = next(iter(labels))

    c1, c2, c3, c4 = st.columns([2.2, 1.4, 1.2, 0.9])
    tid = c1.selectbox("Tournament", list(labels), key="replay_tournament", format_func=labels.get)
    scope = {"tournament_id": None, "outside_tournaments": True} if tid == OUTSIDE else \
        {"tournament_id": tid, "outside_tournaments": False}
    agents = [ANY_AGENT] + queries.agents_in_games(root, scope["tournament_id"], scope["outside_tournaments"])
    if st.session_state.get("replay_agent") not in agents:
        st.session_state["replay_agent"] = ANY_AGENT
    agent = c2.selectbox("Agent", agents, key="replay_agent")
    results = RESULTS_FOR_GAME if agent == ANY_AGENT else RESULTS_FOR_AGENT
    if st.session_state.get("replay_result") not in results:
        st.session_state["replay_result"] = "any"
    result = c3.selectbox("Result", list(results), key="replay_result", format_func=results.get)
    st.session_state.setdefault("replay_with_file", True)
    with_file = c4.checkbox("With replay", key="replay_with_file",
                            help="Only games that recorded a replay file.")

    games = queries.games(root, **scope, agent=None if agent == ANY_AGENT else agent, result=result,
                       with_replay=with_file, limit=GAME_LIST_LIMIT)
    if games.empty:
        st.info("No games match these filters.")
        return
    choices = {int(r["id"]): ui.game_label(r) for _, r in games.iterrows()}
    if st.session_state.get("replay_game") not in choices:
        st.session_state["replay_game"] = next(iter(choices))
    game_id = st.selectbox(f"Game ({len(choices):,} shown, newest first)", list(choices), key="replay_game",
                           format_func=choices.get)
    if wanted != game_id:
        st.query_params["game"] = str(game_id)
        st.session_state["_replay_applied"] = game_id
    show_game(root, game_id)


def show_game(root: str, game_id: int) -> None:
    game = queries.game(root, game_id)
    if game is None:
        st.warning(f"Game #{game_id} is no longer in the league.")
        return
    st.markdown(f"### :blue[{game['blue']}] {game['blue_goals']} - {game['orange_goals']} :orange[{game['orange']}]")
    where = f"tournament #{game['tournament_id']} {game['tournament']}" if game["tournament_id"] else game["origin"]
    st.caption(f"Game #{game_id} · {ui.stage_label(game['team_size'])} · {where} · seed {game['seed']} · "
               f"{format_clock(game['length_seconds'])} played · {ui.when(game['played'])}")
    if not game["replay_path"]:
        st.info(f"Game #{game_id} has no replay file recorded.")
        return
    path = data.confined_replay_path(data.open_league(root).home.root, game["replay_path"])
    if path is None:
        # Refused on the path alone: nothing outside <home>/replays is opened, and the sentence is
        # the same whether such a file exists or not.
        st.error(f"The replay path stored for game #{game_id} is outside the league's replays folder, so the "
                 "dashboard does not read it.")
        return
    if not path.exists():
        st.warning(f"The replay file of game #{game_id} is missing: {ui.plain(str(path))}. It may have been deleted "
                   "or moved; the game's result and ratings are still recorded.")
        return
    try:
        view = data.replay_view(str(path))
    except LeagueError as exc:
        st.error(str(exc))
        return
    note_other_names(game_id, game, view.meta)

    events = view.events
    goals = events[events["kind"] == "goal"]
    lead = int(round(GOAL_LEAD_SECONDS / view.seconds_per_step))
    starts = {0: "Kick-off (start)"}
    for _, g in goals.iterrows():
        starts[max(0, int(g["step"]) - lead)] = f"Goal at {g['time']}: {g['team']} {g['car']} ({g['score']})"
    key = f"replay_start_{game_id}"
    if st.session_state.get(key) not in starts:
        st.session_state[key] = 0
    c1, c2 = st.columns([3, 1])
    start = c1.selectbox("Start at", list(starts), key=key, format_func=starts.get,
                         help="The player's own lists of goals and touches jump too.")
    shown = choose_view(c2)
    st.iframe(player_html(view.payload, start, autoplay=start > 0, view=shown), height="content",
              alt=f"Replay of game {game_id}")

    c1, c2 = st.columns(2)
    with c1:
        st.subheader("Goals")
        if goals.empty:
            st.caption("No goals.")
        else:
            st.dataframe(goals[["time", "team", "car", "score", "step"]], hide_index=True, width="stretch")
    with c2:
        touches = events[events["kind"] == "touch"]
        st.subheader(f"Touches ({len(touches)})")
        if touches.empty:
            st.caption("No touches recorded.")
        else:
            st.dataframe(touches[["time", "team", "car", "step"]], hide_index=True, width="stretch", height=230)
    st.subheader("Ball")
    st.altair_chart(ball_chart(view.timeline, goals, view.seconds_per_step), width="stretch")


def choose_view(where) -> str:
    """3D or 2D, from the URL's `view` at first, then the user's choice (kept in the URL)."""
    if st.session_state.get(VIEW_KEY) not in VIEWS:
        asked = st.query_params.get("view")
        st.session_state[VIEW_KEY] = asked if asked in VIEWS else VIEWS[0]
    shown = where.radio("View", list(VIEW_LABELS), key=VIEW_KEY, format_func=VIEW_LABELS.get, horizontal=True,
                        help="3D: drag to turn the stadium, the wheel zooms, and the camera can follow the ball or "
                             "ride behind a car. 2D: the field from above.")
    if shown == VIEWS[0]:
        st.query_params.pop("view", None)
    else:
        st.query_params["view"] = shown
    return shown


def note_other_names(game_id: int, game: dict, meta: dict) -> None:
    """Say so when the replay names its teams otherwise than the league records the game: the
    player shows the replay's own names."""
    stored = (str(meta.get("blue", "")), str(meta.get("orange", "")))
    if stored == (game["blue"], game["orange"]):
        return
    st.warning(f"The replay file names its teams {ui.plain(stored[0])} (blue) and {ui.plain(stored[1])} (orange), "
               f"but the league records game #{game_id} as {ui.plain(game['blue'])} against "
               f"{ui.plain(game['orange'])}: the player shows the replay file's names.")


def ball_chart(timeline: pd.DataFrame, goals: pd.DataFrame, seconds_per_step: float) -> alt.VConcatChart:
    marks = pd.DataFrame({"seconds": goals["step"] * seconds_per_step, "team": goals["team"]})
    x = alt.X("seconds:Q", title="game time (s)")
    rules = alt.Chart(marks).mark_rule(strokeDash=[4, 3], strokeWidth=2).encode(
        x=x, color=alt.Color("team:N", scale=alt.Scale(domain=["blue", "orange"], range=["#2f7df6", "#ff8a1e"]),
                             title="goal"))
    speed = alt.Chart(timeline).mark_line(color="#e0e0e0").encode(
        x=x, y=alt.Y("speed:Q", title="ball speed (uu/s)"),
        tooltip=[alt.Tooltip("seconds:Q", format=".1f"), alt.Tooltip("speed:Q", format=".0f")])
    position = alt.Chart(timeline).transform_fold(["x", "y", "z"], as_=["axis", "uu"]).mark_line().encode(
        x=x, y=alt.Y("uu:Q", title="ball position (uu)"),
        strokeDash=alt.StrokeDash("axis:N", title="axis"),
        tooltip=[alt.Tooltip("seconds:Q", format=".1f"), "axis:N", alt.Tooltip("uu:Q", format=".0f")])
    return alt.vconcat(alt.layer(speed, rules).properties(height=160),
                       alt.layer(position, rules).properties(height=160)).resolve_scale(color="independent")
