"""The dashboard's reading of matches (`league match A B`) and promotions: read-only. Read through the
stores (league.registry): matches through the match store (league.stores.matches), whose sides are the
tournament's entrants (an agent, or a mixed team "A+necto"), their games through the game store and
promotions through the promotion store; no SQL here.

A match is a two-entrant tournament plus a `matches` row (docs/match.md, docs/schema.md): pair p
is the games with schedule_index 2p (A on blue) and 2p + 1 (B on blue). Its statistics after each
complete pair are recomputed here from the recorded games with `league.sprt`, the arithmetic
the match runner uses (arena/match.py `match_stats`, which the dashboard may not import): a game
scores 1, 0.5 or 0 for A by its goals, a pair counts once both of its games are recorded, pairs
in schedule order.

Each query takes the open league's Registry; those the pages call are `@cached_query` (dashboard/data.py),
and a match's statistics are kept while its pairs stay the same (`kept_statistics_path`): no other
Streamlit here.

Both tables are newer than some league homes (matches: schema version 7; promotions: version
8), and the dashboard never migrates: a home without them has no matches and no promotions.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.data import cached_query
from league.errors import LeagueError
from league.registry import Registry
from league.sprt import SprtParams, elo_estimate, pair_score, sprt_result

PAIR_LABELS = ("LL", "LD", "WL+DD", "WD", "WW")  # A's pentanomial classes: the pair's mean score 0, 1/4 .. 1
SPRT_METHODS = ("sprt", "training")  # promotions decided by an SPRT match (by hand, or by the training loop)

MATCH_COLUMNS = ["id", "tournament_id", "a", "b", "team_size", "mode", "status", "decision", "games", "max_games",
                 "batch_pairs", "game_seconds", "llr", "elo", "elo_lo", "elo_hi", "nelo", "nelo_lo", "nelo_hi",
                 "los", "counts_json", "params_json", "seed", "opening_jitter", "message", "created", "finished"]
PAIR_COLUMNS = ["pair", "first_game", "first_blue_goals", "first_orange_goals", "first_replay", "second_game",
                "second_blue_goals", "second_orange_goals", "second_replay", "a_first", "a_second", "outcome",
                "counted"]
PATH_COLUMNS = ["n", "pair", "games", "outcome", "n0", "n1", "n2", "n3", "n4", "llr", "elo", "elo_lo", "elo_hi",
                "nelo", "nelo_lo", "nelo_hi", "los", "checked"]


def has_table(reg: Registry, name: str) -> bool:
    return name in reg.db.table_names()


# --------------------------------------------------------------------------- matches


@cached_query
def matches(reg: Registry) -> pd.DataFrame:
    """Every match, newest first, as the match store reads it (league.stores.matches.Match): id,
    tournament_id, a, b (the sides as its tournament names them: an agent, or a mixed team "A+necto"),
    team_size, mode (sprt, fixed), status, decision (H1, H0, inconclusive; None unfinished or fixed),
    games, max_games, batch_pairs, game_seconds, the statistics as the runner last saved them (llr, elo,
    elo_lo, elo_hi, nelo, nelo_lo, nelo_hi, los), counts_json, params_json, seed, opening_jitter (uu; 0:
    the standard kickoff spots), message (the tournament's: how it ended), created, finished. Empty in a
    home without matches."""
    if not has_table(reg, "matches"):
        return pd.DataFrame(columns=MATCH_COLUMNS)
    rows = [dataclasses.asdict(m) for m in reversed(reg.match_store.all())]
    return pd.DataFrame(rows, columns=[*MATCH_COLUMNS, *(["deterministic"] if rows else [])])[MATCH_COLUMNS]


def match(reg: Registry, match_id: int) -> dict[str, Any] | None:
    """One match's row as `matches` gives it, with `params` (SprtParams, None for a fixed match or
    unreadable parameters) and `counts` (the saved pentanomial counts); None if there is no such match."""
    if not has_table(reg, "matches"):
        return None
    try:
        found = reg.match_store.get(int(match_id))
    except LeagueError:
        return None
    row = {k: getattr(found, k) for k in MATCH_COLUMNS}
    row["params"] = match_params(row["params_json"])
    try:
        counts = found.stats.counts
        row["counts"] = [int(c) for c in counts] if len(counts) == 5 else [0] * 5
    except (TypeError, ValueError):
        row["counts"] = [0] * 5
    return row


def match_params(text: str | None) -> SprtParams | None:
    """The SPRT parameters stored with a match (None for a fixed match, or if they cannot be read)."""
    if not text:
        return None
    try:
        return SprtParams(**json.loads(text))
    except (TypeError, ValueError, LeagueError):  # unreadable, or out of today's range: no bounds to draw
        return None


def game_score(own_goals: int, other_goals: int) -> float:
    """A game's score for the side with `own_goals`: 1 won, 0.5 drawn, 0 lost (by goals, as the runner counts)."""
    return 1.0 if own_goals > other_goals else 0.5 if own_goals == other_goals else 0.0


