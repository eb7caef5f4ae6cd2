"""Evaluation matches: timed games between two policies, many at once on the game runner.

    results = play_matches(rule, random, n_games=40, team_size=1, seed=0, game_seconds=60)
    wins = sum(r.blue_goals > r.orange_goals for r in results)

`blue` drives every blue car and `orange` every orange car (alternate sides by swapping the
arguments). Each step is one batched `act` call per policy over all its rows, picked once with
index arrays. Every game lasts `game_seconds` of game clock (a tie then is a draw), so all the
games of a round end on the same step. Given the seed (policies are seeded from it), the results
are reproducible.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from agents.policy import Policy
from arena.game import GameSpec
from arena.vector import VecGame, default_workers

MAX_ENVS_PER_WORKER = 64


class MatchResult(NamedTuple):
    blue_goals: int
    orange_goals: int
    length_seconds: float


def match_layout(n_games: int, workers: int | None, envs_per_worker: int | None) -> tuple[int, int]:
    """(workers, arenas per worker) playing `n_games` in as few equal rounds as fit, wasting few arenas."""
    workers = max(1, min(workers or default_workers(), n_games))
    if envs_per_worker is None:
        capacity = workers * MAX_ENVS_PER_WORKER
        rounds = math.ceil(n_games / capacity)
        envs_per_worker = math.ceil(math.ceil(n_games / rounds) / workers)
    return workers, envs_per_worker


def play_matches(
    blue: Policy,
    orange: Policy,
    n_games: int,
    team_size: int = 1,
    seed: int = 0,
    game_seconds: float = 300.0,
    *,
    tick_skip: int = 8,
    workers: int | None = None,
    envs_per_worker: int | None = None,
    backend: str = "multiprocessing",
    deterministic: bool = False,
) -> list[MatchResult]:
    """Play `n_games` timed games of `team_size` v `team_size`; results in the order games finished.

    `deterministic` is passed to both policies' `act` (argmax instead of sampling).
    """
    if n_games < 1:
        raise ValueError(f"n_games must be at least 1, got {n_games}")
    workers, envs_per_worker = match_layout(n_games, workers, envs_per_worker)
    spec = GameSpec(team_size=team_size, tick_skip=tick_skip, mode="timed", game_seconds=float(game_seconds))
    blue.seed(seed)
    orange.seed(seed + 1)
    results: list[MatchResult] = []
    with VecGame(spec, workers=workers, envs_per_worker=envs_per_worker, backend=backend, seed=seed) as games:
        obs = games.reset(seed=seed)
        blue_rows = np.flatnonzero(games.teams == 0)
        orange_rows = np.flatnonzero(games.teams == 1)
        blue_state = blue.initial_state(len(blue_rows))
        orange_state = orange.initial_state(len(orange_rows))
        starts = games.info.episode_start.copy()
        actions = np.zeros(games.num_agents, dtype=np.int64)
        while len(results) < n_games:
            actions[blue_rows], blue_state = blue.act(obs[blue_rows], blue_state, starts[blue_rows], deterministic)
            actions[orange_rows], orange_state = orange.act(
                obs[orange_rows], orange_state, starts[orange_rows], deterministic)
            obs, _, _, _, info = games.step(actions)
            starts = info.episode_start.copy()
            if info.done.any():
                finished = np.flatnonzero(info.done)
                score = info.episode_score[finished].tolist()
                length = info.episode_seconds[finished].tolist()
                results.extend(MatchResult(b, o, float(s)) for (b, o), s in zip(score, length))
    return results[:n_games]
