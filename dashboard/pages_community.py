"""Community page: the community bots in the league (`league bot add`: Necto, Element) and the way
up to them: each training run's versions against a bot over their steps, every member's
head-to-head record against it, and its games to watch (the Replays page's player).

Every recorded game against the bot counts (tournaments, matches, evaluation, manual). The URL
names the bot shown (`?page=community&bot=NAME`), so the view can be linked to.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import pages_replays, queries, ui
from dashboard.queries import community_climb

KEY = "community_bot"
WITH_REPLAY_KEY = "community_with_replay"
GAME_LIST_LIMIT = 1000
ANY_MEMBER = "(any member)"
BOT_VIEW = {"any": "any", "win": "loss", "draw": "draw", "loss": "win"}  # a member's result, seen from the bot
HOW_TO_ADD = ("No community bot in this league yet. Add one with `league bot add necto <folder>` (or `element`; "
              "`league bot list` shows the kinds), where the folder is the bot's own in the RLBot botpack, which "
              "the RLBot GUI downloads (Necto's is `RLBotPack/Necto`).")


def _query_bot() -> str | None:
    return st.query_params.get("bot")


def render(root: str) -> None:
    st.header("Community")
    bots = queries.community_bots(root)
    if bots.empty:
        st.info(HOW_TO_ADD)
        return
    show_bots(bots)

    names = list(bots["name"])
    asked = _query_bot()  # a link to a bot: show it, whatever was chosen before
    ui.follow_link(asked, names, KEY, f"There is no community bot named {ui.plain(str(asked))} in this league.")
    titles = dict(zip(bots["name"], bots["bot"]))
    bot = st.selectbox("Community bot", names, key=KEY, format_func=lambda n: f"{n} ({titles[n]})")
    if asked != bot:  # the URL names the bot shown
        st.query_params["bot"] = bot
        st.session_state["_community_asked"] = bot

    results = queries.community_results(root, bot)
    if results.empty:
        st.info(f"No games against {ui.plain(bot)} yet. It plays like any member: in tournaments at the stages it plays "
                f"(`league tournament`), in matches (`league match RUN-vN {bot}`) and in training runs' evaluation "
                "games.")
        return
    show_climb(bot, results)
    show_head_to_head(bot, results)
    watch(root, bot, results)


def show_bots(bots: pd.DataFrame) -> None:
    """Every community bot with the league's record against it."""
    table = pd.DataFrame({
        "name": bots["name"], "bot": bots["bot"], "stages": bots["stages"], "status": bots["status"],
        "games": bots["games"],
        "record": [f"{w}-{d}-{lo}" for w, d, lo in zip(bots["wins"], bots["draws"], bots["losses"])],
        "win_rate": bots["win_rate"], "licence": bots["licence"],
    })
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "name": st.column_config.TextColumn("Name"),
        "bot": st.column_config.TextColumn("Bot"),
        "stages": st.column_config.TextColumn("Plays"),
        "status": st.column_config.TextColumn("Status"),
        "games": st.column_config.NumberColumn("Games", help="Games the league's members played against it."),
        "record": st.column_config.TextColumn("League W-D-L", help="The members' wins, draws and losses against it."),
        "win_rate": st.column_config.NumberColumn("League win rate", format="percent"),
        "licence": st.column_config.TextColumn("Licence"),
    })


def show_climb(bot: str, results: pd.DataFrame) -> None:
    st.subheader(f"The league's runs against {ui.plain(bot)}")
    versions = community_climb(results)
    if versions.empty:
        st.caption(f"No version of a training run (RUN-v1, RUN-v2, ...) has played {ui.plain(bot)} yet; the members "
                   "that did are below.")
        return
    st.altair_chart(ui.versus_chart(versions, bot), width="stretch")
    st.caption(f"One line per training run through its versions (RUN-v1, RUN-v2, ...): x a version's steps trained, "
               f"y its win rate in every recorded game against {ui.plain(bot)}, the bar its 95% interval; a draw is "
               "not a win (draws and the score rate are in the tooltips).")


