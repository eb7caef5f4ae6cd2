"""Matches page: every `league match A B`, and for one match its LLR path against the SPRT bounds,
its pentanomial counts, its Elo difference over the games and each pair's two replays.

The URL names the match shown (`?page=matches&match=ID`), so a match can be linked to (the
leaderboard's SPRT marks link here). The statistics after each pair are recomputed from the
recorded games with league.sprt (dashboard/match_queries.py), the arithmetic the match runner uses.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import match_queries, pages_replays, ui
from dashboard.match_queries import PAIR_LABELS, match_params
from league.config import openings_text
from league.sprt_verdict import match_verdict

KEY = "match"
WATCH_KEY = "match_watch"
NOT_WATCHING = 0
REFRESH_SECONDS = 5
PAIR_COLOURS = ("#e45756", "#f58518", "#8a8f98", "#72b7b2", "#54a24b")  # LL .. WW: A's losses red, wins green
H0_COLOUR, H1_COLOUR = "#e45756", "#54a24b"


def match_link(match_id: object) -> str | None:
    """The Matches page showing match `match_id` (None for none)."""
    return None if match_id is None or pd.isna(match_id) else f"?page=matches&match={int(match_id)}"


def replay_link(game_id: object, replay: object) -> str | None:
    """The Replays page on a game (as the Tournaments page links: `show=` says whether it has a replay file)."""
    if game_id is None or pd.isna(game_id):
        return None
    return f"?page=replays&game={int(game_id)}&show={'watch' if isinstance(replay, str) and replay else 'details'}"


def _query_match() -> int | None:
    try:
        return int(st.query_params.get(KEY, ""))
    except ValueError:
        return None


def describe(row) -> str:
    """A match's kind: `SPRT elo0=0, elo1=30 (normalized, alpha 0.05, beta 0.05)` or `fixed, 20 games`."""
    if row["mode"] != "sprt":
        return f"fixed, {row['max_games']} games"
    params = match_params(row["params_json"])
    if params is None:
        return "SPRT"
    return (f"SPRT elo0={params.elo0:g}, elo1={params.elo1:g} ({params.model}, alpha {params.alpha:g}, "
            f"beta {params.beta:g})")


def verdict(m: dict) -> str:
    """One sentence for where the match ended (the wording of `league match`)."""
    return match_verdict(m["mode"], m["status"], m["decision"], m["params"], m["a"], m["b"], m["games"],
                         m["max_games"])


def render(root: str) -> None:
    st.header("Matches")
    listing = match_queries.matches(root)
    if listing.empty:
        st.info("No matches yet. Play one with `league match A B --sprt elo0=0,elo1=30` (docs/match.md): "
                "its LLR path, pair counts, Elo over the games and replays appear here.")
        return
    show_listing(listing)

    labels = {int(r.id): f"#{r.id} {r.a} vs {r.b} ({ui.stage_label(r.team_size)}, "
                         f"{'SPRT' if r.mode == 'sprt' else 'fixed'}, {r.decision or r.status})"
              for r in listing.itertuples()}
    asked = _query_match()  # a link to a match (the leaderboard's SPRT mark): show it, whatever was chosen before
    ui.follow_link(asked, labels, KEY, f"There is no match #{asked} in this league.")
    match_id = st.selectbox("Match", list(labels), key=KEY, format_func=labels.get, help="Newest first.")
    if asked != match_id:  # the URL names the match shown, so the view can be linked to
        st.query_params[KEY] = str(match_id)
        st.session_state["_match_asked"] = match_id

    running = listing.loc[listing["id"] == match_id, "status"].iloc[0] == "running"
    # A running match's statistics and pairs re-read themselves (data at most data.TTL_SECONDS old).
    st.fragment(run_every=REFRESH_SECONDS if running else None)(show_match)(root, match_id)
    watch(root, match_id)