def match_pairs(reg: Registry, match_id: int) -> pd.DataFrame:
    """A match's pairs that have at least one recorded game, in schedule order.

    Columns: pair (p, 0-based: games 2p with A on blue and 2p + 1 with B on blue), first_game and
    second_game (game ids; None when not recorded yet), their goals (blue, orange), first_replay and
    second_replay (the recorded replay paths), a_first and a_second (A's score in each: 1, 0.5, 0),
    outcome (A's pentanomial class, one of PAIR_LABELS; None for an incomplete pair) and counted
    (both games recorded: only those enter the statistics).
    """
    m = match(reg, match_id)
    if m is None:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    played = [g for g in reg.game_store.games(tournament_id=int(m["tournament_id"]))
              if g.schedule_index is not None]
    pairs: dict[int, dict[str, Any]] = {}
    for g in sorted(played, key=lambda g: g.schedule_index):
        p, second = divmod(int(g.schedule_index), 2)
        slot = "second" if second else "first"
        pair = pairs.setdefault(p, {"pair": p})
        # A is on blue in a pair's first game (by the schedule, so a mixed team's side needs no name)
        a_goals, b_goals = (g.orange_goals, g.blue_goals) if second else (g.blue_goals, g.orange_goals)
        pair.update({f"{slot}_game": int(g.id), f"{slot}_blue_goals": g.blue_goals,
                     f"{slot}_orange_goals": g.orange_goals, f"{slot}_replay": g.replay_path,
                     f"a_{slot}": game_score(a_goals, b_goals)})
    out = []
    for p in sorted(pairs):
        pair = {key: None for key in PAIR_COLUMNS} | pairs[p]
        pair["counted"] = pair["first_game"] is not None and pair["second_game"] is not None
        pair["outcome"] = PAIR_LABELS[pair_score(pair["a_first"], pair["a_second"])] if pair["counted"] else None
        out.append(pair)
    frame = pd.DataFrame(out, columns=PAIR_COLUMNS)
    for col in ("first_game", "second_game", "first_blue_goals", "first_orange_goals", "second_blue_goals",
                "second_orange_goals"):
        frame[col] = frame[col].astype("Int64")
    frame["counted"] = frame["counted"].astype(bool)
    return frame


def statistics_path(pairs: pd.DataFrame, params: SprtParams | None, batch_pairs: int | None = None,
                    max_games: int | None = None) -> pd.DataFrame:
    """The match's statistics after each complete pair, in schedule order, as the runner computes
    them (league.sprt): one row per counted pair.

    Columns: n (complete pairs so far), pair (its schedule pair p), games (2 n), outcome (its class),
    n0..n4 (the pentanomial counts so far), llr (NaN for a fixed match: no hypothesis), elo with
    elo_lo, elo_hi (logistic Elo and its 95% interval), nelo, nelo_lo, nelo_hi (normalized Elo), los,
    checked (whether the runner asked the SPRT after this pair: it does at the end of each batch of
    `batch_pairs` pairs and at the cap; False everywhere when `batch_pairs` is not given).
    """
    counts = [0] * 5
    rows = []
    cap_pairs = max_games // 2 if max_games else None
    for n, pair in enumerate(pairs[pairs["counted"]].itertuples(), start=1):
        counts[pair_score(pair.a_first, pair.a_second)] += 1
        if params is not None:
            r = sprt_result(counts, params)
            llr, elo, (lo, hi), nelo, (nlo, nhi), los = r.llr, r.elo, r.elo_95, r.nelo, r.nelo_95, r.los
        else:
            e = elo_estimate(counts)
            llr, elo, (lo, hi), nelo, (nlo, nhi), los = math.nan, e.elo, e.elo_95, e.nelo, e.nelo_95, e.los
        p = int(pair.pair)
        checked = bool(batch_pairs) and ((p + 1) % int(batch_pairs) == 0 or (cap_pairs is not None
                                                                             and p + 1 == cap_pairs))
        rows.append([n, p, 2 * n, pair.outcome, *counts, llr, elo, lo, hi, nelo, nlo, nhi, los, checked])
    return pd.DataFrame(rows, columns=PATH_COLUMNS)


