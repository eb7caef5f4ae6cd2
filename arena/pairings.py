"""Evaluation matches: timed games between two policies, many at once on the game runner.

    results = play_matches(rule, random, n_games=40, team_size=1, seed=0, game_seconds=60)
    wins = sum(r.blue_goals > r.orange_goals for r in results)

`blue` drives every blue car and `orange` every orange car (alternate sides by swapping the
arguments). Each step is one batched `act` call per policy over all its rows, picked once with
index arrays. Every game lasts `game_seconds` of game clock (a tie then is a draw), so all the
games of a round end on the same step. Given the seed (policies are seeded from it), the results
are reproducible. Each game opens with its cars' kickoff spots moved by up to `opening_jitter` uu
(game.opening_jitter), so two greedy policies do not replay the same five lines.

`play_pairings` plays several pairings on one runner at once (evaluation against every baseline
in one go: one start-up of the game workers, full batches):

    results = play_pairings([Pairing(net, rule, 3), Pairing(rule, net, 3), Pairing(net, random, 3), ...])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from agents.policy import Policy
from arena.engine.cores import workers_or_default
from arena.engine.game import GameSpec
from arena.engine.placement import Placement
from arena.play import Driver, needs_game_state, play_steps
from arena.engine.vector import VecGame
from league.config import OPENING_JITTER

MAX_ENVS_PER_WORKER = 64


class Pairing(NamedTuple):
    """`games` games of `blue` (driving every blue car) against `orange`."""

    blue: Policy
    orange: Policy
    games: int


class MatchResult(NamedTuple):
    blue_goals: int
    orange_goals: int
    length_seconds: float


def match_layout(n_games: int, workers: int | None, envs_per_worker: int | None) -> tuple[int, int]:
    """(workers, arenas per worker) playing `n_games` in as few equal rounds as fit, wasting few arenas."""
    workers = max(1, min(workers_or_default(workers), n_games))
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
    placement: Placement | str = Placement.PROCESSES,
    deterministic: bool = False,
    opening_jitter: float = OPENING_JITTER,
) -> list[MatchResult]:
    """Play `n_games` timed games of `team_size` v `team_size`; results in the order games finished.

    `deterministic` is passed to both policies' `act` (argmax instead of sampling).
    """
    return play_pairings([Pairing(blue, orange, n_games)], team_size, seed, game_seconds, tick_skip=tick_skip,
                         workers=workers, envs_per_worker=envs_per_worker, placement=placement,
                         deterministic=deterministic, opening_jitter=opening_jitter)[0]


def play_pairings(
    pairings: Sequence[Pairing],
    team_size: int = 1,
    seed: int = 0,
    game_seconds: float = 300.0,
    *,
    tick_skip: int = 8,
    workers: int | None = None,
    envs_per_worker: int | None = None,
    placement: Placement | str = Placement.PROCESSES,
    deterministic: bool = False,
    on_game: Callable[[MatchResult], None] | None = None,
    opening_jitter: float = OPENING_JITTER,
) -> list[list[MatchResult]]:
    """Play every pairing's games on one runner, all at once: one result list per pairing (`on_game`: called
    with each game that counts as it ends).

    Arena e plays pairing `e % len(pairings)` for the whole run, so a pairing's games are spread
    over the workers; rounds repeat until each pairing has its games. There are at least as many
    arenas as pairings (more than a round's layout gives, when the pairings are many). Each distinct policy (a
    policy may play in several pairings, on either side) drives all its rows with one batched
    `act` per step (arena.play, the one play loop), seeded `seed + k` in order of first
    appearance (blue, then orange).
    """
    if not pairings:
        raise ValueError("play_pairings needs at least one pairing")
    if min(p.games for p in pairings) < 1:
        raise ValueError(f"n_games must be at least 1, got {min(p.games for p in pairings)}")
    n_pairs = len(pairings)
    # Enough arenas for every pairing's games in one round, or as few rounds as fit.
    workers, envs_per_worker = match_layout(len(pairings) * max(p.games for p in pairings), workers, envs_per_worker)
    # Every pairing its own arena at least: arena e plays pairing e % n_pairs, so with fewer arenas than pairings the
    # last pairings were never played and the loop never ended (run te's title screen: 132 pairings on 120 arenas,
    # 109,000 steps where each game is 900).
    envs_per_worker = max(envs_per_worker, math.ceil(n_pairs / workers))
    spec = GameSpec(team_size=team_size, tick_skip=tick_skip, mode="timed", game_seconds=float(game_seconds),
                    opening_jitter=float(opening_jitter),
                    game_state=needs_game_state([p for pairing in pairings for p in (pairing.blue, pairing.orange)]))
    results: list[list[MatchResult]] = [[] for _ in pairings]
    with VecGame(spec, workers=workers, envs_per_worker=envs_per_worker, placement=placement, seed=seed) as games:
        pair_of_env = np.arange(games.num_envs) % n_pairs
        pair_of_row = pair_of_env[games.env_of_row]
        drivers: dict[int, tuple[Policy, list[np.ndarray]]] = {}
        for k, pairing in enumerate(pairings):
            for team, policy in enumerate((pairing.blue, pairing.orange)):
                rows = np.flatnonzero((pair_of_row == k) & (games.teams == team))
                drivers.setdefault(id(policy), (policy, []))[1].append(rows)
        seated = []
        for k, (policy, parts) in enumerate(drivers.values()):
            policy.seed(seed + k)
            rows = np.sort(np.concatenate(parts))
            seated.append(Driver(policy, rows, policy.initial_state(len(rows))))
        for info in play_steps(games, seated, games.reset(seed=seed), deterministic=deterministic):
            for env in np.flatnonzero(info.done):
                (blue, orange), length = info.episode_score[env].tolist(), float(info.episode_seconds[env])
                result, pair = MatchResult(blue, orange, length), pair_of_env[env]
                if on_game is not None and len(results[pair]) < pairings[pair].games:
                    on_game(result)
                results[pair].append(result)
            if all(len(r) >= p.games for r, p in zip(results, pairings)):
                break
    return [r[:p.games] for r, p in zip(results, pairings)]