def head_to_head_table(results: pd.DataFrame) -> pd.DataFrame:
    """The head-to-head as shown: member, stage, status, steps, games, W-D-L, goals for:against,
    win rate, its 95% interval (text), score rate."""
    return pd.DataFrame({
        "agent": results["agent"],
        "stage": [ui.stage_label(int(s)) for s in results["team_size"]],
        "status": results["status"],
        "steps": results["steps"],
        "games": results["games"],
        "wdl": [f"{w}-{d}-{lo}" for w, d, lo in zip(results["wins"], results["draws"], results["losses"])],
        "goals": [f"{f}:{a}" for f, a in zip(results["goals_for"], results["goals_against"])],
        "win_rate": results["win_rate"],
        "win_ci": [f"{lo:.0%} to {hi:.0%}" for lo, hi in zip(results["win_low"], results["win_high"])],
        "score_rate": results["score_rate"],
    })


def show_head_to_head(bot: str, results: pd.DataFrame) -> None:
    st.subheader(f"Head-to-head against {ui.plain(bot)}")
    st.dataframe(head_to_head_table(results), hide_index=True, width="stretch", column_config={
        "agent": st.column_config.TextColumn("Member"),
        "stage": st.column_config.TextColumn("Stage"),
        "status": st.column_config.TextColumn("Status"),
        "steps": st.column_config.NumberColumn("Steps", format="localized", help="The member's steps trained."),
        "games": st.column_config.NumberColumn("Games"),
        "wdl": st.column_config.TextColumn("W-D-L", help=f"The member's wins, draws and losses against {bot}."),
        "goals": st.column_config.TextColumn("Goals", help=f"Goals the member scored : goals {bot} scored."),
        "win_rate": st.column_config.NumberColumn("Win rate", format="percent", help="Wins / games; a draw is not a win."),
        "win_ci": st.column_config.TextColumn(
            "95% interval", help="Of the win rate: the mean +- 1.96 standard errors (league.sprt.elo_estimate), "
                                 "clipped to 0-100%; with every game alike, a game's widest spread is taken."),
        "score_rate": st.column_config.NumberColumn("Score rate", format="percent", help="Win 1, draw 1/2."),
    })
    st.caption("Best win rate first. A member that played the bot at two stages has a row for each.")


def watch(root: str, bot: str, results: pd.DataFrame) -> None:
    """Choose a member of the head-to-head (or any) and one of its games against the bot, and watch it."""
    st.subheader(f"Games against {ui.plain(bot)}")
    members: dict[str, str] = {ANY_MEMBER: ANY_MEMBER}
    for agent, rows in results.groupby("agent", sort=False):
        records = [f"{ui.stage_label(int(r.team_size))}: {r.wins}-{r.draws}-{r.losses}" for r in rows.itertuples()]
        members[str(agent)] = f"{agent} ({', '.join(records)})"
    member_key, result_key, game_key = (f"community_member_{bot}", f"community_result_{bot}",
                                        f"community_game_{bot}")
    if st.session_state.get(member_key) not in members:
        st.session_state[member_key] = ANY_MEMBER
    c1, c2, c3 = st.columns([2.2, 1.2, 0.9])
    member = c1.selectbox("Member", list(members), key=member_key, format_func=members.get,
                          help="A member of the head-to-head above, with its W-D-L at each stage.")
    results_for = pages_replays.RESULTS_FOR_AGENT
    if st.session_state.get(result_key) not in results_for:
        st.session_state[result_key] = "any"
    result = c2.selectbox("Result", list(results_for), key=result_key, format_func=results_for.get,
                          help=f"Seen from the member: won means {bot} lost.")
    st.session_state.setdefault(WITH_REPLAY_KEY, True)
    with_file = c3.checkbox("With replay", key=WITH_REPLAY_KEY, help="Only games that recorded a replay file.")
    if member == ANY_MEMBER:  # the bot's games, its result the other way round
        games = queries.games(root, agent=bot, result=BOT_VIEW[result], with_replay=with_file, no_mirror=True,
                           limit=GAME_LIST_LIMIT)
    else:
        games = queries.games(root, agent=member, versus=bot, result=result, with_replay=with_file,
                           limit=GAME_LIST_LIMIT)
    if games.empty:
        st.info("No games match these filters.")
        return
    choices = {int(r["id"]): ui.game_label(r) for _, r in games.iterrows()}
    if st.session_state.get(game_key) not in choices:
        st.session_state[game_key] = next(iter(choices))
    game_id = st.selectbox(f"Game ({len(choices):,} shown, newest first)", list(choices), key=game_key,
                           format_func=choices.get)
    pages_replays.show_game(root, game_id)