def show_listing(listing: pd.DataFrame) -> None:
    table = pd.DataFrame({
        "id": listing["id"],
        "match": [f"{a} vs {b}" for a, b in zip(listing["a"], listing["b"])],
        "stage": [ui.stage_label(s) for s in listing["team_size"]],
        "mode": listing["mode"],
        "status": listing["status"],
        "decision": listing["decision"].fillna(""),  # a fixed match (or one running) has none: empty, not "None"
        "games": [f"{g} / {m}" for g, m in zip(listing["games"], listing["max_games"])],
        "elo": listing["elo"],
        "elo_ci": [f"{lo:+.0f} to {hi:+.0f}" if pd.notna(lo) and pd.notna(hi) else ""
                   for lo, hi in zip(listing["elo_lo"], listing["elo_hi"])],
        "los": listing["los"],
        "llr": [f"{v:+.2f}" if m == "sprt" and pd.notna(v) else "" for m, v in zip(listing["mode"], listing["llr"])],
        "created": pd.to_datetime(listing["created"], utc=True, format="ISO8601"),
        "open": [match_link(i) for i in listing["id"]],
    })
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "id": st.column_config.NumberColumn("#", format="%d", width="small"),
        "match": st.column_config.TextColumn("A vs B"),
        "decision": st.column_config.TextColumn(
            "Decision", help="H1: A is at least elo1 better; H0: A is no more than elo0 better; inconclusive: "
                             "no decision within the cap. Empty for a fixed match or one not finished."),
        "games": st.column_config.TextColumn("Games", help="Games in complete pairs counted / the cap."),
        "elo": st.column_config.NumberColumn("Elo (A - B)", format="%+.0f",
                                             help="Logistic Elo of A's mean score, from the complete pairs."),
        "elo_ci": st.column_config.TextColumn("95% interval"),
        "los": st.column_config.NumberColumn("LOS", format="percent",
                                             help="Likelihood of superiority: how sure it is that A is better."),
        "llr": st.column_config.TextColumn("LLR", help="The log-likelihood ratio; empty for a fixed match."),
        "created": st.column_config.DatetimeColumn("Created", format="YYYY-MM-DD HH:mm"),
        "open": st.column_config.LinkColumn("Open", display_text="details"),
    })


def show_match(root: str, match_id: int) -> None:
    view = match_queries.match_view(root, match_id)
    if view is None:
        st.warning(f"Match #{match_id} is no longer in the league.")
        return
    m, pairs, path = view.match, view.pairs, view.path
    st.subheader(f"{ui.plain(m['a'])} vs {ui.plain(m['b'])}")
    st.caption(f"Match #{m['id']} · {ui.stage_label(m['team_size'])} · {describe(m)} · {m['status']} · "
               f"cap {m['max_games']} games · {m['batch_pairs']} pairs per batch · {m['game_seconds']:g} s games · "
               f"{openings_text(m['opening_jitter'])} · seed {m['seed']} · tournament #{m['tournament_id']} · "
               f"created {ui.when(m['created'])}"
               + (f" · finished {ui.when(m['finished'])}" if m["finished"] else ""))
    say = {"H1": st.success, "H0": st.warning}.get(m["decision"], st.info)
    say(ui.plain(verdict(m) + (f" {m['message']}" if m["message"] else "")))
    for promotion in view.promotions.itertuples():
        outcome = "promoted to champion" if promotion.promoted else "not promoted"
        st.caption(ui.plain(f"Promotion ({promotion.method}): {promotion.agent} {outcome} on this match's result."))

    last = path.iloc[-1] if not path.empty else None
    # A fixed match tests no hypothesis (its verdict above says so): no LLR column.
    c1, *rest = st.columns(4 if m["params"] is not None else 3)
    c1.metric("Games counted", f"{2 * len(path)} ({len(path)} pairs)",
              help="Games of complete pairs: a pair counts once both of its games are recorded.")
    if m["params"] is not None:
        lower, upper = m["params"].bounds
        rest.pop(0).metric("LLR", f"{last['llr']:+.3f}" if last is not None else "0",
                           help=f"Bounds [{lower:+.3f}, {upper:+.3f}]")
    c3, c4 = rest
    if last is not None:
        c3.metric("Elo (A - B)", f"{last['elo']:+.0f}", help=f"95% interval {last['elo_lo']:+.0f} to {last['elo_hi']:+.0f}"
                                                           f"; normalized Elo {last['nelo']:+.1f}")
        c4.metric("LOS", f"{last['los']:.1%}", help="Likelihood of superiority of A over B.")
    if path.empty:
        st.info("No complete pair recorded yet: the statistics start with the first pair's two games.")
    else:
        if m["params"] is not None:
            st.altair_chart(llr_chart(path, m["params"].bounds, m["params"].elo0, m["params"].elo1), width="stretch")
        st.altair_chart(elo_chart(path), width="stretch")
        if int(path["games"].iloc[-1]) != int(m["games"]):
            st.caption(f"The runner last saved statistics after {m['games']} games (it checks at the end of each "
                       f"batch); the path counts every complete pair recorded, {int(path['games'].iloc[-1])} games.")
    show_counts(path)
    show_pairs(pairs, path, m)