def match_path(reg: Registry, match_id: int) -> pd.DataFrame:
    """`statistics_path` of a match from its recorded games (empty if there is no such match)."""
    m = match(reg, match_id)
    if m is None:
        return pd.DataFrame(columns=PATH_COLUMNS)
    return statistics_path(match_pairs(reg, match_id), m["params"], m["batch_pairs"], m["max_games"])



@dataclass
class MatchView:
    """One match as the Matches page shows it: its row (`match`), pairs and the promotions that cite it, read
    together; `path`, the statistics after each complete pair, is computed from the pairs when it is read."""

    match: dict[str, Any]
    pairs: pd.DataFrame
    promotions: pd.DataFrame

    @property
    def path(self) -> pd.DataFrame:
        m = self.match
        return kept_statistics_path(self.pairs, m["params_json"], int(m["batch_pairs"]), int(m["max_games"]))


@cached_query
def match_view(reg: Registry, match_id: int) -> MatchView | None:
    """One match read together (None if there is no such match)."""
    row = match(reg, match_id)
    if row is None:
        return None
    return MatchView(row, match_pairs(reg, match_id), promotions(reg, match_id))


@st.cache_data(ttl=600, max_entries=32, show_spinner=False)
def kept_statistics_path(pairs: pd.DataFrame, params_json: str | None, batch_pairs: int, max_games: int
                         ) -> pd.DataFrame:
    """statistics_path, kept while the pairs stay the same (an LLR per pair costs about a millisecond: seconds
    for a long match, so a finished match is not recomputed every data.TTL_SECONDS), and computed outside the
    league's lock."""
    return statistics_path(pairs, match_params(params_json), batch_pairs, max_games)


# --------------------------------------------------------------------------- promotions

PROMOTION_COLUMNS = ["id", "agent", "team_size", "previous_champion", "method", "promoted", "match_id", "decision",
                     "llr", "elo", "elo_lo", "elo_hi", "los", "games", "created", "tournament_id"]


def promotions(reg: Registry, match_id: int | None = None) -> pd.DataFrame:
    """Promotion decisions, newest first (all, or those that cite match `match_id`): id, agent,
    team_size, previous_champion, method (manual, sprt, training, round-robin), promoted (bool), match_id,
    decision, llr, elo, elo_lo, elo_hi, los, games, created, tournament_id (a round-robin promotion's). Empty in a
    home without the table."""
    if not has_table(reg, "promotions"):
        return pd.DataFrame(columns=PROMOTION_COLUMNS)
    store = reg.promotion_store
    found = store.citing(int(match_id)) if match_id is not None else store.all()
    frame = pd.DataFrame([[getattr(p, c) for c in PROMOTION_COLUMNS] for p in reversed(found)],
                         columns=PROMOTION_COLUMNS)
    frame["promoted"] = frame["promoted"].fillna(False).astype(bool)
    for col in ("team_size", "match_id", "games", "tournament_id"):
        frame[col] = frame[col].astype("Int64")
    return frame


@cached_query
def crowned(reg: Registry, team_size: int) -> pd.DataFrame:
    """The agents crowned at this team size by a title round robin (method round-robin, arena.crown), one row
    each (its latest crowning): agent, tournament_id, created."""
    frame = promotions(reg)
    frame = frame[frame["promoted"] & (frame["method"] == "round-robin") & (frame["team_size"] == team_size)]
    return frame.drop_duplicates("agent", keep="first")[["agent", "tournament_id", "created"]].reset_index(drop=True)


@cached_query
def sprt_promoted(reg: Registry, team_size: int) -> pd.DataFrame:
    """The agents promoted at this team size by an SPRT (method sprt or training, promoted = 1),
    one row each (its latest such promotion): agent, method, match_id, decision, llr, elo, elo_lo,
    elo_hi, los, games, created. Manual promotions and rejected ones are left out."""
    frame = promotions(reg)
    frame = frame[frame["promoted"] & frame["method"].isin(SPRT_METHODS)
                  & (frame["team_size"].isna() | (frame["team_size"] == team_size))]
    frame = frame.drop_duplicates("agent", keep="first")  # newest first: each agent's latest
    return frame[["agent", "method", "match_id", "decision", "llr", "elo", "elo_lo", "elo_hi", "los", "games",
                  "created"]].reset_index(drop=True)
