"""Start states as RLGym StateMutators: kickoffs, randomized states, and a mix of the two.

Randomness comes from `shared_info["rng"]` (a numpy Generator the game owns, one per arena,
seeded from the game's seed), never from the global `random` module, so a seeded game
reproduces its start states. RLGym's own KickoffMutator shuffles with `random.shuffle`; ours
draws the same spawn tables from the arena's generator instead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from rlgym.api import StateMutator
from rlgym.rocket_league.api import GameState
from rlgym.rocket_league.common_values import BLUE_TEAM
from rlgym.rocket_league.state_mutators import KickoffMutator

from league.game_values import BALL_RESTING_HEIGHT, CEILING_Z, SIDE_WALL_X

RNG_KEY = "rng"
CAR_RESTING_Z = 17.0
KICKOFF_BOOST = 33.3
GROUND_BALL_TOP = 300.0  # a ball up to this high is within reach of a car on the ground


def rng_of(shared_info: dict[str, Any]) -> np.random.Generator:
    """The game's generator for this arena; an unseeded one if the game did not provide one."""
    rng = shared_info.get(RNG_KEY)
    if rng is None:
        rng = shared_info[RNG_KEY] = np.random.default_rng()
    return rng


class SeededKickoffMutator(StateMutator[GameState]):
    """A standard kickoff: ball at centre, cars on mirrored spawn spots (RLGym's tables).

    `jitter` (uu) moves each car's spot by up to that much in x and y, drawn from the game's
    generator: an opening. Two agents that both play their greedy action otherwise play one fixed
    line from each of the five spots (ten with the sides swapped), so a match of hundreds of games
    would measure ten lines and call it hundreds of games. Both games of a mirrored pair share the
    game's seed, so each agent plays both sides of the same opening. 0 draws nothing extra: a
    seeded game replays as it did before openings existed.
    """

    def __init__(self, jitter: float = 0.0):
        self.jitter = float(jitter)

    def apply(self, state: GameState, shared_info: dict[str, Any]) -> None:
        rng = rng_of(shared_info)
        state.ball.position = np.array([0, 0, BALL_RESTING_HEIGHT], dtype=np.float32)
        state.ball.linear_velocity = np.zeros(3, dtype=np.float32)
        state.ball.angular_velocity = np.zeros(3, dtype=np.float32)
        # One permutation for both teams, so orange mirrors blue and the kickoff is fair.
        spawn = rng.permutation(len(KickoffMutator.SPAWN_BLUE_POS))
        counts = {0: 0, 1: 0}
        for car in state.cars.values():
            blue = car.team_num == BLUE_TEAM
            slot = spawn[counts[car.team_num]]
            counts[car.team_num] += 1
            table_pos = KickoffMutator.SPAWN_BLUE_POS if blue else KickoffMutator.SPAWN_ORANGE_POS
            table_yaw = KickoffMutator.SPAWN_BLUE_YAW if blue else KickoffMutator.SPAWN_ORANGE_YAW
            car.physics.position = table_pos[slot].copy()
            if self.jitter > 0:
                car.physics.position[:2] += rng.uniform(-self.jitter, self.jitter, 2)
            car.physics.linear_velocity = np.zeros(3, dtype=np.float32)
            car.physics.angular_velocity = np.zeros(3, dtype=np.float32)
            car.physics.euler_angles = np.array([0, table_yaw[slot], 0], dtype=np.float32)
            car.boost_amount = KICKOFF_BOOST
            car.on_ground = True
            car.demo_respawn_timer = 0.0


class RandomStateMutator(StateMutator[GameState]):
    """A randomized mid-game state: ball anywhere in the field moving, cars scattered.

    As in real play the ball is mostly low: `ground_ball_share` of states start it within
    reach of a car on the ground (up to 300 uu), the rest anywhere up to the ceiling. Cars are
    on the ground facing a random way and driving forward, except `air_share` of them which
    start airborne with a random orientation and spin.
    """

    def __init__(self, air_share: float = 0.25, max_ball_speed: float = 2000.0, max_car_speed: float = 1800.0,
                 ground_ball_share: float = 0.6):
        self.air_share = air_share
        self.ground_ball_share = ground_ball_share
        self.max_ball_speed = max_ball_speed
        self.max_car_speed = max_car_speed

    def apply(self, state: GameState, shared_info: dict[str, Any]) -> None:
        rng = rng_of(shared_info)
        # Inside the walls and away from the goal mouths, so a state never starts as a goal.
        field = np.array([SIDE_WALL_X - 400, 4400.0])
        ball_xy = rng.uniform(-field, field)
        top = GROUND_BALL_TOP if rng.random() < self.ground_ball_share else CEILING_Z - 300
        state.ball.position = np.array([*ball_xy, rng.uniform(BALL_RESTING_HEIGHT, top)], dtype=np.float32)
        velocity = _unit(rng) * rng.uniform(0, self.max_ball_speed)
        if top == GROUND_BALL_TOP:
            velocity[2] *= 0.25  # a low ball mostly rolls or bounces low
        state.ball.linear_velocity = velocity.astype(np.float32)
        state.ball.angular_velocity = rng.uniform(-3, 3, 3).astype(np.float32)
        for car in state.cars.values():
            xy = rng.uniform(-field, field)
            yaw = rng.uniform(-math.pi, math.pi)
            airborne = rng.random() < self.air_share
            if airborne:
                pitch, roll = rng.uniform(-math.pi / 2, math.pi / 2), rng.uniform(-math.pi, math.pi)
                car.physics.position = np.array([*xy, rng.uniform(300, CEILING_Z - 300)], dtype=np.float32)
                car.physics.euler_angles = np.array([pitch, yaw, roll], dtype=np.float32)
                car.physics.angular_velocity = rng.uniform(-4, 4, 3).astype(np.float32)
            else:
                car.physics.position = np.array([*xy, CAR_RESTING_Z], dtype=np.float32)
                car.physics.euler_angles = np.array([0, yaw, 0], dtype=np.float32)
                car.physics.angular_velocity = np.zeros(3, dtype=np.float32)
            speed = rng.uniform(0, self.max_car_speed)
            car.physics.linear_velocity = (car.physics.forward * speed).astype(np.float32)
            car.boost_amount = float(rng.uniform(0, 100))
            car.on_ground = not airborne
            car.demo_respawn_timer = 0.0


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / max(float(np.linalg.norm(v)), 1e-6)


class StartStateMutator(StateMutator[GameState]):
    """A kickoff, or with probability `random_share` a randomized state (GameConfig.random_start_share)."""

    def __init__(self, random_share: float = 0.0, kickoff: StateMutator | None = None,
                 randomized: StateMutator | None = None):
        self.random_share = random_share
        self.kickoff = kickoff or SeededKickoffMutator()
        self.randomized = randomized or RandomStateMutator()

    def apply(self, state: GameState, shared_info: dict[str, Any]) -> None:
        use_random = self.random_share > 0 and rng_of(shared_info).random() < self.random_share
        (self.randomized if use_random else self.kickoff).apply(state, shared_info)
