"""Standings: the one read model behind every leaderboard.

`standings(...)` is pure: it takes the agents with their current ratings and the results to
count, and returns the ranked rows with the whole-history maximum-likelihood fit. Two readers
gather its inputs from the league database: `read_standings` (a team size: `league
leaderboard`, the dashboard's leaderboard, head-to-head and history pages, Registry.leaderboard)
and `read_tournament_standings` (one tournament: the table `league tournament` prints, the
dashboard's tournaments page).

Who is listed
    A team size's table lists the agents of that stage and the baselines (which play every
    stage), plus any other agent with a counted game in it (a 1v1 agent that played 2v2
    evaluation games); retired agents only when asked for. A tournament's table lists its
    entrants, in their order, whatever their status now.

What is counted
    Every game between two different agents (a mirror match says nothing about strength) of
    the team size, or of the tournament. Games, W-D-L, goals, points and the MLE fit come from
    those games; Elo and TrueSkill are the agent's current ratings in the team size (initial
    ones if it has not played). A mixed game (a side is a team of several members, league.teams)
    counts for every member of both sides, and `mixed` says how many of an agent's games were
    mixed; the fit rates a team as the mean of its members (league.ratings.mle_fit).

How rows are ordered
    Best first by the chosen key: `elo`, `trueskill` (mu - 3 sigma), `mle` (the fit's rating;
    an agent with no game to fit, whose rating is only the prior, comes after every fitted
    one) or `points` (win 1, draw 1/2). Ties go to the higher goal difference when ranking by
    points and to the agent with more games otherwise, then to the listing order (creation
    order of the agents, or the entrants' order).

What the MLE is anchored on
    The fit is made as configured (`ratings.mle`: `rule` pinned at 1500, its prior draws against
    `rule`); an `anchor` (NAME, ELO) re-pins it on any agent with counted games: every rating
    moves by one constant and every interval becomes relative to that agent (league.ratings.
    reanchor), so the order, the gaps and the likelihoods of superiority stay as they were.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import sqlite_utils

from league.config import RatingsConfig, stage_of
from league.errors import LeagueError, unknown_name
from league.names import check_name
from league.ratings import DRAW, LOSS, WIN, MleRatings, conservative, mle_fit, reanchor
from league.results import Record
from league.stores.agents import plays
from league.stores.database import Database, row_id

from league.stores.games import read_team_sides
from league.stores.tournaments import Tournament, TournamentStore
from league.teams import is_team, member_names, members

RANKINGS = ("elo", "trueskill", "mle", "points")
# The Elo an anchor may be pinned at: every leaderboard's ratings then stay in the usual Elo range.
ANCHOR_ELO_MIN, ANCHOR_ELO_MAX = 0.0, 5000.0
ANCHOR_FORM = "give NAME or NAME=ELO, such as necto=2000"


@dataclass(frozen=True)
class AgentRating:
    """An agent and its current ratings in one team size (the initial ones if it has not played there)."""

    name: str
    kind: str
    status: str
    team_size: int | None  # the agent's own stage; None for the baselines, which play every stage
    elo: float
    mu: float
    sigma: float
    last_played: str | None = None
    plays_here: bool = True  # whether it plays this team size (a community bot plays the sizes it was made for)


@dataclass(frozen=True)
class PairRecord:
    """What `agent` scored against `opponent` over some games. Records add up: several records of
    one pair, from either side, count together; a record of an agent against itself is ignored.
    Either may be a mixed team ("A+B", league.teams): its games count for each member, as mixed."""

    agent: str
    opponent: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    goals_for: int = 0
    goals_against: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True, kw_only=True)
class Standing(Record):
    """One listed agent: its rank, ratings and the record (league.results) of the counted games."""

    rank: int
    name: str
    kind: str
    status: str
    elo: float
    mu: float
    sigma: float
    goals_for: int
    goals_against: int
    mle: float  # the fit's rating; only the prior (the configured anchor's level) when mle_interval is None
    mle_interval: tuple[float, float] | None  # 95%; None when there is no game to fit
    last_played: str | None
    mixed: int = 0  # how many of `games` were mixed (a side was a team of several members)

    @property
    def ts(self) -> float:
        """TrueSkill's conservative rating, mu - 3 sigma."""
        return conservative(self.mu, self.sigma)

    @property
    def gd(self) -> int:
        return self.goals_for - self.goals_against

    @property
    def score_rate(self) -> float:
        """Points per game (NaN before the first game)."""
        return self.score if self.games else math.nan


