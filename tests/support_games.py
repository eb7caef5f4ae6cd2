"""A small timed-game driver on RLGym v2's standard env, for tests of agents (not a game runner).

It plays one game at a time: RocketSim engine, kickoff start, goals restart with a kickoff
until the game clock runs out, actions through RLGym's 90-entry lookup table repeated for
`tick_skip` ticks. The observation builder turns RLGym's GameState into the raw arrays
agents.obs.build_obs expects, so the policies see exactly the project's observation layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rlgym.api import ObsBuilder, RewardFunction, RLGym
from rlgym.rocket_league.action_parsers import LookupTableAction, RepeatAction
from rlgym.rocket_league.api import GameState
from rlgym.rocket_league.common_values import BALL_RESTING_HEIGHT, BLUE_TEAM, TICKS_PER_SECOND
from rlgym.rocket_league.done_conditions import GoalCondition, TimeoutCondition
from rlgym.rocket_league.sim import RocketSimEngine
from rlgym.rocket_league.state_mutators import FixedTeamSizeMutator, KickoffMutator, MutatorSequence

from agents.obs import CAR_RAW_DIM, build_obs
from agents.policy import Policy


@dataclass
class Clock:
    """The timed game's score and clock, which the observation builder reads."""

    seconds_left: float
    score: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.int64))  # blue, orange


class SeededKickoffMutator(KickoffMutator):
    """RLGym's kickoff, with the spawn shuffle drawn from a numpy Generator instead of `random`."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def apply(self, state: GameState, shared_info: dict[str, Any]) -> None:
        state.ball.position = np.array([0, 0, BALL_RESTING_HEIGHT], dtype=np.float32)
        state.ball.linear_velocity = np.zeros(3, dtype=np.float32)
        state.ball.angular_velocity = np.zeros(3, dtype=np.float32)
        spawn = self.rng.permutation(len(self.SPAWN_BLUE_POS))
        counts = {0: 0, 1: 0}
        for car in state.cars.values():
            blue = car.team_num == BLUE_TEAM
            k = spawn[counts[car.team_num]]
            counts[car.team_num] += 1
            car.physics.position = (self.SPAWN_BLUE_POS if blue else self.SPAWN_ORANGE_POS)[k].copy()
            car.physics.linear_velocity = np.zeros(3, dtype=np.float32)
            car.physics.angular_velocity = np.zeros(3, dtype=np.float32)
            yaw = (self.SPAWN_BLUE_YAW if blue else self.SPAWN_ORANGE_YAW)[k]
            car.physics.euler_angles = np.array([0, yaw, 0], dtype=np.float32)
            car.boost_amount = 33.3


def raw_arrays(state: GameState, agents: list, clock: Clock) -> dict[str, np.ndarray]:
    """The raw [1, ...] arrays agents.obs.build_obs takes, cars in agent order (blue first)."""
    ball = state.ball
    cars = np.zeros((1, len(agents), CAR_RAW_DIM), dtype=np.float32)
    teams = np.zeros((1, len(agents)), dtype=np.int64)
    for i, agent in enumerate(agents):
        car = state.cars[agent]
        phys = car.physics
        cars[0, i] = np.concatenate([
            phys.position, phys.forward, phys.up, phys.linear_velocity, phys.angular_velocity,
            [car.boost_amount, float(car.on_ground), float(car.is_demoed)],
        ])
        teams[0, i] = car.team_num
    return {
        "ball": np.concatenate([ball.position, ball.linear_velocity, ball.angular_velocity])[None].astype(np.float32),
        "cars": cars,
        "teams": teams,
        "pads": (state.boost_pad_timers == 0).astype(np.float32)[None],
        "score": clock.score[None].astype(np.float32),
        "seconds_left": np.array([clock.seconds_left], dtype=np.float32),
        "overtime": np.zeros(1, dtype=np.float32),
    }


class LayoutObs(ObsBuilder):
    """Per-agent observations in the agents.obs layout, read off the GameState."""

    def __init__(self, clock: Clock):
        self.clock = clock

    def get_obs_space(self, agent) -> tuple[str, int]:
        return "real", 196

    def reset(self, agents, initial_state, shared_info) -> None:
        pass

    def build_obs(self, agents, state, shared_info) -> dict:
        rows = build_obs(**raw_arrays(state, agents, self.clock))
        return {agent: rows[i] for i, agent in enumerate(agents)}


class NoReward(RewardFunction):
    def reset(self, agents, initial_state, shared_info) -> None:
        pass

    def get_rewards(self, agents, state, is_terminated, is_truncated, shared_info) -> dict:
        return {agent: 0.0 for agent in agents}


@dataclass(frozen=True)
class GameResult:
    blue_goals: int
    orange_goals: int

    @property
    def winner(self) -> str:
        if self.blue_goals == self.orange_goals:
            return "draw"
        return "blue" if self.blue_goals > self.orange_goals else "orange"


def play_game(blue: Policy, orange: Policy, team_size: int = 1, game_seconds: float = 60.0,
              seed: int = 0, tick_skip: int = 8) -> GameResult:
    """One timed game; a goal restarts play with a kickoff; the clock ending with a tie is a draw."""
    rng = np.random.default_rng(seed)
    clock = Clock(seconds_left=game_seconds)
    timeout = TimeoutCondition(game_seconds)
    env = RLGym(
        state_mutator=MutatorSequence(FixedTeamSizeMutator(team_size, team_size), SeededKickoffMutator(rng)),
        obs_builder=LayoutObs(clock),
        action_parser=RepeatAction(LookupTableAction(), repeats=tick_skip),
        reward_fn=NoReward(),
        transition_engine=RocketSimEngine(),
        termination_cond=GoalCondition(),
        truncation_cond=timeout,
    )
    blue.seed(int(rng.integers(2**31)))
    orange.seed(int(rng.integers(2**31)))
    seconds_per_step = tick_skip / TICKS_PER_SECOND
    try:
        while clock.seconds_left > 0:
            timeout.timeout_seconds = clock.seconds_left  # the episode may last what is left of the game
            obs = env.reset()
            agents = env.agents
            blue_ids = [a for a in agents if env.state.cars[a].team_num == BLUE_TEAM]
            orange_ids = [a for a in agents if a not in blue_ids]
            states = {"blue": blue.initial_state(team_size), "orange": orange.initial_state(team_size)}
            start = np.ones(team_size, dtype=bool)
            while True:
                actions = {}
                for side, policy, ids in (("blue", blue, blue_ids), ("orange", orange, orange_ids)):
                    batch = np.stack([obs[a] for a in ids])
                    chosen, states[side] = policy.act(batch, states[side], start, deterministic=False)
                    actions.update({a: np.array([chosen[i]]) for i, a in enumerate(ids)})
                start = np.zeros(team_size, dtype=bool)
                obs, _, terminated, truncated = env.step(actions)
                clock.seconds_left -= seconds_per_step
                if any(terminated.values()):
                    clock.score[env.state.scoring_team] += 1
                    break
                if any(truncated.values()) or clock.seconds_left <= 0:
                    break
    finally:
        env.close()
    return GameResult(int(clock.score[0]), int(clock.score[1]))
