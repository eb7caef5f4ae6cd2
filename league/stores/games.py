"""Games and ratings: each finished game, the Elo and TrueSkill updates it made, their history.

A rating is stored only if it is finite and in the stored range (league.ratings.rating_problem); a
game whose update would break that is not recorded. A home whose stored ratings are already out of
range (written by an older rl-league) is told to rebuild them from the games (`rebuild`, the command
`league ratings rebuild`), which replays every recorded game in order with the home's config.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from league import ratings as rating_math
from league.config import RatingsConfig
from league.errors import LeagueError
from league.schema import RESULTS
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, row_id, utc_now
from league.teams import cars, check_apart, is_team, member_names, members


@dataclass(frozen=True)
class GameRecord:
    """One finished game, as a runner reports it. A side is one agent playing every car, or in 2v2 and
    3v3 a mixed team of members joined by "+" (league.teams: `ppo-2v2-v4+necto`)."""

    blue: str
    orange: str
    team_size: int
    seed: int
    blue_goals: int
    orange_goals: int
    length_seconds: float
    origin: str = "manual"
    tournament_id: int | None = None
    schedule_index: int | None = None
    replay_path: str | None = None

    @property
    def result(self) -> str:
        if self.blue_goals > self.orange_goals:
            return "blue"
        return "orange" if self.orange_goals > self.blue_goals else "draw"


@dataclass(frozen=True)
class Game:
    """One recorded game, as stored, with its sides' names (`blue`, `orange`): an agent's name, or for
    a mixed team its members joined by "+" in car-slot order (league.teams). A mixed game's
    blue_agent_id and orange_agent_id are its sides' first members."""

    id: int
    origin: str
    tournament_id: int | None
    schedule_index: int | None
    team_size: int
    blue_agent_id: int
    orange_agent_id: int
    seed: int
    blue_goals: int
    orange_goals: int
    result: str
    length_seconds: float
    replay_path: str | None
    played: str
    blue: str
    orange: str
    mixed: int = 0  # 1: a side is a team of several members (game_members lists every car)


@dataclass(frozen=True)
class RatingChange:
    """One agent's rating before and after one game (a rating_history row)."""

    id: int
    game_id: int
    agent_id: int
    team_size: int
    elo_before: float
    elo_after: float
    mu_before: float
    mu_after: float
    sigma_before: float
    sigma_after: float
    played: str


@dataclass(frozen=True)
class Rating:
    """An agent's ratings and record in one team size (the configured initial ones before its first game)."""

    agent_id: int
    team_size: int
    elo: float
    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    goals_for: int = 0
    goals_against: int = 0
    last_played: str | None = None


@dataclass(frozen=True)
class RatingsRebuilt:
    """What `GameStore.rebuild` did for one team size."""

    team_size: int
    games: int  # rated games replayed (mirror games are recorded but never rated)
    agents: int  # agents with ratings in the team size now


def rebuild_command(team_size: int) -> str:
    return f"league ratings rebuild --stage {team_size}v{team_size}"


def damaged_ratings(name: str, team_size: int, problem: str) -> LeagueError:
    """The one sentence for a stored rating that cannot be rated from, naming the command that repairs it."""
    return LeagueError(f"The stored {team_size}v{team_size} ratings of {name!r} are damaged ({problem}); rebuild "
                       f"every rating from the recorded games with `{rebuild_command(team_size)}`.")


class _Unratable(Exception):
    """A game whose rating update fails or would store an unusable rating; its text ends a sentence."""


