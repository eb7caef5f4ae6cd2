"""The league observation layout as a plain RLGym ObsBuilder, built one agent at a time.

This is the reference the batched runner is tested against (tests/test_obs_equivalence.py):
it reads RLGym's GameState the way any RLGym obs builder does (car.physics or
car.inverted_physics, state.inverted_ball, state.inverted_boost_pad_timers) and shares only
the layout constants with agents.obs, never its code. It is also what an RLGym env built by
arena.engine.game uses, so a policy sees the same numbers there as in the runner.

The clock and score come from shared_info[GAME_CLOCK_KEY] (arena.engine.rules.GameClock), the one
place both paths take them from. Arithmetic is float32 with float32 coefficients, as the
batched path does it, so the two agree exactly rather than to a tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rlgym.api import ObsBuilder
from rlgym.rocket_league.api import Car, GameState, PhysicsObject

from agents.obs import (
    ANG_VEL_COEF,
    BOOST_COEF,
    C_ANG_VEL,
    C_BALL_REL_POS,
    C_BALL_REL_VEL,
    C_BOOST,
    C_DEMOED,
    C_FWD,
    C_ON_GROUND,
    C_POS,
    C_PRESENT,
    C_UP,
    C_VEL,
    CAR_BLOCK,
    G_OVERTIME,
    G_SCORE_DIFF,
    G_SECONDS_LEFT,
    LAYOUT,
    OBS_DIM,
    POS_COEF,
    SCORE_DIFF_CLIP,
    SECONDS_COEF,
    VEL_COEF,
)
from arena.engine.rules import GAME_CLOCK_KEY, GameClock

F32 = np.float32
MATE_SLOTS = ("mate0", "mate1")
OPP_SLOTS = ("opp0", "opp1", "opp2")


def _scaled(values: np.ndarray, coef: float) -> np.ndarray:
    return np.asarray(values, dtype=F32) * F32(coef)


def _car_block(car: Car, physics: PhysicsObject, ball: PhysicsObject) -> np.ndarray:
    block = np.zeros(CAR_BLOCK, dtype=F32)
    pos = np.asarray(physics.position, dtype=F32)
    vel = np.asarray(physics.linear_velocity, dtype=F32)
    block[C_PRESENT] = 1.0
    block[C_POS] = _scaled(pos, POS_COEF)
    block[C_FWD] = physics.forward
    block[C_UP] = physics.up
    block[C_VEL] = _scaled(vel, VEL_COEF)
    block[C_ANG_VEL] = _scaled(physics.angular_velocity, ANG_VEL_COEF)
    block[C_BOOST] = _scaled([car.boost_amount], BOOST_COEF)[0]
    block[C_ON_GROUND] = float(car.on_ground)
    block[C_DEMOED] = float(car.is_demoed)
    block[C_BALL_REL_POS] = _scaled(np.asarray(ball.position, dtype=F32) - pos, POS_COEF)
    block[C_BALL_REL_VEL] = _scaled(np.asarray(ball.linear_velocity, dtype=F32) - vel, VEL_COEF)
    return block


class LeagueObsBuilder(ObsBuilder[Any, np.ndarray, GameState, tuple[str, int]]):
    """agents.obs layout (OBS_LAYOUT_VERSION) from an RLGym GameState, per agent."""

    def get_obs_space(self, agent: Any) -> tuple[str, int]:
        return "real", OBS_DIM

    def reset(self, agents: list, initial_state: GameState, shared_info: dict[str, Any]) -> None:
        pass

    def build_obs(self, agents: list, state: GameState, shared_info: dict[str, Any]) -> dict[Any, np.ndarray]:
        clock: GameClock = shared_info[GAME_CLOCK_KEY]
        return {agent: self.agent_obs(agent, state, clock) for agent in agents}

    def agent_obs(self, agent: Any, state: GameState, clock: GameClock) -> np.ndarray:
        me = state.cars[agent]
        orange = me.is_orange
        # Orange sees the field rotated 180 degrees about z, so it also attacks +y.
        ball = state.inverted_ball if orange else state.ball
        timers = state.inverted_boost_pad_timers if orange else state.boost_pad_timers

        def physics(car: Car) -> PhysicsObject:
            return car.inverted_physics if orange else car.physics

        obs = np.zeros(OBS_DIM, dtype=F32)
        obs[LAYOUT["ball"].slice] = np.concatenate([
            _scaled(ball.position, POS_COEF),
            _scaled(ball.linear_velocity, VEL_COEF),
            _scaled(ball.angular_velocity, ANG_VEL_COEF),
        ])
        obs[LAYOUT["self"].slice] = _car_block(me, physics(me), ball)
        # Dict order is car-id order (cars are created in it), which the layout's slots follow.
        mates = [c for a, c in state.cars.items() if a != agent and c.team_num == me.team_num]
        opponents = [c for c in state.cars.values() if c.team_num != me.team_num]
        for slots, cars in ((MATE_SLOTS, mates), (OPP_SLOTS, opponents)):
            for slot, car in zip(slots, cars):
                obs[LAYOUT[slot].slice] = _car_block(car, physics(car), ball)
        obs[LAYOUT["pads"].slice] = (np.asarray(timers) == 0).astype(F32)

        own, opp = (clock.orange, clock.blue) if orange else (clock.blue, clock.orange)
        game = LAYOUT["game"].start
        obs[game + G_SCORE_DIFF] = np.clip(own - opp, -SCORE_DIFF_CLIP, SCORE_DIFF_CLIP) / SCORE_DIFF_CLIP
        obs[game + G_SECONDS_LEFT] = F32(clock.seconds_left) * F32(SECONDS_COEF)
        obs[game + G_OVERTIME] = float(clock.overtime)
        return obs
