"""The game state an agent may read instead of the observation: batched arrays of E arenas.

Community bots build their own input from the game (positions, orientation, has_flip, pads,
previous controls), not from the league's 196-float observation, so an agent may ask for this
instead. Every array is in the world (blue) frame, cars in car-id order (blue cars first):

    ball           [E, 9]      position, linear velocity, angular velocity (uu, uu/s, rad/s)
    cars           [E, C, 19]  agents.obs raw car columns (position, forward, up, velocity,
                               angular velocity, boost 0-100, on ground, demolished), then has_flip
    pads           [E, 34]     1.0 where the boost pad is available, RLGym's pad order
    teams          [C]         0 blue, 1 orange
    prev_controls  [E, C, 8]   each car's controls of the step before (throttle, steer, pitch,
                               yaw, roll, jump, boost, handbrake); zeros at an episode's start

`from_game_states` builds the same arrays from RLGym v2 GameStates (tests, slow paths).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.obs import BALL_RAW_DIM, CAR_RAW_DIM, N_BOOST_PADS

CAR_HAS_FLIP = CAR_RAW_DIM  # the one column community bots need beyond agents.obs's raw car columns
CAR_STATE_DIM = CAR_RAW_DIM + 1
N_CONTROLS = 8


@dataclass
class GameArrays:
    """E arenas of C cars (see the module's docstring for each array's columns)."""

    ball: np.ndarray  # [E, 9] float32
    cars: np.ndarray  # [E, C, 19] float32
    pads: np.ndarray  # [E, 34] float32
    teams: np.ndarray  # [C] int8
    prev_controls: np.ndarray  # [E, C, 8] float32

    @property
    def n_envs(self) -> int:
        return len(self.ball)

    @property
    def n_cars(self) -> int:
        return len(self.teams)


def from_game_states(states: list, agent_ids: list[str], prev_controls: np.ndarray | None = None) -> GameArrays:
    """GameArrays of RLGym v2 GameStates, cars in the order of `agent_ids` (blue cars first)."""
    e, c = len(states), len(agent_ids)
    ball = np.zeros((e, BALL_RAW_DIM), np.float32)
    cars = np.zeros((e, c, CAR_STATE_DIM), np.float32)
    pads = np.zeros((e, N_BOOST_PADS), np.float32)
    for i, state in enumerate(states):
        b = state.ball
        ball[i] = np.concatenate([b.position, b.linear_velocity, b.angular_velocity])
        pads[i] = np.asarray(state.boost_pad_timers) == 0
        for k, agent in enumerate(agent_ids):
            car = state.cars[agent]
            p = car.physics
            cars[i, k, :15] = np.concatenate([p.position, p.forward, p.up, p.linear_velocity, p.angular_velocity])
            cars[i, k, 15:] = (car.boost_amount, car.on_ground, car.is_demoed, car.has_flip)
    teams = np.array([states[0].cars[a].team_num if states else 0 for a in agent_ids], np.int8)
    if prev_controls is None:
        prev_controls = np.zeros((e, c, N_CONTROLS), np.float32)
    return GameArrays(ball, cars, pads, teams, np.asarray(prev_controls, np.float32))
