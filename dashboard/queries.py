"""The dashboard's data access: read-only SQL over the league database, returning DataFrames.

No Streamlit here (the pages cache these results; tests call them directly). Aggregation runs in
SQLite with GROUP BY, so a page costs the same few queries whether the league has 200 games or
20,000. Table and column meanings: docs/schema.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import networkx as nx
import pandas as pd
import sqlite_utils

from league.climb import climb
from league.config import RatingsConfig
from league.lineage import build_lineage
from league.ratings import MleRatings, conservative
from league.registry import BASELINES, Agent
from league.sprt import Z95, elo_estimate
from league.standings import read_pair_records, read_standings, read_tournament_standings
from league.stores.games import read_team_sides
from league.teams import is_team
from league.teams import members as team_members


def _frame(db: sqlite_utils.Database, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
    return pd.read_sql_query(sql, db.conn, params=params)


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


# --------------------------------------------------------------------------- the league as a whole


def summary(db: sqlite_utils.Database) -> dict[str, int]:
    """Counts of agents, games and tournaments."""
    row = next(db.query("""SELECT (SELECT COUNT(*) FROM agents) AS agents, (SELECT COUNT(*) FROM games) AS games,
                                  (SELECT COUNT(*) FROM tournaments) AS tournaments"""))
    return dict(row)


def team_sizes(db: sqlite_utils.Database) -> list[int]:
    """Team sizes that have games or stage agents, smallest first (1 when there are none)."""
    rows = db.query("""SELECT team_size FROM games GROUP BY team_size
                       UNION SELECT team_size FROM agents WHERE team_size IS NOT NULL GROUP BY team_size""")
    sizes = sorted({int(r["team_size"]) for r in rows})
    return sizes or [1]


def games_by_team_size(db: sqlite_utils.Database) -> dict[int, int]:
    return {int(r["team_size"]): int(r["n"]) for r in
            db.query("SELECT team_size, COUNT(*) AS n FROM games GROUP BY team_size")}


# --------------------------------------------------------------------------- leaderboard


def leaderboard(db: sqlite_utils.Database, team_size: int, cfg: RatingsConfig, include_retired: bool = False,
                by: str = "elo") -> pd.DataFrame:
    """The team size's standings (league.standings: who is listed, what is counted, the order), best first.

    Columns: rank, name, kind, status, elo, mu, sigma, ts (mu - 3 sigma), games, wins, draws,
    losses, goals_for, goals_against, gd, last_played, mle, mle_low, mle_high (the MLE rating and
    its 95% interval; NaN for agents with no game to fit).
    """
    rows = read_standings(db, team_size, cfg, by=by, include_retired=include_retired).rows
    nan = (math.nan, math.nan)
    return pd.DataFrame({
        "rank": [r.rank for r in rows], "name": [r.name for r in rows], "kind": [r.kind for r in rows],
        "status": [r.status for r in rows], "elo": [r.elo for r in rows], "mu": [r.mu for r in rows],
        "sigma": [r.sigma for r in rows], "ts": [r.ts for r in rows], "games": [r.games for r in rows],
        "wins": [r.wins for r in rows], "draws": [r.draws for r in rows], "losses": [r.losses for r in rows],
        "goals_for": [r.goals_for for r in rows], "goals_against": [r.goals_against for r in rows],
        "gd": [r.gd for r in rows], "last_played": [r.last_played for r in rows],
        "mle": [r.mle if r.mle_interval else math.nan for r in rows],
        "mle_low": [(r.mle_interval or nan)[0] for r in rows], "mle_high": [(r.mle_interval or nan)[1] for r in rows],
    })


def mle(db: sqlite_utils.Database, team_size: int, cfg: RatingsConfig) -> MleRatings:
    """The whole-history MLE fit of the team size (every agent that may be listed, retired ones included)."""
    return read_standings(db, team_size, cfg, include_retired=True).fit


# --------------------------------------------------------------------------- head-to-head and MLE


PAIR_COLUMNS = ["agent", "opponent", "games", "wins", "draws", "losses", "score", "goals_for", "goals_against",
                "mixed", "score_rate"]


def pair_results(db: sqlite_utils.Database, team_size: int) -> pd.DataFrame:
    """Results of every ordered pair of agents that met, from the standings' read model
    (league.standings.read_pair_records): agent, opponent, games, wins, draws, losses, score (wins +
    draws / 2), goals_for, goals_against, mixed (how many of the games were mixed), score_rate.

    A mixed game ("A+necto" against "B+C") counts for every pair of members on opposite sides (A
    against B, A against C, necto against B, ...), as the standings count it for every member; mirror
    matches are left out."""
    rows: dict[tuple[str, str], list[int]] = {}
    for r in read_pair_records(db, team_size):
        mixed = r.games if is_team(r.agent) or is_team(r.opponent) else 0
        for a in team_members(r.agent):
            for b in team_members(r.opponent):
                if a == b:
                    continue
                for key, values in (((a, b), (r.wins, r.draws, r.losses, r.goals_for, r.goals_against)),
                                    ((b, a), (r.losses, r.draws, r.wins, r.goals_against, r.goals_for))):
                    t = rows.setdefault(key, [0] * 6)
                    for i, v in enumerate((*values, mixed)):
                        t[i] += v
    frame = pd.DataFrame([(a, b, w + d + l, w, d, l, w + d / 2, gf, ga, m)
                          for (a, b), (w, d, l, gf, ga, m) in rows.items()], columns=PAIR_COLUMNS[:-1])
    frame["score_rate"] = frame["score"] / frame["games"]
    return frame


def score_matrix(pairs: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """The pair rows restricted to `names`, with every (agent, opponent) cell present (NaN if unplayed)."""
    grid = pd.MultiIndex.from_product([list(names), list(names)], names=["agent", "opponent"]).to_frame(index=False)
    grid = grid[grid["agent"] != grid["opponent"]]
    cells = grid.merge(pairs, on=["agent", "opponent"], how="left")
    cells["games"] = cells["games"].fillna(0).astype(int)
    return cells


# --------------------------------------------------------------------------- rating history


def rating_history(db: sqlite_utils.Database, names: Sequence[str], team_size: int) -> pd.DataFrame:
    """Each chosen agent's rating after every rated game: name, game_no, game_id, played, elo, mu,
    sigma, ts. game_no 0 is the rating before its first game."""
    if not names:
        return pd.DataFrame(columns=["name", "game_no", "game_id", "played", "elo", "mu", "sigma", "ts"])
    frame = _frame(db, f"""
        WITH h AS (
            SELECT rh.*, ROW_NUMBER() OVER (PARTITION BY rh.agent_id ORDER BY rh.id) AS game_no
            FROM rating_history rh
            WHERE rh.team_size = ? AND rh.agent_id IN (SELECT id FROM agents WHERE name IN ({_marks(names)})))
        SELECT a.name, 0 AS game_no, NULL AS game_id, h.played, h.elo_before AS elo, h.mu_before AS mu,
               h.sigma_before AS sigma
        FROM h JOIN agents a ON a.id = h.agent_id WHERE h.game_no = 1
        UNION ALL
        SELECT a.name, h.game_no, h.game_id, h.played, h.elo_after, h.mu_after, h.sigma_after
        FROM h JOIN agents a ON a.id = h.agent_id
        ORDER BY 1, 2""", [team_size, *names])
    frame["played"] = pd.to_datetime(frame["played"], utc=True, format="ISO8601")
    frame["ts"] = conservative(frame["mu"], frame["sigma"])
    return frame


# --------------------------------------------------------------------------- agents and lineage


def agents(db: sqlite_utils.Database) -> pd.DataFrame:
    """Every agent with its parent's name and, per agent, its best-known rating (own stage)."""
    return _frame(db, """
        SELECT a.id, a.name, a.kind, a.team_size, a.status, p.name AS parent, a.created, a.steps_trained,
               a.checkpoint_path, a.notes,
               r.elo, r.mu, r.sigma, COALESCE(r.games, 0) AS games
        FROM agents a LEFT JOIN agents p ON p.id = a.parent_id
        LEFT JOIN ratings r ON r.agent_id = a.id AND r.team_size = COALESCE(a.team_size, 1)
        ORDER BY a.id""")