@dataclass(frozen=True)
class Standings:
    rows: tuple[Standing, ...]
    fit: MleRatings  # over every counted game (listed or not), with every listed agent in it
    by: str


def parse_anchor(text: str, default_rating: float) -> tuple[str, float]:
    """(name, Elo) of an anchor given as NAME or NAME=ELO (`default_rating` when no ELO is given).

    The name must follow the naming rule and the Elo be a finite number from ANCHOR_ELO_MIN to
    ANCHOR_ELO_MAX; anything else is a LeagueError. Whether the agent exists is for `standings`.
    """
    name, sep, value = text.partition("=")
    if not name.strip():
        raise LeagueError(f"The MLE anchor {text!r} names no agent: {ANCHOR_FORM}.")
    check_name(name, "MLE anchor name")
    if not sep:
        return name, float(default_rating)
    try:
        rating = float(value)
    except ValueError:
        raise LeagueError(f"The MLE anchor {text!r} has no number after '=': {ANCHOR_FORM}.") from None
    if not math.isfinite(rating) or not ANCHOR_ELO_MIN <= rating <= ANCHOR_ELO_MAX:
        raise LeagueError(f"The MLE anchor's Elo {value!r} is not a number from {ANCHOR_ELO_MIN:.0f} "
                          f"to {ANCHOR_ELO_MAX:.0f}.")
    return name, rating


def fit_mle(records: Iterable[PairRecord], cfg: RatingsConfig, names: Sequence[str] | None = None) -> MleRatings:
    """The whole-history maximum-likelihood fit (league.ratings.mle_fit) of the records' games.

    mle_fit reduces games to per-pair totals itself, so handing it each record's wins, draws and
    losses gives the same fit as handing it every game.
    """
    games: list[tuple[str, str, float]] = []
    teams: list[tuple[tuple[str, ...], tuple[str, ...], float]] = []
    for r in records:
        if r.agent == r.opponent:
            continue
        if is_team(r.agent) or is_team(r.opponent):
            a, b = members(r.agent), members(r.opponent)
            teams += [(a, b, WIN)] * r.wins + [(a, b, DRAW)] * r.draws + [(a, b, LOSS)] * r.losses
            continue
        games += [(r.agent, r.opponent, WIN)] * r.wins + [(r.agent, r.opponent, DRAW)] * r.draws
        games += [(r.agent, r.opponent, LOSS)] * r.losses
    return mle_fit(games, cfg.mle, cfg.elo.scale, names=names, team_games=teams)


def standings(agents: Sequence[AgentRating], records: Sequence[PairRecord], cfg: RatingsConfig, team_size: int,
              *, by: str = "elo", include_retired: bool = False,
              entrants: Sequence[str] | None = None, anchor: tuple[str, float] | None = None) -> Standings:
    """The ranked table of `team_size` (or, with `entrants`, of a tournament): see the module's
    docstring for who is listed, what is counted, the order and the `anchor` (NAME, ELO) of the
    MLE fit, which must be one of `agents` with counted games. `agents` come in listing order."""
    if by not in RANKINGS:
        raise LeagueError(f"Unknown ranking {by!r}; expected {', '.join(RANKINGS[:-1])} or {RANKINGS[-1]}.")
    totals: dict[str, list[int]] = {}  # name -> [wins, draws, losses, goals for, goals against, mixed games]
    for r in records:
        if r.agent == r.opponent:
            continue
        mixed = r.games if is_team(r.agent) or is_team(r.opponent) else 0
        for side, (w, d, l, gf, ga) in ((r.agent, (r.wins, r.draws, r.losses, r.goals_for, r.goals_against)),
                                        (r.opponent, (r.losses, r.draws, r.wins, r.goals_against, r.goals_for))):
            for name in members(side):
                t = totals.setdefault(name, [0, 0, 0, 0, 0, 0])
                for i, v in enumerate((w, d, l, gf, ga, mixed)):
                    t[i] += v
    if entrants is not None:
        entrants = member_names(entrants)  # a tournament of mixed teams lists their members
        by_name = {a.name: a for a in agents}
        missing = [n for n in entrants if n not in by_name]
        if missing:
            raise LeagueError(f"No agent named {missing[0]!r} among the league's agents.")
        listed = [by_name[n] for n in entrants]
    else:
        played = {name for name, t in totals.items() if t[0] + t[1] + t[2]}
        listed = [a for a in agents if ((a.team_size in (None, team_size) and a.plays_here) or a.name in played)
                  and (include_retired or a.status != "retired")]
    fit = fit_mle(records, cfg, names=[a.name for a in listed])
    if anchor is not None:
        fit = _reanchored(fit, anchor, agents, totals, "this tournament" if entrants is not None else
                          stage_of(team_size))
    rows = []
    for a in listed:
        w, d, l, gf, ga, mixed = totals.get(a.name, (0, 0, 0, 0, 0, 0))
        fitted = w + d + l > 0 or a.name == fit.anchor
        rows.append(Standing(rank=0, name=a.name, kind=a.kind, status=a.status, elo=a.elo, mu=a.mu, sigma=a.sigma,
                             wins=w, draws=d, losses=l, goals_for=gf, goals_against=ga,
                             mle=fit.rating(a.name), mle_interval=fit.interval(a.name) if fitted else None,
                             last_played=a.last_played, mixed=mixed))
    rows.sort(key=lambda row: sort_key(row, by))  # stable: the listing order breaks the remaining ties
    ranked = tuple(replace(row, rank=i) for i, row in enumerate(rows, 1))
    return Standings(rows=ranked, fit=fit, by=by)