class GameStore(Store):
    def __init__(self, database: Database, agents: AgentStore, ratings_cfg: RatingsConfig):
        super().__init__(database)
        self.agents, self.ratings_cfg = agents, ratings_cfg
        self._ts_env = rating_math.trueskill_env(ratings_cfg.trueskill)

    def _initial(self, agent_id: int, team_size: int) -> Rating:
        ts = self.ratings_cfg.trueskill
        return Rating(agent_id, team_size, self.ratings_cfg.elo.initial, ts.mu, ts.sigma)

    def _stored(self, agent_id: int, team_size: int) -> Rating | None:
        rows = list(self.db.query("SELECT * FROM ratings WHERE agent_id = ? AND team_size = ?", [agent_id, team_size]))
        return Rating(**rows[0]) if rows else None

    def _rating(self, agent_id: int, team_size: int) -> Rating:
        return self._stored(agent_id, team_size) or self._initial(agent_id, team_size)

    def _usable(self, name: str, agent_id: int, team_size: int) -> Rating:
        """The rating to rate a game from; a damaged stored one is one LeagueError naming the rebuild command."""
        stored = self._stored(agent_id, team_size)
        if stored is None:
            return self._initial(agent_id, team_size)
        problem = rating_math.rating_problem(stored.elo, stored.mu, stored.sigma)
        if problem:
            raise damaged_ratings(name, team_size, problem)
        return stored

    def check_usable(self, team_size: int, names: list[str] | tuple[str, ...]) -> None:
        """Refuse, before any game is played, agents whose stored ratings in `team_size` are damaged."""
        for name in member_names(names):  # a mixed team's members, each once
            self._usable(name, self.agents.get(name).id, team_size)

    def rating(self, name: str, team_size: int) -> Rating:
        """An agent's current rating in a team size (the initial one if it has not played)."""
        return self._rating(self.agents.get(name).id, team_size)

    def record(self, game: GameRecord) -> int:
        """Record a finished game and its rating updates in one transaction; returns the game id."""
        if game.result not in RESULTS:
            raise LeagueError(f"Bad game result {game.result!r}.")
        mixed = is_team(game.blue) or is_team(game.orange)
        if mixed:
            check_apart(game.blue, game.orange)
            for side in (game.blue, game.orange):
                if len(cars(side, game.team_size)) != game.team_size:
                    raise LeagueError(f"The team {side!r} does not fill the {game.team_size} cars of a "
                                      f"{game.team_size}v{game.team_size} side.")
        with self.transaction():
            ids = {name: self.agents.get(name).id for name in member_names((game.blue, game.orange))}
            blue_id, orange_id = ids[members(game.blue)[0]], ids[members(game.orange)[0]]
            played = utc_now()
            # `mixed` is named only when set: a single-agent game writes what it always wrote (its default is 0)
            cur = self.db.execute(
                f"""INSERT INTO games (origin, tournament_id, schedule_index, team_size, blue_agent_id,
                       orange_agent_id, seed, blue_goals, orange_goals, result, length_seconds, replay_path, played
                       {", mixed" if mixed else ""})
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?{", 1" if mixed else ""})""",
                [game.origin, game.tournament_id, game.schedule_index, game.team_size, blue_id, orange_id,
                 game.seed, game.blue_goals, game.orange_goals, game.result, game.length_seconds,
                 game.replay_path, played],
            )
            game_id = int(cur.lastrowid)
            if mixed:  # who drove each car; a single-agent side of a mixed game lists itself in every slot
                self.db["game_members"].insert_all(
                    {"game_id": game_id, "side": side, "slot": slot, "agent_id": ids[name]}
                    for side, text in (("blue", game.blue), ("orange", game.orange))
                    for slot, name in enumerate(cars(text, game.team_size)))
            if game.tournament_id is not None:
                self.db.execute("UPDATE tournaments SET finished_games = finished_games + 1 WHERE id = ?",
                                [game.tournament_id])
            if mixed or blue_id != orange_id:  # a mirror match says nothing about strength
                self._apply_ratings(game_id, game, ids, played)
        return game_id

    def _rate_sides(self, blue: list[tuple[float, float, float]], orange: list[tuple[float, float, float]],
                    score: float, team_size: int | None = None) -> tuple[list[tuple[float, float, float]], ...]:
        """(elo, mu, sigma) of every member of both sides after one game; `score` is blue's.

        Elo: every member moves by K (score - expected), the expectation taken between the sides' mean
        Elo (league.ratings.elo_update). TrueSkill: a game of two single agents is rated one player
        against one, as always; a mixed game (`team_size` given) one player per car, so both teams sum
        `team_size` performances: a single agent's side of a mixed game is its copies, whose equal
        updates are its own.
        """
        (elo_b, elo_o) = rating_math.elo_update([r[0] for r in blue], [r[0] for r in orange], score,
                                                self.ratings_cfg.elo)
        slots = [[0] * (team_size or 1) if len(side) == 1 else list(range(len(side))) for side in (blue, orange)]
        ts_b, ts_o = rating_math.trueskill_update(self._ts_env, [blue[i][1:] for i in slots[0]],
                                                  [orange[i][1:] for i in slots[1]], score)
        return tuple([(elo[i], *ts[car.index(i)]) for i in range(len(side))]
                     for side, elo, ts, car in ((blue, elo_b, ts_b, slots[0]), (orange, elo_o, ts_o, slots[1])))

    def _rated(self, game_id: int, team_size: int, sides: tuple[str, str], before: dict[str, Rating],
               goals: tuple[int, int], played: str) -> list[tuple[Rating, dict[str, Any]]]:
        """Every member's rating after a game (blue's, then orange's; `before` by name), each with its
        history row; _Unratable when the update fails (TrueSkill's math can, at extreme settings) or
        makes a rating unusable, so nothing is stored."""
        score = rating_math.score_from_goals(*goals)
        names = (members(sides[0]), members(sides[1]))
        mixed = is_team(sides[0]) or is_team(sides[1])
        try:
            after = self._rate_sides(*([(before[n].elo, before[n].mu, before[n].sigma) for n in side]
                                       for side in names), score, team_size if mixed else None)
        except (ArithmeticError, ValueError) as exc:
            raise _Unratable(f"its rating update failed ({type(exc).__name__}: {exc})") from None
        out = []
        for side, side_after, s, (gf, ga) in zip(names, after, (score, 1.0 - score), (goals, goals[::-1])):
            for name, (elo, mu, sigma) in zip(side, side_after):
                old = before[name]
                problem = rating_math.rating_problem(elo, mu, sigma)
                if problem:
                    raise _Unratable(f"it would make the ratings of {name!r} unusable ({problem})")
                new = dataclasses.replace(
                    old, elo=elo, mu=mu, sigma=sigma, games=old.games + 1, wins=old.wins + (s == 1.0),
                    draws=old.draws + (s == 0.5), losses=old.losses + (s == 0.0),
                    goals_for=old.goals_for + gf, goals_against=old.goals_against + ga, last_played=played)
                out.append((new, {
                    "game_id": game_id, "agent_id": old.agent_id, "team_size": team_size,
                    "elo_before": old.elo, "elo_after": elo, "mu_before": old.mu, "mu_after": mu,
                    "sigma_before": old.sigma, "sigma_after": sigma, "played": played,
                }))
        return out

    def _apply_ratings(self, game_id: int, game: GameRecord, ids: dict[str, int], played: str) -> None:
        before = {name: self._usable(name, agent_id, game.team_size) for name, agent_id in ids.items()}
        try:
            rated = self._rated(game_id, game.team_size, (game.blue, game.orange), before,
                                (game.blue_goals, game.orange_goals), played)
        except _Unratable as exc:
            raise LeagueError(f"The game between {game.blue!r} and {game.orange!r} was not recorded: {exc}; check "
                              "the ratings settings of the config (ratings.elo, ratings.trueskill).") from None
        for after, history in rated:
            self.db["ratings"].upsert(dataclasses.asdict(after), pk=("agent_id", "team_size"))
            self.db["rating_history"].insert(history)

    def rebuild(self, team_size: int) -> RatingsRebuilt:
        """Recompute every agent's Elo, TrueSkill and record in `team_size`, and the rating history, by
        replaying the recorded games in game order with this store's config; one transaction, so a
        failure changes nothing."""
        stage = f"{team_size}v{team_size}"
        with self.transaction():
            state: dict[str, Rating] = {}  # by agent name (a mixed game's sides name their members)
            history: list[dict[str, Any]] = []
            games = 0
            for g in self.games(team_size):
                if not g.mixed and g.blue_agent_id == g.orange_agent_id:  # a mirror game: recorded, never rated
                    continue
                before = {name: state.get(name) or self._initial(self.agents.get(name).id, team_size)
                          for name in member_names((g.blue, g.orange))}
                try:
                    rated = self._rated(g.id, team_size, (g.blue, g.orange), before,
                                        (g.blue_goals, g.orange_goals), g.played)
                except _Unratable as exc:
                    raise LeagueError(f"The {stage} ratings were not rebuilt (nothing was changed): game {g.id} "
                                      f"between {g.blue!r} and {g.orange!r}: {exc}.") from None
                for (after, row), name in zip(rated, member_names((g.blue, g.orange))):
                    state[name] = after
                    history.append(row)
                games += 1
            self.db.execute("DELETE FROM rating_history WHERE team_size = ?", [team_size])
            self.db.execute("DELETE FROM ratings WHERE team_size = ?", [team_size])
            if state:
                self.db["ratings"].insert_all([dataclasses.asdict(r) for r in state.values()])
                self.db["rating_history"].insert_all(history)
        return RatingsRebuilt(team_size, games, len(state))

    def games(self, team_size: int | None = None, tournament_id: int | None = None) -> list[Game]:
        """Games in recorded order, with their sides' names (a mixed team's members joined by "+")."""
        where, args = [], []
        if team_size is not None:
            where.append("g.team_size = ?")
            args.append(team_size)
        if tournament_id is not None:
            where.append("g.tournament_id = ?")
            args.append(tournament_id)
        sql = """SELECT g.*, b.name AS blue, o.name AS orange FROM games g
                 JOIN agents b ON b.id = g.blue_agent_id JOIN agents o ON o.id = g.orange_agent_id"""
        if where:
            sql += " WHERE " + " AND ".join(where)
        games = [Game(**r) for r in self.db.query(sql + " ORDER BY g.id", args)]
        if not any(g.mixed for g in games):
            return games
        sides = read_team_sides(self.db, " AND ".join(where) or "1", args)
        return [dataclasses.replace(g, blue=sides[g.id, "blue"], orange=sides[g.id, "orange"]) if g.mixed else g
                for g in games]

    def game(self, game_id: int) -> Game:
        """One recorded game with its sides' names (a mixed team's members joined by "+")."""
        rows = list(self.db.query("""SELECT g.*, b.name AS blue, o.name AS orange FROM games g
                                     JOIN agents b ON b.id = g.blue_agent_id JOIN agents o ON o.id = g.orange_agent_id
                                     WHERE g.id = ?""", [row_id(game_id, "game")]))
        if not rows:
            raise LeagueError(f"No game with id {game_id}.")
        game = Game(**rows[0])
        if not game.mixed:
            return game
        sides = read_team_sides(self.db, "g.id = ?", [game_id])
        return dataclasses.replace(game, blue=sides.get((game_id, "blue"), game.blue),
                                   orange=sides.get((game_id, "orange"), game.orange))

    def count(self) -> int:
        return int(next(self.db.query("SELECT COUNT(*) AS n FROM games"))["n"])

    def counts_by_team_size(self) -> dict[int, int]:
        """How many games each team size has (sizes without games are absent), smallest first."""
        return {int(r["team_size"]): int(r["n"]) for r in
                self.db.query("SELECT team_size, COUNT(*) AS n FROM games GROUP BY team_size ORDER BY team_size")}

    def ratings(self, agent_ids: Sequence[int] | None = None) -> list[Rating]:
        """The stored ratings (of every agent, or of those of `agent_ids`, in one query), by agent id then
        team size; an agent has one in each team size it has played."""
        ids = list(agent_ids) if agent_ids is not None else None
        where = f"WHERE agent_id IN ({', '.join('?' for _ in ids)})" if ids is not None else ""
        return [Rating(**r) for r in self.db.query(f"SELECT * FROM ratings {where} ORDER BY agent_id, team_size",
                                                   ids or [])]

    def rating_histories(self, names: Sequence[str], team_size: int) -> dict[str, list[RatingChange]]:
        """Each named agent's rating changes in `team_size`, oldest first, in one query (an unknown name,
        or one without rated games there, has none)."""
        found: dict[str, list[RatingChange]] = {name: [] for name in names}
        if not names:
            return found
        fields = ", ".join(f"h.{f.name}" for f in dataclasses.fields(RatingChange))
        rows = self.db.execute(f"""SELECT a.name, {fields} FROM rating_history h JOIN agents a ON a.id = h.agent_id
                                   WHERE h.team_size = ? AND a.name IN ({", ".join("?" for _ in names)})
                                   ORDER BY h.id""", [team_size, *names])
        for name, *row in rows:  # tuples in RatingChange's field order: long histories stay cheap
            found[name].append(RatingChange(*row))
        return found

    def rating_history(self, name: str, team_size: int | None = None) -> list[RatingChange]:
        agent = self.agents.get(name)
        sql = "SELECT * FROM rating_history WHERE agent_id = ?"
        args: list[Any] = [agent.id]
        if team_size is not None:
            sql += " AND team_size = ?"
            args.append(team_size)
        return [RatingChange(**r) for r in self.db.query(sql + " ORDER BY id", args)]


def read_team_sides(db, where: str = "1", args: list[Any] | dict[str, Any] | None = None) -> dict[tuple[int, str], str]:
    """(game id, side) -> the side's name ("A+B", or one agent's name) of every mixed game of `games g`
    matching `where`; empty on a database older than the game_members table (schema version 9)."""
    if "game_members" not in db.table_names():
        return {}
    cars_of: dict[tuple[int, str], list[str]] = {}
    for row in db.query(f"""SELECT m.game_id, m.side, a.name FROM game_members m JOIN games g ON g.id = m.game_id
                            JOIN agents a ON a.id = m.agent_id WHERE {where}
                            ORDER BY m.game_id, m.side, m.slot""", args or []):
        cars_of.setdefault((row["game_id"], row["side"]), []).append(row["name"])
    return {key: "+".join(dict.fromkeys(names)) for key, names in cars_of.items()}