def lineage_graph(db: sqlite_utils.Database) -> nx.DiGraph:
    """league.lineage's graph (parent -> child) of every agent, retired ones included."""
    return build_lineage([Agent(**row) for row in db.query("SELECT * FROM agents ORDER BY id")])


def tree_layout(graph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """(generation, row) per node: roots at generation 0, leaves on consecutive rows and each
    parent centred on its children, so every line of versions reads left to right."""
    pos: dict[str, tuple[float, float]] = {}
    next_row = [0.0]

    def place(node: str, depth: int) -> float:
        children = sorted(graph.successors(node), key=lambda n: graph.nodes[n].get("id", 0))
        if not children:
            row = next_row[0]
            next_row[0] += 1.0
        else:
            rows = [place(child, depth + 1) for child in children]
            row = (rows[0] + rows[-1]) / 2.0
        pos[node] = (float(depth), row)
        return row

    roots = sorted((n for n in graph.nodes if graph.in_degree(n) == 0), key=lambda n: graph.nodes[n].get("id", 0))
    for root in roots:
        place(root, 0)
    return pos


def agent_details(db: sqlite_utils.Database, name: str) -> dict[str, Any] | None:
    """One agent row plus its children's names and its ratings per team size."""
    rows = list(db.query("""SELECT a.*, p.name AS parent FROM agents a LEFT JOIN agents p ON p.id = a.parent_id
                            WHERE a.name = ?""", [name]))
    if not rows:
        return None
    row = rows[0]
    row["children"] = [r["name"] for r in db.query("SELECT name FROM agents WHERE parent_id = ? ORDER BY id",
                                                  [row["id"]])]
    row["ratings"] = list(db.query("SELECT * FROM ratings WHERE agent_id = ? ORDER BY team_size", [row["id"]]))
    return row


# --------------------------------------------------------------------------- tournaments


def tournaments(db: sqlite_utils.Database) -> pd.DataFrame:
    """Tournaments newest first with entrants count and progress (0..1)."""
    frame = _frame(db, """SELECT id, name, team_size, status, seed, games_per_pair, planned_games, finished_games,
                                 entrants_json, created, finished FROM tournaments ORDER BY id DESC""")
    frame["entrants"] = [len(json.loads(e)) for e in frame["entrants_json"]]
    frame["progress"] = (frame["finished_games"] / frame["planned_games"].where(frame["planned_games"] > 0)).fillna(0.0)
    return frame.drop(columns=["entrants_json"])


def tournament_standings(db: sqlite_utils.Database, tournament_id: int, cfg: RatingsConfig) -> pd.DataFrame:
    """Points table of one tournament (league.standings): agent, games, wins, draws, losses, points
    (win 1, draw 0.5), gd (goal difference), score_rate; every entrant, best first."""
    rows = read_tournament_standings(db, tournament_id, cfg).rows
    return pd.DataFrame({
        "agent": [r.name for r in rows], "games": [r.games for r in rows], "wins": [r.wins for r in rows],
        "draws": [r.draws for r in rows], "losses": [r.losses for r in rows], "points": [r.points for r in rows],
        "gd": [r.gd for r in rows], "score_rate": [r.score_rate for r in rows],
    })


# --------------------------------------------------------------------------- games and replays

RESULT_FILTERS = ("any", "win", "draw", "loss", "blue", "orange")


def has_members(db: sqlite_utils.Database) -> bool:
    """Whether the home records mixed teams' cars (game_members, schema version 9; the dashboard never migrates)."""
    return "game_members" in db.table_names()


def _on_side(side: str, param: str, members: bool) -> str:
    """SQL: the agent of id :param drove a car of `side` in game g (a mixed game's later members included)."""
    first = f"g.{side}_agent_id = :{param}"
    if not members:
        return first
    return (f"({first} OR (g.mixed = 1 AND EXISTS (SELECT 1 FROM game_members m WHERE m.game_id = g.id "
            f"AND m.side = '{side}' AND m.agent_id = :{param})))")


def with_teams(db: sqlite_utils.Database, frame: pd.DataFrame) -> pd.DataFrame:
    """`frame`'s blue and orange (games by id) named as the stores name a side: a mixed game's whole team,
    its members joined by "+" in car order (league.stores.games.read_team_sides), not its first members."""
    if frame.empty or not has_members(db):
        return frame
    ids = [int(i) for i in frame["id"]]
    sides = read_team_sides(db, f"g.mixed = 1 AND g.id IN ({_marks(ids)})", ids)
    if sides:
        frame = frame.copy()
        for side in ("blue", "orange"):
            frame[side] = [sides.get((int(i), side), name) for i, name in zip(frame["id"], frame[side])]
    return frame


def games(db: sqlite_utils.Database, tournament_id: int | None = None, outside_tournaments: bool = False,
          agent: str | None = None, result: str = "any", with_replay: bool = False,
          limit: int = 1000, versus: str | None = None, no_mirror: bool = False,
          team_size: int | None = None) -> pd.DataFrame:
    """Games newest first, filtered in SQL; a mixed game's sides are its whole teams ("A+necto", with_teams).

    `result` is `any`, `blue`, `orange` or `draw` for the game itself, or `win`, `loss` (and
    `draw`) seen from `agent`. `agent` keeps the games in which it drove any car (a mixed team's
    members included); `versus` (with `agent`) keeps those where it drove a car of the other side;
    `no_mirror` leaves out the games an agent played against itself.
    """
    if result not in RESULT_FILTERS:
        raise ValueError(f"unknown result filter {result!r}")
    members = has_members(db)
    where, params = [], {}
    if tournament_id is not None:
        where.append("g.tournament_id = :t")
        params["t"] = tournament_id
    elif outside_tournaments:
        where.append("g.tournament_id IS NULL")
    if team_size is not None:
        where.append("g.team_size = :ts")
        params["ts"] = team_size
    if agent:
        params["a"] = _agent_id(db, agent)
        blue, orange = _on_side("blue", "a", members), _on_side("orange", "a", members)
        if versus:
            params["v"] = _agent_id(db, versus)
            where.append(f"(({blue} AND {_on_side('orange', 'v', members)}) OR "
                         f"({orange} AND {_on_side('blue', 'v', members)}))")
        else:
            where.append(f"({blue} OR {orange})")
        if result in ("win", "loss"):
            good, bad = ("blue", "orange") if result == "win" else ("orange", "blue")
            where.append(f"(({blue} AND g.result = '{good}') OR ({orange} AND g.result = '{bad}'))")
    if result in ("blue", "orange", "draw"):
        where.append("g.result = :r")
        params["r"] = result
    if with_replay:
        where.append("g.replay_path IS NOT NULL")
    if no_mirror:
        where.append("g.blue_agent_id != g.orange_agent_id")
    sql = """SELECT g.id, g.tournament_id, g.schedule_index, g.origin, g.team_size, b.name AS blue, o.name AS orange,
                    g.blue_goals, g.orange_goals, g.result, g.length_seconds, g.seed, g.replay_path, g.played
             FROM games g JOIN agents b ON b.id = g.blue_agent_id JOIN agents o ON o.id = g.orange_agent_id"""
    if where:
        sql += " WHERE " + " AND ".join(where)
    params["limit"] = limit
    return with_teams(db, _frame(db, sql + " ORDER BY g.id DESC LIMIT :limit", params))


def games_listing(games: pd.DataFrame) -> pd.DataFrame:
    """Rows of `games` as the pages list them: game (a link to it on the Replays page), blue, score,
    orange (whole teams for a mixed game), origin, played (YYYY-MM-DD HH:MM)."""
    return pd.DataFrame({
        "game": [f"?page=replays&game={int(i)}" for i in games["id"]], "blue": games["blue"],
        "score": [f"{bg}-{og}" for bg, og in zip(games["blue_goals"], games["orange_goals"])],
        "orange": games["orange"], "origin": games["origin"],
        "played": [str(p)[:16].replace("T", " ") if p else "" for p in games["played"]]},
        columns=["game", "blue", "score", "orange", "origin", "played"])


def agents_in_games(db: sqlite_utils.Database, tournament_id: int | None = None,
                    outside_tournaments: bool = False) -> list[str]:
    """Names of the agents that played in the chosen set of games (every member of a mixed team)."""
    where = ("WHERE g.tournament_id = ?" if tournament_id is not None
             else "WHERE g.tournament_id IS NULL" if outside_tournaments else "")
    params = [tournament_id] if tournament_id is not None else []
    cars = (f" UNION SELECT m.agent_id FROM game_members m JOIN games g ON g.id = m.game_id {where}"
            if has_members(db) else "")
    rows = db.query(f"""SELECT a.name FROM agents a WHERE a.id IN (
                            SELECT blue_agent_id FROM games g {where} UNION SELECT orange_agent_id FROM games g {where}
                            {cars})
                        ORDER BY a.name""", params * (3 if cars else 2))
    return [r["name"] for r in rows]


def game(db: sqlite_utils.Database, game_id: int) -> dict[str, Any] | None:
    """One game's row with its sides' names (a mixed game's whole teams) and its tournament's name."""
    rows = list(db.query("""SELECT g.*, b.name AS blue, o.name AS orange, t.name AS tournament
                            FROM games g JOIN agents b ON b.id = g.blue_agent_id
                            JOIN agents o ON o.id = g.orange_agent_id
                            LEFT JOIN tournaments t ON t.id = g.tournament_id WHERE g.id = ?""", [game_id]))
    if not rows:
        return None
    row = rows[0]
    if row.get("mixed"):
        sides = read_team_sides(db, "g.id = ?", [game_id])
        row["blue"], row["orange"] = sides.get((game_id, "blue"), row["blue"]), sides.get((game_id, "orange"),
                                                                                          row["orange"])
    return row


# --------------------------------------------------------------------------- training runs against the baselines


def baseline_win_rates(db: sqlite_utils.Database, run: str, baselines: Sequence[str] = tuple(BASELINES)) -> pd.DataFrame:
    """league.climb.climb as a frame: how each version of run `run` (the agents named RUN-v1,
    RUN-v2, ...) did in its evaluation games against each baseline it played, one row per
    (version, baseline).

    Columns: version, k (the version number), steps (its steps_trained), baseline, games, wins,
    draws, losses, win_rate, draw_rate, score_rate (wins + draws / 2, as gates and ratings count
    them). Ordered by steps, then version, then baseline in the order of `baselines`. Tournament
    and manual games are left out: evaluation games are the ones training plays as it goes.
    """
    columns = ["version", "k", "steps", "baseline", "games", "wins", "draws", "losses", "win_rate", "draw_rate",
               "score_rate"]
    frame = pd.DataFrame([vars(p) for p in climb(db, run, baselines)], columns=columns[:8])
    frame["win_rate"] = frame["wins"] / frame["games"]
    frame["draw_rate"] = frame["draws"] / frame["games"]
    frame["score_rate"] = (frame["wins"] + frame["draws"] / 2) / frame["games"]
    return frame[columns]


# --------------------------------------------------------------------------- community bots


COMMUNITY_KIND = "community"  # the registry's kind of every community bot (`league bot add`)
RUN_VERSION = r"^(?P<run>.+)-v(?P<k>[0-9]+)$"  # a training run's versions are named RUN-v1, RUN-v2, ...


def _community_manifest(agent: Agent) -> dict[str, Any]:
    """The agent's {"community": {...}} config, {} when unreadable (the page still lists the bot)."""
    try:
        manifest = (agent.config or {}).get("community")
    except (TypeError, ValueError, AttributeError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def community_bots(db: sqlite_utils.Database) -> pd.DataFrame:
    """Every community bot in the league (agents of kind "community"), oldest first, with the
    league's record against it.

    Columns: name, bot (its title), kind (necto, element, ...), stages (e.g. "1v1, 2v2, 3v3"),
    licence, status, games (against other members), and the members' wins, draws, losses and
    win_rate in those games (NaN without games).
    """
    columns = ["name", "bot", "kind", "stages", "licence", "status", "games", "wins", "draws", "losses", "win_rate"]
    rows = []
    for row in db.query("SELECT * FROM agents WHERE kind = ? ORDER BY id", [COMMUNITY_KIND]):
        agent = Agent(**row)
        manifest = _community_manifest(agent)
        try:
            stages = agent.stage
        except (TypeError, ValueError, AttributeError):
            stages = "?"
        record = next(db.query(f"""
            WITH sides AS ({_sides_against_sql()})
            SELECT COUNT(*) AS games, COALESCE(SUM(r = 1), 0) AS wins, COALESCE(SUM(r = 0), 0) AS draws,
                   COALESCE(SUM(r = -1), 0) AS losses FROM sides""", {"bot": agent.id}))
        rows.append({"name": agent.name, "bot": str(manifest.get("title") or agent.name),
                     "kind": str(manifest.get("kind") or ""), "stages": stages,
                     "licence": str(manifest.get("licence") or ""), "status": agent.status, **record})
    frame = pd.DataFrame(rows, columns=columns[:-1])
    frame["win_rate"] = frame["wins"] / frame["games"].where(frame["games"] > 0)
    return frame


def _sides_against_sql() -> str:
    """Every game against the agent of id :bot, from the other side's view: a (its agent id),
    team_size, r (1 won, 0 drew, -1 lost), gf, ga, game_id. Games against itself are left out."""
    return """
        SELECT g.orange_agent_id AS a, g.team_size, CASE g.result WHEN 'orange' THEN 1 WHEN 'draw' THEN 0 ELSE -1 END AS r,
               g.orange_goals AS gf, g.blue_goals AS ga, g.id AS game_id
        FROM games g WHERE g.blue_agent_id = :bot AND g.orange_agent_id != :bot
        UNION ALL
        SELECT g.blue_agent_id, g.team_size, CASE g.result WHEN 'blue' THEN 1 WHEN 'draw' THEN 0 ELSE -1 END,
               g.blue_goals, g.orange_goals, g.id
        FROM games g WHERE g.orange_agent_id = :bot AND g.blue_agent_id != :bot"""


def rate_interval(wins: int, games: int) -> tuple[float, float]:
    """The 95% interval of a win rate: league.sprt.elo_estimate's mean score +- 1.96 standard
    errors over the games counted as won or not (a draw is not a win), clipped to [0, 1]. Where
    every game ended alike its widest spread is taken, so 3 wins in 3 games is not a certainty."""
    if games <= 0:
        return math.nan, math.nan
    estimate = elo_estimate([games - wins, 0, wins])
    half = Z95 * estimate.score_se
    return max(0.0, estimate.score - half), min(1.0, estimate.score + half)


def community_results(db: sqlite_utils.Database, bot: str) -> pd.DataFrame:
    """Every member that played the agent `bot`, one row per (member, team size), from the
    member's view: best win rate first, then most games, then name.

    Columns: agent, kind, status, team_size, steps (its steps_trained), run and k (RUN and N when
    it is named RUN-vN, else None and NaN), games, wins, draws, losses, goals_for, goals_against,
    win_rate (wins / games; a draw is not a win), win_low and win_high (its 95% interval,
    `rate_interval`), score_rate (wins + draws / 2), first_game and last_game (ids).
    """
    columns = ["agent", "kind", "status", "team_size", "steps", "run", "k", "games", "wins", "draws", "losses",
               "goals_for", "goals_against", "win_rate", "win_low", "win_high", "score_rate", "first_game",
               "last_game"]
    frame = _frame(db, f"""
        WITH sides AS ({_sides_against_sql()})
        SELECT a.name AS agent, a.kind, a.status, sides.team_size, a.steps_trained AS steps, COUNT(*) AS games,
               SUM(r = 1) AS wins, SUM(r = 0) AS draws, SUM(r = -1) AS losses, SUM(gf) AS goals_for,
               SUM(ga) AS goals_against, MIN(game_id) AS first_game, MAX(game_id) AS last_game
        FROM sides JOIN agents a ON a.id = sides.a
        GROUP BY sides.a, sides.team_size""", {"bot": _agent_id(db, bot)})
    if frame.empty:
        return pd.DataFrame(columns=columns)
    version = frame["agent"].str.extract(RUN_VERSION)
    frame["run"] = version["run"].where(version["run"].notna(), None)
    frame["k"] = pd.to_numeric(version["k"])
    frame["win_rate"] = frame["wins"] / frame["games"]
    bounds = [rate_interval(int(w), int(n)) for w, n in zip(frame["wins"], frame["games"])]
    frame["win_low"] = [lo for lo, _ in bounds]
    frame["win_high"] = [hi for _, hi in bounds]
    frame["score_rate"] = (frame["wins"] + frame["draws"] / 2) / frame["games"]
    frame = frame.sort_values(["win_rate", "games", "agent", "team_size"], ascending=[False, False, True, True],
                              kind="stable")
    return frame[columns].reset_index(drop=True)


def _agent_id(db: sqlite_utils.Database, name: str) -> int:
    rows = list(db.query("SELECT id FROM agents WHERE name = ?", [name]))
    return int(rows[0]["id"]) if rows else -1


def community_climb(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of `community_results` that are versions of a training run (RUN-vN), for the chart of
    each run against the bot over its steps: ordered by run, then steps, then version number."""
    versions = results[results["run"].notna()].copy()
    versions["k"] = versions["k"].astype(int)
    return versions.sort_values(["run", "steps", "k"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- curricula


def curricula(db: sqlite_utils.Database) -> pd.DataFrame:
    """Every curriculum, most recently updated first: name, status, stage_index (0-based, the stage
    in progress or last run), stages (how many), message, source, started, updated."""
    return _frame(db, """
        SELECT c.name, c.status, c.stage_index, (SELECT COUNT(*) FROM curriculum_stages s
                                                 WHERE s.curriculum = c.name) AS stages,
               c.message, c.source, c.started, c.updated
        FROM curricula c ORDER BY c.updated DESC, c.name""")


def curriculum_spec(db: sqlite_utils.Database, name: str) -> dict[str, Any] | None:
    """The curriculum as it was last run (its spec_json), {} if unreadable, None if there is no such curriculum."""
    rows = list(db.query("SELECT spec_json FROM curricula WHERE name = ?", [name]))
    if not rows:
        return None
    try:
        spec = json.loads(rows[0]["spec_json"])
    except (TypeError, ValueError):
        return {}
    return spec if isinstance(spec, dict) else {}


def curriculum_stages(db: sqlite_utils.Database, name: str) -> pd.DataFrame:
    """A curriculum's stages in order, with their start and final agents and the final agent's
    rating at the stage's team size.

    Columns: stage_index, name, team_size, run, status, steps (trained in the stage), start_steps,
    start_agent, final_agent, started, finished, final_elo, final_mu, final_sigma, final_games
    (NaN / 0 when the stage has no final agent or it has no rated game), checks, checks_passed.
    """
    return _frame(db, """
        SELECT s.stage_index, s.name, s.team_size, s.run, s.status, s.steps, s.start_steps,
               a.name AS start_agent, f.name AS final_agent, s.started, s.finished,
               r.elo AS final_elo, r.mu AS final_mu, r.sigma AS final_sigma, COALESCE(r.games, 0) AS final_games,
               (SELECT COUNT(*) FROM gate_checks g
                WHERE g.curriculum = s.curriculum AND g.stage_index = s.stage_index) AS checks,
               (SELECT COUNT(*) FROM gate_checks g
                WHERE g.curriculum = s.curriculum AND g.stage_index = s.stage_index AND g.passed) AS checks_passed
        FROM curriculum_stages s
        LEFT JOIN agents a ON a.id = s.start_agent_id LEFT JOIN agents f ON f.id = s.final_agent_id
        LEFT JOIN ratings r ON r.agent_id = s.final_agent_id AND r.team_size = s.team_size
        WHERE s.curriculum = ? ORDER BY s.stage_index""", [name])


def _criteria(text: str) -> list[dict[str, Any]]:
    """A gate check's criteria_json as a list of {name, passed, value, threshold, reason} ([] if unreadable)."""
    try:
        criteria = json.loads(text)
    except (TypeError, ValueError):
        return []
    if not isinstance(criteria, list):
        return []
    return [c for c in criteria if isinstance(c, dict)]


def gate_checks(db: sqlite_utils.Database, name: str) -> pd.DataFrame:
    """A curriculum's gate checks in the order they were made.

    Columns: id, stage_index, checked, agent, steps (the stage's steps at the check), passed
    (bool), criteria (the stored list of {name, passed, value, threshold, reason}), evidence (one
    line: every criterion's reason, failed ones first, as the curriculum's report says it).
    """
    frame = _frame(db, """
        SELECT g.id, g.stage_index, g.checked, a.name AS agent, g.steps, g.passed, g.criteria_json
        FROM gate_checks g JOIN agents a ON a.id = g.agent_id
        WHERE g.curriculum = ? ORDER BY g.id""", [name])
    frame["passed"] = frame["passed"].astype(bool)
    frame["criteria"] = [_criteria(text) for text in frame["criteria_json"]]
    frame["evidence"] = [gate_evidence(c) for c in frame["criteria"]]
    return frame.drop(columns=["criteria_json"])


def gate_evidence(criteria: Sequence[dict[str, Any]]) -> str:
    """One line for a gate check: each criterion's reason, failed ones first (the curriculum report's wording)."""
    if not criteria:
        return "no criteria: the step budget alone decides"
    ordered = sorted(criteria, key=lambda c: bool(c.get("passed")))
    return "; ".join(("ok: " if c.get("passed") else "FAILED: ") + str(c.get("reason", c.get("name", "?")))
                     for c in ordered)