def _reanchored(fit: MleRatings, anchor: tuple[str, float], agents: Sequence[AgentRating],
                totals: dict[str, list[int]], where: str) -> MleRatings:
    """`fit` pinned on the anchor, which must be a known agent with counted games `where`."""
    name, rating = anchor
    if name not in {a.name for a in agents}:
        raise unknown_name("agent", name, [a.name for a in agents])
    if sum(totals.get(name, (0, 0, 0))[:3]) == 0:
        raise LeagueError(f"The MLE cannot be anchored on {name!r}: it has no rated games in {where}.")
    return reanchor(fit, name, rating)


def sort_key(row: Standing, by: str) -> tuple:
    """Ascending key for best-first order by `by` (see the module's docstring)."""
    value = {"elo": row.elo, "trueskill": row.ts, "points": row.points,
             "mle": row.mle if row.mle_interval is not None else None}[by]
    tie = row.gd if by == "points" else row.games
    return (value is None, -(value or 0.0), -tie)


# --------------------------------------------------------------------------- reading the league database


def read_agent_ratings(db: sqlite_utils.Database, team_size: int, cfg: RatingsConfig) -> list[AgentRating]:
    """Every agent in creation order, with its ratings in `team_size` (initial ones if it has not played)."""
    rows = db.query("""
        SELECT a.name, a.kind, a.status, a.team_size, a.config_json,
               COALESCE(r.elo, :elo) AS elo, COALESCE(r.mu, :mu) AS mu, COALESCE(r.sigma, :sigma) AS sigma,
               r.last_played
        FROM agents a LEFT JOIN ratings r ON r.agent_id = a.id AND r.team_size = :ts
        ORDER BY a.id""", {"elo": cfg.elo.initial, "mu": cfg.trueskill.mu, "sigma": cfg.trueskill.sigma,
                           "ts": team_size})
    out = []
    for row in rows:
        text = row.pop("config_json")
        config = json.loads(text or "null") if row["kind"] == "community" else None
        out.append(AgentRating(**row, plays_here=plays(row["kind"], row["team_size"], config, team_size)))
    return out


def read_pair_records(db: sqlite_utils.Database, team_size: int, tournament_id: int | None = None) -> list[PairRecord]:
    """One record per (blue, orange) pair of the team size's games (or one tournament's), mirror matches left out;
    a mixed game's sides are named by their members ("A+B", league.teams).

    Aggregated in SQLite, so a table costs the same one query for 200 games or 20,000 (mixed games are
    grouped by their teams here, from their game_members rows).
    """
    where, args = "g.team_size = :ts", {"ts": team_size}
    if tournament_id is not None:
        where += " AND g.tournament_id = :t"
        args["t"] = tournament_id
    teams = read_team_sides(db, f"{where} AND g.mixed = 1", args)
    single = f"{where} AND g.blue_agent_id != g.orange_agent_id" + (" AND g.mixed = 0" if teams else "")
    rows = db.query(f"""
        SELECT b.name AS agent, o.name AS opponent, SUM(g.result = 'blue') AS wins, SUM(g.result = 'draw') AS draws,
               SUM(g.result = 'orange') AS losses, SUM(g.blue_goals) AS goals_for, SUM(g.orange_goals) AS goals_against
        FROM games g JOIN agents b ON b.id = g.blue_agent_id JOIN agents o ON o.id = g.orange_agent_id
        WHERE {single} GROUP BY g.blue_agent_id, g.orange_agent_id""", args)
    records = [PairRecord(**row) for row in rows]
    if teams:
        mixed: dict[tuple[str, str], list[int]] = {}
        for row in db.query(f"""SELECT g.id, g.result, g.blue_goals, g.orange_goals FROM games g
                                WHERE {where} AND g.mixed = 1""", args):
            t = mixed.setdefault((teams[row["id"], "blue"], teams[row["id"], "orange"]), [0, 0, 0, 0, 0])
            t[("blue", "draw", "orange").index(row["result"])] += 1
            t[3] += row["blue_goals"]
            t[4] += row["orange_goals"]
        records += [PairRecord(a, b, *t) for (a, b), t in mixed.items()]
    return records


