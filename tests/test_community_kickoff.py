"""The community bots' scripted kickoffs (agents.community.kickoff), played in real RocketSim games.

These are what the adapters leave out by default; training.measure.kickoffs measures what they
change. The network-free parts (the step script, the kickoff taker) need no bot files.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.community.kickoff import (
    JUMP,
    NECTO_STEPS,
    NECTO_TICKS,
    NOT_TAKER,
    ScriptedKickoffs,
    kickoff_envs,
    step_controls,
    takers,
)
from agents.game_state import GameArrays
from arena.engine.game import GameSpec
from arena.engine.vector import VecGame
from tests.community_bots import bots_dir


def test_a_tick_script_played_a_step_at_a_time_keeps_its_jump_release_and_dodge():
    ticks = np.zeros((24, 8), np.float32)
    ticks[4:12, JUMP] = 1  # jump for 8 ticks from tick 4
    ticks[16:20, JUMP] = 1  # released 4 ticks, then a dodge
    ticks[16:20, 2] = -1
    steps = step_controls(ticks, 8)
    assert steps[:, JUMP].tolist() == [1, 0, 1]  # pressed, let go, pressed again: two presses survive
    assert steps[2, 2] == -1  # the dodge keeps its direction
    jumps = NECTO_STEPS[:, JUMP]
    assert len(NECTO_STEPS) == len(NECTO_TICKS) // 8 == 21
    assert [k for k in range(1, 21) if jumps[k] and not jumps[k - 1]] == [7, 9]  # Necto's jump and its dodge


def _game(blue_x: list[float], ball_moving: bool = False) -> GameArrays:
    cars = np.zeros((1, 2 * len(blue_x), 19), np.float32)
    for k, x in enumerate(blue_x):
        cars[0, k, :3] = (x, -2560.0, 17.0)
        cars[0, len(blue_x) + k, :3] = (-x, 2560.0, 17.0)
    ball = np.zeros((1, 9), np.float32)
    ball[0, 2] = 93.0
    ball[0, 3] = 500.0 if ball_moving else 0.0
    teams = np.array([0] * len(blue_x) + [1] * len(blue_x), np.int8)
    return GameArrays(ball, cars, np.ones((1, 34), np.float32), teams, np.zeros((1, len(teams), 8), np.float32))


def test_the_taker_is_the_closest_car_and_necto_sends_the_left_of_two():
    game = _game([-2048.0, 2048.0])  # 2v2, both blue cars on the diagonals: equally close
    env, car = np.zeros(4, int), np.arange(4)
    assert takers(game, env, car, left_breaks_ties=True).tolist() == [True, False, True, False]  # blue left is -x
    assert kickoff_envs(game).tolist() == [True]
    assert kickoff_envs(_game([0.0], ball_moving=True)).tolist() == [False]
    assert takers(_game([-256.0, 2048.0]), env, car, left_breaks_ties=False).tolist() == [True, False, True, False]


@pytest.mark.parametrize("kind", ["necto", "element"])
def test_a_scripted_kickoff_plays_until_the_first_touch_then_the_network_plays(kind):
    from training.measure.kickoffs import bot_policies

    policy = bot_policies(bots_dir())[f"{kind}+kickoff"]
    assert isinstance(policy, ScriptedKickoffs)
    spec = GameSpec(team_size=1, mode="timed", game_seconds=30, game_state=True)
    with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", seed=5) as games:
        games.reset(seed=5)
        rows = np.arange(games.num_agents)
        state, scripted, touched, airborne = policy.initial_state(len(rows)), 0, False, False
        for _ in range(60):
            game = games.game_state()
            kickoff = kickoff_envs(game)[rows // 2]
            controls, state = policy.act_game(game, rows, state, games.info.episode_start)
            if kind == "necto" and kickoff.all():
                k = state.step - 1
                playing = (k >= 0) & (k < len(NECTO_STEPS))
                assert np.array_equal(controls[playing], NECTO_STEPS[k[playing]])
                scripted += int(playing.sum())
            airborne |= bool((game.cars[:, :, 16] < 0.5).any() and kickoff.all())  # a jump in the kickoff
            touched |= not kickoff.all()
            games.step(np.zeros(len(rows), np.int64), controls, np.ones(len(rows), bool))
        assert touched and airborne  # both cars went for the ball and one reached it
        assert (state.step == NOT_TAKER).any() or (state.step == -1).all()  # the script gave way
        if kind == "necto":
            assert scripted >= 2 * 9  # both cars at least up to Necto's dodge
