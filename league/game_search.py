"""Finding recorded games: the filtered, newest-first listings the dashboard shows (a tournament's games,
an agent's latest, one agent against another, won or lost), who played in a set of games, and every
other agent's record against some agents (a community bot's page). Filtering and counting run in SQLite,
so a listing costs the same few queries for 200 games or 20,000.

An agent "played" a game when it drove any car of it: a mixed game's later members (game_members, schema
version 9) count too, on a home that has them; the record against an agent counts the games where it was
a side's first member (blue_agent_id, orange_agent_id), from the other side's view, mirror games left out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from league.results import Record
from league.stores.games import Game, read_team_sides

RESULTS = ("any", "win", "draw", "loss", "blue", "orange")  # `GameFilter.result`
_SIDE_NAMES = {"blue": "b.name", "orange": "o.name"}


def _game_fields(members: bool) -> str:
    """SQL: Game's fields in order (`mixed` 0 on a home older than schema version 9, which lacks the column)."""
    named = {**_SIDE_NAMES, **({} if members else {"mixed": "0"})}
    return ", ".join(named.get(f.name, f"g.{f.name}") for f in dataclasses.fields(Game))


@dataclass(frozen=True)
class GameFilter:
    """Which games to list. `result` is `any`, `blue`, `orange` or `draw` for the game itself, or `win`,
    `loss` (and `draw`) seen from `agent`; `versus` (with `agent`) keeps the games where it drove a car
    of the other side; `no_mirror` leaves out the games an agent played against itself."""

    tournament_id: int | None = None
    outside_tournaments: bool = False  # games of no tournament (ignored with tournament_id)
    team_size: int | None = None
    agent: str | None = None  # an unknown name matches no game
    versus: str | None = None
    result: str = "any"
    with_replay: bool = False
    no_mirror: bool = False

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"unknown result filter {self.result!r}")


def has_members(db: sqlite_utils.Database) -> bool:
    """Whether the home records mixed teams' cars (game_members, schema version 9; readers never migrate)."""
    return "game_members" in db.table_names()


def _on_side(side: str, param: str, members: bool) -> str:
    """SQL: the agent of id :param drove a car of `side` in game g (a mixed game's later members included)."""
    first = f"g.{side}_agent_id = :{param}"
    if not members:
        return first
    return (f"({first} OR (g.mixed = 1 AND EXISTS (SELECT 1 FROM game_members m WHERE m.game_id = g.id "
            f"AND m.side = '{side}' AND m.agent_id = :{param})))")


def _agent_id(db: sqlite_utils.Database, name: str) -> int:
    rows = list(db.query("SELECT id FROM agents WHERE name = ?", [name]))
    return int(rows[0]["id"]) if rows else -1  # no agent has id -1: the filter matches nothing


def _where(db: sqlite_utils.Database, f: GameFilter, members: bool) -> tuple[list[str], dict[str, Any]]:
    where: list[str] = []
    params: dict[str, Any] = {}
    if f.tournament_id is not None:
        where.append("g.tournament_id = :t")
        params["t"] = f.tournament_id
    elif f.outside_tournaments:
        where.append("g.tournament_id IS NULL")
    if f.team_size is not None:
        where.append("g.team_size = :ts")
        params["ts"] = f.team_size
    if f.agent:
        params["a"] = _agent_id(db, f.agent)
        blue, orange = _on_side("blue", "a", members), _on_side("orange", "a", members)
        if f.versus:
            params["v"] = _agent_id(db, f.versus)
            where.append(f"(({blue} AND {_on_side('orange', 'v', members)}) OR "
                         f"({orange} AND {_on_side('blue', 'v', members)}))")
        else:
            where.append(f"({blue} OR {orange})")
        if f.result in ("win", "loss"):
            good, bad = ("blue", "orange") if f.result == "win" else ("orange", "blue")
            where.append(f"(({blue} AND g.result = '{good}') OR ({orange} AND g.result = '{bad}'))")
    if f.result in ("blue", "orange", "draw"):
        where.append("g.result = :r")
        params["r"] = f.result
    if f.with_replay:
        where.append("g.replay_path IS NOT NULL")
    if f.no_mirror:
        where.append("g.blue_agent_id != g.orange_agent_id")
    return where, params


