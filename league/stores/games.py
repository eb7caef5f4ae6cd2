"""Games and ratings: each finished game, the Elo and TrueSkill updates it made, their history."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from league import ratings as rating_math
from league.config import RatingsConfig
from league.errors import LeagueError
from league.schema import RESULTS
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, utc_now


@dataclass(frozen=True)
class GameRecord:
    """One finished game, as a runner reports it. A side is one agent (a team is its copies)."""

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


class GameStore(Store):
    def __init__(self, database: Database, agents: AgentStore, ratings_cfg: RatingsConfig):
        super().__init__(database)
        self.agents, self.ratings_cfg = agents, ratings_cfg
        self._ts_env = rating_math.trueskill_env(ratings_cfg.trueskill)

    def _rating(self, agent_id: int, team_size: int) -> Rating:
        rows = list(self.db.query("SELECT * FROM ratings WHERE agent_id = ? AND team_size = ?", [agent_id, team_size]))
        if rows:
            return Rating(**rows[0])
        ts = self.ratings_cfg.trueskill
        return Rating(agent_id, team_size, self.ratings_cfg.elo.initial, ts.mu, ts.sigma)

    def rating(self, name: str, team_size: int) -> Rating:
        """An agent's current rating in a team size (the initial one if it has not played)."""
        return self._rating(self.agents.get(name).id, team_size)

    def record(self, game: GameRecord) -> int:
        """Record a finished game and its rating updates in one transaction; returns the game id."""
        if game.result not in RESULTS:
            raise LeagueError(f"Bad game result {game.result!r}.")
        with self.transaction():
            blue, orange = self.agents.get(game.blue), self.agents.get(game.orange)
            played = utc_now()
            cur = self.db.execute(
                """INSERT INTO games (origin, tournament_id, schedule_index, team_size, blue_agent_id,
                       orange_agent_id, seed, blue_goals, orange_goals, result, length_seconds, replay_path, played)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [game.origin, game.tournament_id, game.schedule_index, game.team_size, blue.id, orange.id,
                 game.seed, game.blue_goals, game.orange_goals, game.result, game.length_seconds,
                 game.replay_path, played],
            )
            game_id = int(cur.lastrowid)
            if game.tournament_id is not None:
                self.db.execute("UPDATE tournaments SET finished_games = finished_games + 1 WHERE id = ?",
                                [game.tournament_id])
            if blue.id != orange.id:  # a mirror match says nothing about strength
                self._apply_ratings(game_id, game, blue.id, orange.id, played)
        return game_id

    def _rate_pair(self, blue: tuple[float, float, float], orange: tuple[float, float, float],
                   score: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """(elo, mu, sigma) of both sides after one game; `score` is blue's."""
        (elo_b,), (elo_o,) = rating_math.elo_update([blue[0]], [orange[0]], score, self.ratings_cfg.elo)
        (ts_b,), (ts_o,) = rating_math.trueskill_update(self._ts_env, [blue[1:]], [orange[1:]], score)
        return (elo_b, *ts_b), (elo_o, *ts_o)

    def _apply_ratings(self, game_id: int, game: GameRecord, blue_id: int, orange_id: int, played: str) -> None:
        before_b = self._rating(blue_id, game.team_size)
        before_o = self._rating(orange_id, game.team_size)
        score = rating_math.score_from_goals(game.blue_goals, game.orange_goals)
        after_b, after_o = self._rate_pair((before_b.elo, before_b.mu, before_b.sigma),
                                           (before_o.elo, before_o.mu, before_o.sigma), score)
        for before, (elo, mu, sigma), s, gf, ga in (
            (before_b, after_b, score, game.blue_goals, game.orange_goals),
            (before_o, after_o, 1.0 - score, game.orange_goals, game.blue_goals),
        ):
            after = dataclasses.replace(
                before, elo=elo, mu=mu, sigma=sigma, games=before.games + 1, wins=before.wins + (s == 1.0),
                draws=before.draws + (s == 0.5), losses=before.losses + (s == 0.0),
                goals_for=before.goals_for + gf, goals_against=before.goals_against + ga, last_played=played)
            self.db["ratings"].upsert(dataclasses.asdict(after), pk=("agent_id", "team_size"))
            self.db["rating_history"].insert({
                "game_id": game_id, "agent_id": before.agent_id, "team_size": game.team_size,
                "elo_before": before.elo, "elo_after": elo, "mu_before": before.mu, "mu_after": mu,
                "sigma_before": before.sigma, "sigma_after": sigma, "played": played,
            })

    def games(self, team_size: int | None = None, tournament_id: int | None = None) -> list[dict[str, Any]]:
        """Games in recorded order, with agent names."""
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
        return list(self.db.query(sql + " ORDER BY g.id", args))

    def rating_history(self, name: str, team_size: int | None = None) -> list[dict[str, Any]]:
        agent = self.agents.get(name)
        sql = "SELECT * FROM rating_history WHERE agent_id = ?"
        args: list[Any] = [agent.id]
        if team_size is not None:
            sql += " AND team_size = ?"
            args.append(team_size)
        return list(self.db.query(sql + " ORDER BY id", args))

    def recompute_ratings(self, team_size: int) -> dict[str, tuple[float, float, float]]:
        """(elo, mu, sigma) per agent name from replaying every recorded game in order.

        Used to check that the stored ratings lost or doubled no update.
        """
        cfg = self.ratings_cfg
        initial = (cfg.elo.initial, cfg.trueskill.mu, cfg.trueskill.sigma)
        state: dict[str, tuple[float, float, float]] = {}
        for g in self.games(team_size):
            if g["blue"] == g["orange"]:
                continue
            score = rating_math.score_from_goals(g["blue_goals"], g["orange_goals"])
            state[g["blue"]], state[g["orange"]] = self._rate_pair(
                state.get(g["blue"], initial), state.get(g["orange"], initial), score)
        return state