def read_matchups(db: sqlite_utils.Database, team_size: int, tournament_id: int) -> dict[tuple[str, str], Record]:
    """Each side's record against each other side in one tournament: (a, b) -> a's record against b, both ways
    (a's games against b from either colour), mirror matches left out."""
    return _matchups(read_pair_records(db, team_size, tournament_id))


def _matchups(records: list[PairRecord]) -> dict[tuple[str, str], Record]:
    out: dict[tuple[str, str], Record] = {}
    for r in records:
        for pair, record in (((r.agent, r.opponent), Record(r.wins, r.draws, r.losses)),
                             ((r.opponent, r.agent), Record(r.losses, r.draws, r.wins))):
            out[pair] = out.get(pair, Record(0, 0, 0)) + record
    return out


def read_title_pair_records(db: sqlite_utils.Database, tournament: Tournament) -> list[PairRecord]:
    """A tournament's pair records (read_pair_records); a title playoff's (arena.crown) with the games its entrants
    played each other in the round robin it follows, and in that one's, up the chain (a playoff of a playoff plays
    on too). A playoff plays on from its round robin, on the same clock and openings: it does not start over. Its
    100 games a pair alone put about 5 points of noise on each score, and in run wa's playoff they undid the round
    robin's pick (wa-v164) for one it beats by 69 Elo on fresh seeds; a playoff of a playoff read only its own
    games and the last round's, and so dropped the round robin's 40 games a pair."""
    records = read_pair_records(db, tournament.team_size, tournament.id)
    entrants, store = set(tournament.entrants), TournamentStore(Database(db))
    while tournament.playoff_of is not None:  # a playoff is opened after the round robin it follows: no cycle
        tournament = store.get(tournament.playoff_of)
        records += [r for r in read_pair_records(db, tournament.team_size, tournament.id)
                    if r.agent in entrants and r.opponent in entrants]
    return records


def read_title_matchups(db: sqlite_utils.Database, tournament: Tournament) -> dict[tuple[str, str], Record]:
    """A title round robin's records (read_matchups), a playoff's with its round robin's games between its entrants
    (read_title_pair_records): what the title is decided on."""
    return _matchups(read_title_pair_records(db, tournament))


def read_standings(db: sqlite_utils.Database, team_size: int, cfg: RatingsConfig, *, by: str = "elo",
                   include_retired: bool = False, anchor: tuple[str, float] | None = None) -> Standings:
    """The league's standings in one team size (the MLE fit pinned on `anchor`, (NAME, ELO), if given)."""
    return standings(read_agent_ratings(db, team_size, cfg), read_pair_records(db, team_size), cfg, team_size,
                     by=by, include_retired=include_retired, anchor=anchor)


def read_tournament_standings(db: sqlite_utils.Database, tournament_id: int, cfg: RatingsConfig) -> Standings:
    """One tournament's standings by points: its entrants and its games (Elo and TrueSkill: the league's)."""
    rows = list(db.query("SELECT team_size, entrants_json FROM tournaments WHERE id = ?", [row_id(tournament_id, "tournament")]))
    if not rows:
        raise LeagueError(f"No tournament with id {tournament_id}.")
    team_size = rows[0]["team_size"]
    return standings(read_agent_ratings(db, team_size, cfg), read_pair_records(db, team_size, tournament_id), cfg,
                     team_size, by="points", entrants=json.loads(rows[0]["entrants_json"]))