def find_games(db: sqlite_utils.Database, f: GameFilter = GameFilter(), limit: int = 1000) -> list[Game]:
    """The newest `limit` games that `f` keeps, newest first; a mixed game's sides are its whole teams
    ("A+necto", as league.stores.games names them), read in one more query."""
    members = has_members(db)
    where, params = _where(db, f, members)
    sql = f"""SELECT {_game_fields(members)}
              FROM games g JOIN agents b ON b.id = g.blue_agent_id JOIN agents o ON o.id = g.orange_agent_id"""
    if where:
        sql += " WHERE " + " AND ".join(where)
    # rows as tuples in Game's field order: a listing of 1000 games costs what one read_sql would
    games = [Game(*r) for r in db.execute(sql + " ORDER BY g.id DESC LIMIT :limit", {**params, "limit": limit})]
    mixed = [g.id for g in games if g.mixed]
    if not mixed:
        return games
    sides = read_team_sides(db, f"g.id IN ({', '.join('?' for _ in mixed)})", mixed)
    return [dataclasses.replace(g, blue=sides.get((g.id, "blue"), g.blue), orange=sides.get((g.id, "orange"), g.orange))
            if g.mixed else g for g in games]


def players(db: sqlite_utils.Database, tournament_id: int | None = None, outside_tournaments: bool = False) -> list[str]:
    """Names of the agents that drove a car in a tournament's games (or the games of no tournament, or all
    games), every member of a mixed team included, by name."""
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


@dataclass(frozen=True, kw_only=True)
class RecordAgainst(Record):
    """What `agent` did against `against` in the games of one team size (the agent's view): its record
    (league.results) and goals."""

    against: str
    agent: str
    kind: str  # the agent's kind, status and steps trained now
    status: str
    steps: int
    team_size: int
    goals_for: int
    goals_against: int
    first_game: int  # game ids
    last_game: int


def records_against(db: sqlite_utils.Database, names: Sequence[str]) -> list[RecordAgainst]:
    """Every other agent's record against each agent named, one per (named agent, other agent, team size),
    in one query, ordered by the named agent's id, the other's id and the team size; unknown names have none."""
    if not names:
        return []
    marks = ", ".join("?" for _ in names)
    ids = f"(SELECT id FROM agents WHERE name IN ({marks}))"
    rows = db.query(f"""
        WITH sides AS (
            SELECT g.blue_agent_id AS against, g.orange_agent_id AS a, g.team_size,
                   CASE g.result WHEN 'orange' THEN 1 WHEN 'draw' THEN 0 ELSE -1 END AS r,
                   g.orange_goals AS gf, g.blue_goals AS ga, g.id AS game_id
            FROM games g WHERE g.blue_agent_id IN {ids} AND g.orange_agent_id != g.blue_agent_id
            UNION ALL
            SELECT g.orange_agent_id, g.blue_agent_id, g.team_size,
                   CASE g.result WHEN 'blue' THEN 1 WHEN 'draw' THEN 0 ELSE -1 END,
                   g.blue_goals, g.orange_goals, g.id
            FROM games g WHERE g.orange_agent_id IN {ids} AND g.blue_agent_id != g.orange_agent_id)
        SELECT t.name AS against, a.name AS agent, a.kind, a.status, a.steps_trained AS steps, sides.team_size,
               SUM(r = 1) AS wins, SUM(r = 0) AS draws, SUM(r = -1) AS losses,
               SUM(gf) AS goals_for, SUM(ga) AS goals_against, MIN(game_id) AS first_game, MAX(game_id) AS last_game
        FROM sides JOIN agents a ON a.id = sides.a JOIN agents t ON t.id = sides.against
        GROUP BY sides.against, sides.a, sides.team_size
        ORDER BY sides.against, sides.a, sides.team_size""", [*names, *names])
    return [RecordAgainst(**r) for r in rows]
