"""The scripted `rule` bot: decisions on hand-made situations, and games against `random`."""

from __future__ import annotations

import numpy as np
import pytest

from agents.actions import ACTION_TABLE, CONTROLS, N_ACTIONS
from agents.baselines import RandomPolicy
from agents.obs import CAR_RAW_DIM, N_BOOST_PADS, build_obs
from agents.rule_bot import RuleBot
from arena.pairings import play_matches

WIN_RATE_TARGET = 0.95


def controls(action: int) -> dict[str, float]:
    return dict(zip(CONTROLS, ACTION_TABLE[action]))


def car(pos, yaw: float = np.pi / 2, vel=(0, 0, 0), boost: float = 50.0, on_ground: bool = True) -> np.ndarray:
    """Raw car row (blue frame): upright, heading `yaw` (pi/2 faces +y)."""
    fwd = (np.cos(yaw), np.sin(yaw), 0.0)
    return np.array([*pos, *fwd, 0, 0, 1, *vel, 0, 0, 0, boost, float(on_ground), 0.0], dtype=np.float32)


def observe(blue_car: np.ndarray, orange_car: np.ndarray, ball_pos, ball_vel=(0, 0, 0)) -> np.ndarray:
    """Observations [2, OBS_DIM] of a 1v1 state: row 0 blue's view, row 1 orange's."""
    cars = np.stack([blue_car, orange_car])[None]
    assert cars.shape[-1] == CAR_RAW_DIM
    return build_obs(
        ball=np.array([[*ball_pos, *ball_vel, 0, 0, 0]], dtype=np.float32), cars=cars,
        teams=np.array([[0, 1]]), pads=np.ones((1, N_BOOST_PADS), np.float32), score=np.zeros((1, 2), np.float32),
        seconds_left=np.array([300.0], np.float32), overtime=np.zeros(1, np.float32),
    )


FAR_ORANGE = car((3000, 4000, 17), yaw=-np.pi / 2)


def test_kickoff_drives_straight_at_the_ball_with_boost():
    obs = observe(car((0, -4608, 17)), car((0, 4608, 17), yaw=-np.pi / 2), (0, 0, 93))
    actions, _ = RuleBot().act(obs)
    for action in actions:  # both sides see the same kickoff from their own side
        c = controls(action)
        assert (c["throttle"], c["steer"], c["boost"], c["jump"]) == (1, 0, 1, 0)


def test_behind_a_far_ball_it_boosts_towards_it():
    obs = observe(car((0, -3000, 17)), FAR_ORANGE, (0, 0, 93), ball_vel=(0, 100, 0))
    c = controls(RuleBot().act(obs[:1])[0][0])
    assert (c["throttle"], c["steer"], c["boost"]) == (1, 0, 1)


def test_close_behind_the_ball_and_facing_it_it_jumps_to_flip():
    obs = observe(car((0, -350, 17), vel=(0, 1200, 0)), FAR_ORANGE, (0, 0, 93), ball_vel=(0, 100, 0))
    assert controls(RuleBot().act(obs[:1])[0][0])["jump"] == 1


def test_after_the_jump_it_releases_then_flips_forward():
    bot = RuleBot()
    rising = observe(car((0, -300, 37), vel=(0, 1200, 320), on_ground=False), FAR_ORANGE, (0, 0, 93), (0, 50, 0))
    assert controls(bot.act(rising[:1])[0][0])["jump"] == 0  # release, so the next press is a flip
    higher = observe(car((0, -200, 58), vel=(0, 1200, 280), on_ground=False), FAR_ORANGE, (0, 0, 93), (0, 50, 0))
    c = controls(bot.act(higher[:1])[0][0])
    assert (c["jump"], c["pitch"]) == (1, -1)