def llr_chart(path: pd.DataFrame, bounds: tuple[float, float], elo0: float, elo1: float) -> alt.LayerChart:
    """The LLR after each complete pair, with Wald's bounds; filled points where the runner asked the SPRT."""
    lower, upper = bounds
    x = alt.X("games:Q", title="games (complete pairs)", axis=alt.Axis(tickMinStep=2, format="d"))
    marks = pd.DataFrame({"llr": [upper, lower], "bound": [f"accept H1 (A >= elo1 = {elo1:g})",
                                                          f"accept H0 (A <= elo0 = {elo0:g})"]})
    colours = alt.Scale(domain=list(marks["bound"]), range=[H1_COLOUR, H0_COLOUR])
    rules = alt.Chart(marks).mark_rule(strokeDash=[6, 4], strokeWidth=2).encode(
        y="llr:Q", color=alt.Color("bound:N", scale=colours, legend=alt.Legend(orient="bottom", title=None)))
    line = alt.Chart(path).mark_line(color="#4c78a8").encode(
        x=x, y=alt.Y("llr:Q", title="log-likelihood ratio"))
    checked = alt.Chart(path).transform_filter("datum.checked").mark_point(size=60, filled=True,
                                                                           color="#4c78a8").encode(x=x, y="llr:Q")
    points = alt.Chart(path).mark_point(size=45, color="#4c78a8").encode(
        x=x, y="llr:Q",
        tooltip=[alt.Tooltip("n:Q", title="pairs"), "games:Q", alt.Tooltip("outcome:N", title="this pair"),
                 alt.Tooltip("llr:Q", title="LLR", format="+.3f"), alt.Tooltip("checked:N", title="SPRT checked"),
                 "n0:Q", "n1:Q", "n2:Q", "n3:Q", "n4:Q"])
    return alt.layer(rules, line, checked, points).properties(
        title="LLR after each complete pair (filled: where the runner checked the SPRT)", height=280)


def elo_chart(path: pd.DataFrame) -> alt.LayerChart:
    """A's logistic Elo advantage over B after each complete pair, with its 95% interval."""
    x = alt.X("games:Q", title="games (complete pairs)", axis=alt.Axis(tickMinStep=2, format="d"))
    band = alt.Chart(path).mark_area(opacity=0.25, color="#4c78a8").encode(
        x=x, y=alt.Y("elo_lo:Q", title="Elo (A - B)"), y2="elo_hi:Q")
    line = alt.Chart(path).mark_line(point=alt.OverlayMarkDef(size=30, filled=True), color="#4c78a8").encode(
        x=x, y="elo:Q",
        tooltip=[alt.Tooltip("n:Q", title="pairs"), "games:Q", alt.Tooltip("elo:Q", title="Elo", format="+.1f"),
                 alt.Tooltip("elo_lo:Q", title="95% low", format="+.1f"),
                 alt.Tooltip("elo_hi:Q", title="95% high", format="+.1f"),
                 alt.Tooltip("nelo:Q", title="normalized Elo", format="+.1f"),
                 alt.Tooltip("los:Q", title="LOS", format=".1%")])
    even = alt.Chart(pd.DataFrame({"even": [0.0]})).mark_rule(strokeDash=[4, 4], color="#8a8f98").encode(y="even:Q")
    return alt.layer(band, even, line).properties(
        title="Elo difference after each complete pair (band: 95% interval)", height=260)


def counts_table(path: pd.DataFrame) -> pd.DataFrame:
    """The pentanomial counts of the complete pairs: one row, columns LL, LD, WL+DD, WD, WW, pairs."""
    counts = [int(path[f"n{k}"].iloc[-1]) if not path.empty else 0 for k in range(5)]
    return pd.DataFrame([counts + [sum(counts)]], columns=[*PAIR_LABELS, "pairs"])


def show_counts(path: pd.DataFrame) -> None:
    table = counts_table(path)
    st.subheader("Pair counts")
    c1, c2 = st.columns([1, 1.4])
    c1.dataframe(table, hide_index=True, width="stretch")
    c1.caption("A's results over each pair's two games: LL lost both, LD lost one and drew one, WL+DD won one and "
               "lost one or drew both, WD won one and drew one, WW won both.")
    bars = pd.DataFrame({"outcome": list(PAIR_LABELS), "pairs": table.iloc[0, :5].astype(int).to_list()})
    c2.altair_chart(alt.Chart(bars).mark_bar().encode(
        x=alt.X("outcome:N", sort=list(PAIR_LABELS), title="A's pair result", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("pairs:Q", axis=alt.Axis(tickMinStep=1, format="d")),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=list(PAIR_LABELS), range=list(PAIR_COLOURS)),
                        legend=None),
        tooltip=["outcome:N", "pairs:Q"]).properties(height=200), width="stretch")


