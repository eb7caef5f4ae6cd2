"""What pluggable game rules see inside the runner: one worker's arenas after a step, as arrays.

Rewards and done conditions are RLGym objects (RewardFunction, DoneCondition). The runner
calls them once per step for a whole batch of arenas through two extra methods:

    reset_batch(envs, start_states)        envs [K] int just (re)started; their RLGym start states
    is_done_batch(batch) -> [E] bool       (done conditions)
    get_rewards_batch(batch, terminated, truncated) -> [E, C] float32   (reward functions)

The built-in rules (arena.engine.rules, arena.engine.rewards) implement these with array operations. A plain
function `fn(batch, terminated, truncated) -> [E, C]` is a batched reward too. A plain
RLGym object without them still works: `as_batch_condition` / `as_batch_reward` wrap it in an
adapter that keeps one copy per arena and builds an RLGym GameState per arena per step, which is
correct but slow (a per-arena Python loop), so shaped rewards for training should be batched.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from rlgym.rocket_league.api import GameState


@dataclass
class StepBatch:
    """E arenas of one worker after a step, before any automatic reset (blue frame, car-id order)."""

    team_size: int
    tick_skip: int
    teams: np.ndarray  # [C] int8: 0 blue, 1 orange (the same in every arena)
    agent_ids: list[str]  # [C] RLGym agent ids in car order
    ball: np.ndarray  # [E, 9] agents.obs raw ball columns
    cars: np.ndarray  # [E, C, 18] agents.obs raw car columns
    pads: np.ndarray  # [E, 34] 1.0 = available
    goals: np.ndarray  # [E, 2] goals (blue, orange) scored during this step
    touches: np.ndarray  # [E, C] ticks each car touched the ball during this step
    score: np.ndarray  # [E, 2] game score (blue, orange) including this step's goals
    seconds_left: np.ndarray  # [E] game clock
    episode_seconds: np.ndarray  # [E] game time since the episode began
    seconds_since_touch: np.ndarray  # [E] game time since any car touched the ball
    game_states: Callable[[], list[GameState]]  # slow: each arena as an RLGym GameState

    @property
    def n_envs(self) -> int:
        return len(self.ball)


@runtime_checkable
class BatchDoneCondition(Protocol):
    def reset_batch(self, envs: np.ndarray, start_states: list[GameState]) -> None: ...

    def is_done_batch(self, batch: StepBatch) -> np.ndarray: ...


@runtime_checkable
class BatchRewardFunction(Protocol):
    def reset_batch(self, envs: np.ndarray, start_states: list[GameState]) -> None: ...

    def get_rewards_batch(self, batch: StepBatch, terminated: np.ndarray, truncated: np.ndarray) -> np.ndarray: ...


class _PerArena:
    """One deep copy of an RLGym object per arena, reset with that arena's start state."""

    def __init__(self, template: Any, agent_ids: list[str]):
        self.template = template
        self.agent_ids = agent_ids
        self.copies: dict[int, Any] = {}

    def reset_batch(self, envs: np.ndarray, start_states: list[GameState]) -> None:
        for env, state in zip(envs.tolist(), start_states):
            obj = self.copies.setdefault(env, copy.deepcopy(self.template))
            obj.reset(self.agent_ids, state, {})


class RLGymConditionAdapter(_PerArena):
    """Runs a plain RLGym DoneCondition per arena (slow path); an arena is done if any agent is."""

    def is_done_batch(self, batch: StepBatch) -> np.ndarray:
        states = batch.game_states()
        return np.array(
            [any(self.copies[env].is_done(self.agent_ids, state, {}).values()) for env, state in enumerate(states)],
            dtype=bool,
        )


class RLGymRewardAdapter(_PerArena):
    """Runs a plain RLGym RewardFunction per arena (slow path)."""

    def get_rewards_batch(self, batch: StepBatch, terminated: np.ndarray, truncated: np.ndarray) -> np.ndarray:
        states = batch.game_states()
        out = np.zeros((batch.n_envs, len(self.agent_ids)), dtype=np.float32)
        for env, state in enumerate(states):
            term = {a: bool(terminated[env]) for a in self.agent_ids}
            trunc = {a: bool(truncated[env]) for a in self.agent_ids}
            rewards = self.copies[env].get_rewards(self.agent_ids, state, term, trunc, {})
            out[env] = [rewards[a] for a in self.agent_ids]
        return out


def as_batch_condition(condition: Any, agent_ids: list[str]) -> BatchDoneCondition:
    """The condition itself when it is batched, else a per-arena adapter around it."""
    if hasattr(condition, "is_done_batch"):
        return condition
    if not hasattr(condition, "is_done"):
        raise TypeError(f"{condition!r} is neither an RLGym DoneCondition nor a batched condition")
    return RLGymConditionAdapter(condition, agent_ids)


class CallableReward:
    """A plain function `fn(batch, terminated, truncated) -> [E, C]` used as a batched reward."""

    def __init__(self, fn: Callable[[StepBatch, np.ndarray, np.ndarray], np.ndarray]):
        self.fn = fn

    def reset_batch(self, envs: np.ndarray, start_states: list[GameState]) -> None:
        pass

    def get_rewards_batch(self, batch: StepBatch, terminated: np.ndarray, truncated: np.ndarray) -> np.ndarray:
        return np.asarray(self.fn(batch, terminated, truncated), dtype=np.float32)


def as_batch_reward(reward_fn: Any, agent_ids: list[str]) -> BatchRewardFunction:
    """The reward itself when it is batched; a plain function or RLGym RewardFunction, wrapped."""
    if hasattr(reward_fn, "get_rewards_batch"):
        return reward_fn
    if hasattr(reward_fn, "get_rewards"):
        return RLGymRewardAdapter(reward_fn, agent_ids)
    if callable(reward_fn):
        return CallableReward(reward_fn)
    raise TypeError(f"{reward_fn!r} is neither a reward function nor an RLGym RewardFunction")
