"""Shaped rewards for training: RLGym RewardFunctions with the runner's batched form.

Each term implements `get_rewards_batch(batch, terminated, truncated)` over all arenas of a
worker at once ([E, C] float32, car-id order), and is an RLGym `RewardFunction` whose
`get_rewards` runs that same code on a batch of one arena built from the GameState, so it also
works, one env at a time, in a plain RLGym env (arena.engine.game.make_rlgym_env). The goal term is
the runner's own default reward, arena.engine.rewards.GoalReward. `WeightedSum` is the composite,
sharing its parts' interface as RLGym's CombinedReward does. `build_reward(cfg)` turns the
`rewards:` config section (configs/rewards.yaml) into one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from rlgym.api import RewardFunction
from rlgym.rocket_league.api import GameState

from agents.obs import (
    BALL_POS,
    BALL_VEL,
    CAR_ANG_VEL,
    CAR_BOOST,
    CAR_DEMOED,
    CAR_FWD,
    CAR_ON_GROUND,
    CAR_POS,
    CAR_RAW_DIM,
    CAR_UP,
    CAR_VEL,
)
from arena.engine.batch import BatchRewardFunction, StepBatch
from arena.engine.rewards import GoalReward
from league.game_values import BACK_WALL_Y, BALL_MAX_SPEED, CAR_MAX_SPEED, GOAL_CENTER_Z

SAVE_MIN_BALL_SPEED = 500.0  # uu/s towards our goal for a touch to count as a save
SAVE_ZONE_Y = 2500.0  # the ball must be this deep in our half


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-6)


def _team_sign(batch: StepBatch) -> np.ndarray:
    """+1 for blue (attacks +y), -1 for orange, per car [C]."""
    return np.where(batch.teams == 0, 1.0, -1.0)


def one_arena_batch(agents: list, state: GameState) -> StepBatch:
    """An RLGym GameState as a StepBatch of one arena, its cars in `agents` order.

    What a plain RLGym reward is handed has no clock: tick_skip, score and the seconds fields,
    which no term here reads, are zero.
    """
    cars = [state.cars[agent] for agent in agents]
    raw = np.zeros((1, len(cars), CAR_RAW_DIM), dtype=np.float32)
    for row, car in zip(raw[0], cars):  # agents.obs's raw car columns, blue frame, as the runner reads them
        physics = car.physics
        row[CAR_POS], row[CAR_FWD], row[CAR_UP] = physics.position, physics.forward, physics.up
        row[CAR_VEL], row[CAR_ANG_VEL] = physics.linear_velocity, physics.angular_velocity
        row[CAR_BOOST], row[CAR_ON_GROUND], row[CAR_DEMOED] = car.boost_amount, car.on_ground, car.is_demoed
    ball = state.ball
    goals = np.zeros((1, 2), dtype=np.int64)
    if state.goal_scored:
        goals[0, state.scoring_team] = 1
    return StepBatch(
        team_size=sum(car.team_num == 0 for car in cars), tick_skip=0,
        teams=np.array([car.team_num for car in cars], dtype=np.int8), agent_ids=list(agents),
        ball=np.concatenate([ball.position, ball.linear_velocity, ball.angular_velocity]).astype(np.float32)[None],
        cars=raw, pads=(np.asarray(state.boost_pad_timers) == 0).astype(np.float32)[None], goals=goals,
        touches=np.array([[car.ball_touches for car in cars]]), score=np.zeros((1, 2), dtype=np.int64),
        seconds_left=np.zeros(1, dtype=np.float32), episode_seconds=np.zeros(1, dtype=np.float32),
        seconds_since_touch=np.zeros(1), game_states=lambda: [state],
    )


class BatchedReward(RewardFunction):
    """Base of the terms: RLGym's per-agent methods run the batched ones on one arena; stateless by default."""

    def reset(self, agents, initial_state, shared_info) -> None:
        self.reset_batch(np.zeros(1, dtype=np.int64), [initial_state])

    def get_rewards(self, agents, state, is_terminated, is_truncated, shared_info) -> dict:
        """The batched form on a batch of one arena: the runner's numbers, computed one env at a time."""
        terminated = np.array([any(is_terminated.values())])
        truncated = np.array([any(is_truncated.values())])
        rewards = self.get_rewards_batch(one_arena_batch(agents, state), terminated, truncated)
        return dict(zip(agents, rewards[0].tolist()))

    def reset_batch(self, envs: np.ndarray, start_states: list) -> None:
        pass

    def get_rewards_batch(self, batch: StepBatch, terminated: np.ndarray, truncated: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class TouchTerm(BatchedReward):
    """1 when a car starts touching the ball. A run of touching steps counts once: paid every
    step, a touch reward teaches a learner to hug and push the ball instead of hitting it (a
    benchmark agent spent half of each game within 300 uu of the ball and scored less)."""

    def __init__(self):
        self.prev: np.ndarray | None = None  # [E, C] touching at the previous step

    def reset_batch(self, envs, start_states):
        if self.prev is not None:
            self.prev[envs] = False

    def get_rewards_batch(self, batch, terminated, truncated):
        touching = batch.touches > 0
        if self.prev is None or self.prev.shape != touching.shape:
            self.prev = np.zeros_like(touching)
        new = touching & ~self.prev
        self.prev = touching
        return new.astype(np.float32)


class HitTerm(BatchedReward):
    """On a step a car touched the ball: how much the ball's velocity changed, as a share of its
    top speed, so a strong hit pays more than a nudge."""

    def __init__(self):
        self.prev_vel: np.ndarray | None = None  # [E, 3] ball velocity at the previous step
        self.known: np.ndarray | None = None  # [E] whether prev_vel belongs to this episode

    def reset_batch(self, envs, start_states):
        if self.known is not None:
            self.known[envs] = False

    def get_rewards_batch(self, batch, terminated, truncated):
        vel = batch.ball[:, BALL_VEL].astype(np.float64)
        if self.prev_vel is None or self.prev_vel.shape != vel.shape:
            self.prev_vel, self.known = vel.copy(), np.zeros(len(vel), bool)
        change = np.where(self.known, np.linalg.norm(vel - self.prev_vel, axis=-1), 0.0) / BALL_MAX_SPEED
        self.prev_vel, self.known[:] = vel, True
        return ((batch.touches > 0) * change[:, None]).astype(np.float32)


class ShotTerm(HitTerm):
    """On a step a car touched the ball: how much the touch sped the ball up towards the opponent's
    goal, as a share of the ball's top speed. A hit that sends the ball towards the car's own goal
    costs as much as a shot pays, which `hit` (any change) does not tell apart."""

    def get_rewards_batch(self, batch, terminated, truncated):
        vel = batch.ball[:, BALL_VEL].astype(np.float64)
        if self.prev_vel is None or self.prev_vel.shape != vel.shape:
            self.prev_vel, self.known = vel.copy(), np.zeros(len(vel), bool)
        sign = _team_sign(batch)  # [C]
        goal = np.zeros((len(sign), 3))
        goal[:, 1], goal[:, 2] = sign * BACK_WALL_Y, GOAL_CENTER_Z
        to_goal = _unit(goal[None] - batch.ball[:, None, BALL_POS])  # [E, C, 3]
        change = np.sum((vel - self.prev_vel)[:, None, :] * to_goal, axis=-1) / BALL_MAX_SPEED  # [E, C]
        change = np.where(self.known[:, None], change, 0.0)
        self.prev_vel, self.known[:] = vel, True
        return ((batch.touches > 0) * change).astype(np.float32)


class VelocityPlayerToBall(BatchedReward):
    """Car velocity towards the ball, as a share of top speed (in [-1, 1])."""

    def get_rewards_batch(self, batch, terminated, truncated):
        to_ball = _unit(batch.ball[:, None, BALL_POS] - batch.cars[..., CAR_POS])
        return (np.sum(batch.cars[..., CAR_VEL] * to_ball, axis=-1) / CAR_MAX_SPEED).astype(np.float32)


class VelocityBallToGoal(BatchedReward):
    """Ball velocity towards the opponent's goal, as a share of the ball's top speed."""

    def get_rewards_batch(self, batch, terminated, truncated):
        sign = _team_sign(batch)  # [C]
        goal = np.zeros((len(sign), 3))
        goal[:, 1], goal[:, 2] = sign * BACK_WALL_Y, GOAL_CENTER_Z
        to_goal = _unit(goal[None] - batch.ball[:, None, BALL_POS])  # [E, C, 3]
        return (np.sum(batch.ball[:, None, BALL_VEL] * to_goal, axis=-1) / BALL_MAX_SPEED).astype(np.float32)


class FaceBall(BatchedReward):
    """Cosine between the car's nose and the direction to the ball."""

    def get_rewards_batch(self, batch, terminated, truncated):
        to_ball = _unit(batch.ball[:, None, BALL_POS] - batch.cars[..., CAR_POS])
        return np.sum(batch.cars[..., CAR_FWD] * to_ball, axis=-1).astype(np.float32)


class BoostTerm(BatchedReward):
    """sqrt(boost / 100): values holding some boost, with diminishing returns."""

    def get_rewards_batch(self, batch, terminated, truncated):
        return np.sqrt(np.clip(batch.cars[..., CAR_BOOST], 0, 100) / 100.0).astype(np.float32)


class DemoTerm(BatchedReward):
    """+1 to a team for each opponent newly demolished this step, -1 to a car that was."""

    def __init__(self):
        self.prev: np.ndarray | None = None

    def reset_batch(self, envs, start_states):
        if self.prev is not None:
            self.prev[envs] = False

    def get_rewards_batch(self, batch, terminated, truncated):
        demoed = batch.cars[..., CAR_DEMOED] > 0.5
        if self.prev is None or self.prev.shape != demoed.shape:
            self.prev = np.zeros_like(demoed)
        new = demoed & ~self.prev
        self.prev = demoed.copy()
        teams = batch.teams
        opp_new = np.stack([new[:, teams == 1].sum(1), new[:, teams == 0].sum(1)], axis=1)  # [E, 2] per team
        return (opp_new[:, teams.astype(np.int64)] - new).astype(np.float32)


class SaveTerm(BatchedReward):
    """1 for touching a ball that was heading fast into the toucher's own goal area."""

    def get_rewards_batch(self, batch, terminated, truncated):
        sign = _team_sign(batch)  # +1 blue: own goal at -y
        ball_vy = batch.ball[:, None, BALL_VEL.start + 1] * sign  # towards the opponent is positive
        ball_y = batch.ball[:, None, BALL_POS.start + 1] * sign
        dangerous = (ball_vy < -SAVE_MIN_BALL_SPEED) & (ball_y < -SAVE_ZONE_Y)
        return ((batch.touches > 0) & dangerous).astype(np.float32)


# The goal term is the runner's default reward (arena may not import training, so it lives there).
TERMS: dict[str, Callable[[], BatchRewardFunction]] = {
    "goal": GoalReward,
    "touch": TouchTerm,
    "hit": HitTerm,
    "shot": ShotTerm,
    "velocity_player_to_ball": VelocityPlayerToBall,
    "velocity_ball_to_goal": VelocityBallToGoal,
    "face_ball": FaceBall,
    "boost": BoostTerm,
    "demo": DemoTerm,
    "save": SaveTerm,
}


class WeightedSum(BatchedReward):
    """sum_i weight_i * term_i, computed per batch; with `team_spirit` t, each car's sum becomes
    (1 - t) * its own + t * its team's mean (the goal term, the same for teammates, is unchanged,
    so `rescale_shaping` still finds it)."""

    def __init__(self, terms: list[tuple[BatchRewardFunction, float]], team_spirit: float = 0.0):
        self.terms = terms
        self.team_spirit = team_spirit

    def reset_batch(self, envs, start_states):
        for term, _ in self.terms:
            term.reset_batch(envs, start_states)

    def get_rewards_batch(self, batch, terminated, truncated):
        total = np.zeros((batch.n_envs, len(batch.teams)), dtype=np.float32)
        for term, weight in self.terms:
            total += weight * term.get_rewards_batch(batch, terminated, truncated)
        if self.team_spirit and batch.team_size > 1:
            for team in (0, 1):
                cars = batch.teams == team
                mean = total[:, cars].mean(axis=1, keepdims=True)
                total[:, cars] = (1.0 - self.team_spirit) * total[:, cars] + self.team_spirit * mean
        return total


def build_reward(cfg: Any) -> WeightedSum:
    """The reward of a `rewards:` config section: sparse (goal only) or the weighted dense terms."""
    if cfg.mode == "sparse":
        return WeightedSum([(GoalReward(), cfg.weights.goal)])
    terms = [(TERMS[name](), float(weight)) for name, weight in vars(cfg.weights).items() if weight != 0]
    return WeightedSum(terms, cfg.team_spirit)


def shaping_scale(steps: int, anneal_steps: int, floor: float) -> float:
    """The share of the dense terms' weights after the network's `steps` of training: 1 falling
    linearly to `floor` over `anneal_steps` (0: never annealed)."""
    if anneal_steps <= 0:
        return 1.0
    return floor + (1.0 - floor) * max(0.0, 1.0 - steps / anneal_steps)


def rescale_shaping(rewards: np.ndarray, goals: np.ndarray, teams: np.ndarray, goal_weight: float,
                    scale: float) -> np.ndarray:
    """Rows' rewards with everything but the goal term scaled by `scale`.

    The runner returns one weighted sum per row; the goal term of it is known from the step's
    goals ([rows, 2], blue/orange, of each row's arena) and the row's team, so the learner fades
    the shaping without the game workers knowing.
    """
    if scale == 1.0:
        return rewards
    rows = np.arange(len(teams))
    teams = teams.astype(np.int64)
    goal = goal_weight * (goals[rows, teams] - goals[rows, 1 - teams]).astype(np.float32)
    return (goal + scale * (rewards - goal)).astype(np.float32)