def pairs_table(pairs: pd.DataFrame, path: pd.DataFrame) -> pd.DataFrame:
    """One row per pair with a recorded game: its two games (score blue-orange and a link to the
    Replays page), A's results, the pair's class and the LLR and Elo after it (complete pairs only)."""
    after = path.set_index("pair")[["llr", "elo"]] if not path.empty else pd.DataFrame(columns=["llr", "elo"])
    letters = {1.0: "W", 0.5: "D", 0.0: "L"}

    def score(blue, orange) -> str:
        return "" if pd.isna(blue) else f"{blue}-{orange}"

    def results(first, second) -> str:
        return "".join(letters.get(s, "?") if s is not None and not pd.isna(s) else "." for s in (first, second))

    return pd.DataFrame({
        "pair": pairs["pair"] + 1,
        "first": [score(b, o) for b, o in zip(pairs["first_blue_goals"], pairs["first_orange_goals"])],
        "first_replay": [replay_link(g, r) for g, r in zip(pairs["first_game"], pairs["first_replay"])],
        "second": [score(b, o) for b, o in zip(pairs["second_blue_goals"], pairs["second_orange_goals"])],
        "second_replay": [replay_link(g, r) for g, r in zip(pairs["second_game"], pairs["second_replay"])],
        "results": [results(f, s) for f, s in zip(pairs["a_first"], pairs["a_second"])],
        "outcome": [o if isinstance(o, str) else "incomplete" for o in pairs["outcome"]],
        "llr": [after["llr"].get(p, float("nan")) for p in pairs["pair"]],
        "elo": [after["elo"].get(p, float("nan")) for p in pairs["pair"]],
    })


def show_pairs(pairs: pd.DataFrame, path: pd.DataFrame, m: dict) -> None:
    st.subheader("Pairs and their replays")
    if pairs.empty:
        st.caption("No game recorded yet.")
        return
    a, b = m["a"], m["b"]
    columns = {
        "pair": st.column_config.NumberColumn("Pair", format="%d", width="small",
                                              help="Pair p is games 2p - 2 (A on blue) and 2p - 1 (B on blue) of "
                                                   "the match's tournament, with the same seed."),
        "first": st.column_config.TextColumn("Game 1", help=f"Score (blue-orange) with {a} on blue."),
        "first_replay": st.column_config.LinkColumn("Replay 1", display_text=r"show=(\w+)$",
                                                    help="Game 1 on the Replays page."),
        "second": st.column_config.TextColumn("Game 2", help=f"Score (blue-orange) with {b} on blue."),
        "second_replay": st.column_config.LinkColumn("Replay 2", display_text=r"show=(\w+)$",
                                                     help="Game 2 on the Replays page."),
        "results": st.column_config.TextColumn(f"{a}'s results", help="W won, D drew, L lost; . not recorded yet."),
        "outcome": st.column_config.TextColumn("Class", help="The pentanomial class; an incomplete pair is not "
                                                            "counted until its mirror game is recorded."),
        "llr": st.column_config.NumberColumn("LLR after", format="%+.3f"),
        "elo": st.column_config.NumberColumn("Elo after", format="%+.0f"),
    }
    st.dataframe(pairs_table(pairs, path), hide_index=True, width="stretch", column_config=columns,
                 height=min(35 * (len(pairs) + 1) + 3, 640))


def watch(root: str, match_id: int) -> None:
    """Choose one of the match's games and watch it here (the Replays page's player)."""
    view = match_queries.match_view(root, match_id)
    if view is None or view.pairs.empty:
        return
    pairs = view.pairs
    choices = {NOT_WATCHING: "(choose a game)"}
    for p in pairs.itertuples():
        for slot, blue in (("first", view.match["a"]), ("second", view.match["b"])):
            game_id = getattr(p, f"{slot}_game")
            if game_id is not None and not pd.isna(game_id):
                goals = f"{getattr(p, f'{slot}_blue_goals')}-{getattr(p, f'{slot}_orange_goals')}"
                choices[int(game_id)] = f"pair {p.pair + 1}, {blue} on blue: {goals} (game #{int(game_id)})"
    if st.session_state.get(WATCH_KEY) not in choices:
        st.session_state[WATCH_KEY] = NOT_WATCHING
    st.subheader("Watch a game")
    game_id = st.selectbox("Game", list(choices), key=WATCH_KEY, format_func=choices.get,
                           help="Or follow a Replay link above to the Replays page.")
    if game_id != NOT_WATCHING:
        pages_replays.show_game(root, game_id)
