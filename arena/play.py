"""The one play loop: games between policies on a game runner, one batched `act` per policy per step.

    drivers = [Driver(rule, rule_rows, None), Driver(net, net_rows, net.initial_state(len(net_rows)))]
    for info in play_steps(games, drivers, games.reset(seed=0), deterministic=True):
        ...                                   # keep what this contest needs; stop when it has it

Every contest plays through it: evaluation games and the learning benchmark
(arena.pairings.play_pairings: pairings on one runner that restarts finished games itself, the
results kept as games finish), and the scheduled games of tournaments and matches
(arena.tournament_play.GamePlayer: a round of games from their own seeds, each with its replay).
The loop only drives; what a caller keeps (results, replays, games recorded in the league) is its
own, and it ends the loop by no longer iterating.

Agents that read the game (community bots) get it from the runner (`games.game_state()`; the
runner must be built with GameSpec(game_state=True), which `needs_game_state` tells), and those
speaking raw controls have their rows played from them.

A random bot is replayable when the loop is given each game's seed: it then draws
`counter_actions` of (game seed, step, car) instead of its own generator, so a game's moves do
not depend on the games that share its batch (a resumed tournament reproduces an uninterrupted
one). Without them it samples from its own seeded generator, as evaluation always has.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from agents.actions import N_ACTIONS
from agents.baselines import RandomPolicy
from agents.policy import Policy, State
from arena.engine.vector import StepInfo, VecGame


@dataclass(slots=True)
class Driver:
    """A policy, the runner rows (cars) it drives, and its recurrent state over them."""

    policy: Policy
    rows: np.ndarray
    state: State


def counter_actions(game_seeds: np.ndarray, step: int, cars: np.ndarray) -> np.ndarray:
    """Uniform actions from (game seed, step, car) alone: splitmix64 over uint64 counters."""
    with np.errstate(over="ignore"):
        x = (game_seeds.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             + np.uint64(step) * np.uint64(0xBF58476D1CE4E5B9) + cars.astype(np.uint64) * np.uint64(0x94D049BB133111EB))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x % np.uint64(N_ACTIONS)).astype(np.int64)


def play_steps(games: VecGame, drivers: Sequence[Driver], obs: np.ndarray, *, deterministic: bool,
               game_seeds: np.ndarray | None = None) -> Iterator[StepInfo]:
    """Step `games` from `obs` (as its reset returned them) for as long as the caller iterates:
    each step one batched `act` per driver over its rows, then one step of the runner, whose info
    is yielded. `deterministic` goes to every `act`. `game_seeds` (one per arena): the random bot
    draws `counter_actions` keyed by its game's seed, the step (from 0) and the car."""
    starts = games.info.episode_start.copy()
    actions = np.zeros(games.num_agents, dtype=np.int64)
    speaking = [d for d in drivers if d.policy.speaks_controls]  # community bots: raw controls, not indices
    controls = np.zeros((games.num_agents, 8), dtype=np.float32) if speaking else None
    use_controls = np.zeros(games.num_agents, dtype=bool)
    for d in speaking:
        use_controls[d.rows] = True
    if game_seeds is not None:
        row_seeds = np.asarray(game_seeds)[games.env_of_row]
        row_cars = np.arange(games.num_agents) - games.env_of_row * games.agents_per_env
    t = 0
    while True:
        for d in drivers:
            if game_seeds is not None and isinstance(d.policy, RandomPolicy):
                actions[d.rows] = counter_actions(row_seeds[d.rows], t, row_cars[d.rows])
                continue
            if d.policy.reads_game:
                out, d.state = d.policy.act_game(games.game_state(), d.rows, d.state, starts[d.rows], deterministic)
            else:
                out, d.state = d.policy.act(obs[d.rows], d.state, starts[d.rows], deterministic)
            if d.policy.speaks_controls:
                controls[d.rows] = out
            else:
                actions[d.rows] = out
        obs, _, _, _, info = games.step(actions, controls, use_controls if speaking else None)
        starts = info.episode_start.copy()
        t += 1
        yield info


def needs_game_state(policies) -> bool:
    """Whether any of these policies reads the game state (its runner must publish it)."""
    return any(p.reads_game for p in policies)