def test_up_field_of_the_ball_it_turns_back_instead_of_pushing_it_home():
    # Car at midfield facing the opponent's goal; the ball is behind it, between it and its own goal.
    obs = observe(car((0, 1000, 17), vel=(0, 1000, 0)), FAR_ORANGE, (0, -2000, 93), ball_vel=(0, -300, 0))
    c = controls(RuleBot().act(obs[:1])[0][0])
    assert c["steer"] != 0 and c["boost"] == 0 and c["jump"] == 0


def test_blue_and_orange_in_mirrored_situations_act_alike():
    blue = car((500, -2000, 17), yaw=1.2, vel=(100, 800, 0))
    orange = car((-500, 2000, 17), yaw=1.2 + np.pi, vel=(-100, -800, 0))
    obs = observe(blue, orange, (0, 0, 93), ball_vel=(200, 0, 0))
    # The ball moves along x, so the mirrored world is not the same world: compare with the mirrored ball.
    mirrored = observe(blue, orange, (0, 0, 93), ball_vel=(-200, 0, 0))
    assert np.array_equal(obs[0], mirrored[1]) and np.array_equal(obs[1], mirrored[0])
    a, _ = RuleBot().act(obs)
    b, _ = RuleBot().act(mirrored)
    assert a[0] == b[1] and a[1] == b[0]


def test_batched_decisions_equal_row_by_row_decisions():
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(64):
        blue = car((*rng.uniform(-3500, 3500, 1), *rng.uniform(-4500, 4500, 1), 17), yaw=rng.uniform(-np.pi, np.pi),
                   vel=(*rng.uniform(-1500, 1500, 2), 0), boost=rng.uniform(0, 100), on_ground=rng.random() < 0.8)
        orange = car((*rng.uniform(-3500, 3500, 1), *rng.uniform(-4500, 4500, 1), 17), yaw=rng.uniform(-np.pi, np.pi))
        rows.append(observe(blue, orange, (*rng.uniform(-3000, 3000, 2), rng.uniform(93, 600)),
                            (*rng.uniform(-1000, 1000, 2), 0)))
    obs = np.concatenate(rows)
    batched, state = RuleBot(seed=1).act(obs)
    single = np.concatenate([RuleBot(seed=1).act(obs[i:i + 1])[0] for i in range(len(obs))])
    assert state is None
    assert batched.dtype == np.int64 and batched.min() >= 0 and batched.max() < N_ACTIONS
    assert np.array_equal(batched, single)  # rows are independent (no car here is upside down)


def win_rate(n_games_per_side: int, game_seconds: float, team_size: int = 1, seed: int = 0) -> tuple[int, int, int]:
    """(wins, draws, losses) of `rule` against `random`, half the games on each side."""
    as_blue = play_matches(RuleBot(), RandomPolicy(), n_games_per_side, team_size, seed, game_seconds)
    as_orange = play_matches(RandomPolicy(), RuleBot(), n_games_per_side, team_size, seed + 1, game_seconds)
    diffs = np.array([r.blue_goals - r.orange_goals for r in as_blue] + [r.orange_goals - r.blue_goals for r in as_orange])
    return int((diffs > 0).sum()), int((diffs == 0).sum()), int((diffs < 0).sum())


@pytest.mark.slow  # strength over many games or updates: CI runs it after the default suite
def test_rule_beats_random_in_at_least_95_percent_of_1v1_games():
    wins, draws, losses = win_rate(n_games_per_side=100, game_seconds=60.0)
    games = wins + draws + losses
    assert games == 200
    assert wins / games >= WIN_RATE_TARGET, f"{wins} wins, {draws} draws, {losses} losses"


@pytest.mark.slow
@pytest.mark.parametrize("team_size", [1, 2, 3])
def test_rule_beats_random_over_many_games(team_size):
    wins, draws, losses = win_rate(n_games_per_side=500 if team_size == 1 else 100, game_seconds=60.0,
                                   team_size=team_size, seed=10)
    assert wins / (wins + draws + losses) >= WIN_RATE_TARGET, f"{wins} wins, {draws} draws, {losses} losses"
