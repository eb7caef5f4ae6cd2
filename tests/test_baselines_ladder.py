"""The baseline ladder (random < atba < rule < rule-pro): decisions on hand-made observations, and
a short real tournament among all four in 1v1 and 2v2. How strong each is: scripts/bench_ladder.sh."""

from __future__ import annotations

import numpy as np
import pytest

from agents.actions import ACTION_TABLE, CONTROLS, N_ACTIONS
from agents.atba_bot import AtbaBot
from agents.baselines import BASELINE_KINDS, make_baseline
from agents.loading import load_policy
from agents.obs import N_BOOST_PADS, build_obs
from agents.rule_bot import heading_error, read_view
from agents.rule_pro_bot import CHALLENGE, LAST, SUPPORT, ProParams, RuleProBot, team_roles
from arena.tournament import open_tournament, run_tournament
from league.config import load_config
from league.home import LeagueHome
from league.registry import Registry

LADDER = ["random", "atba", "rule", "rule-pro"]


def controls(action: int) -> dict[str, float]:
    return dict(zip(CONTROLS, ACTION_TABLE[action]))


def car(pos, yaw: float = np.pi / 2, vel=(0, 0, 0), boost: float = 50.0) -> np.ndarray:
    """Raw car row (blue frame): upright on the ground, heading `yaw` (pi/2 faces +y)."""
    return np.array([*pos, np.cos(yaw), np.sin(yaw), 0, 0, 0, 1, *vel, 0, 0, 0, boost, 1.0, 0.0], dtype=np.float32)


def observe(blue: list[np.ndarray], orange: list[np.ndarray], ball_pos, ball_vel=(0, 0, 0)) -> np.ndarray:
    """Observations [2 * team size, OBS_DIM] of one arena: blue cars' rows first."""
    cars = np.stack(blue + orange)[None]
    return build_obs(
        ball=np.array([[*ball_pos, *ball_vel, 0, 0, 0]], dtype=np.float32), cars=cars,
        teams=np.array([[0] * len(blue) + [1] * len(orange)]), pads=np.ones((1, N_BOOST_PADS), np.float32),
        score=np.zeros((1, 2), np.float32), seconds_left=np.array([300.0], np.float32),
        overtime=np.zeros(1, np.float32))


FAR = [car((3000, 4000, 17), yaw=-np.pi / 2), car((-3000, 4000, 17), yaw=-np.pi / 2), car((0, 4500, 17), yaw=-np.pi / 2)]


def test_every_baseline_is_registered_and_loadable(tmp_path):
    assert list(BASELINE_KINDS) == LADDER
    reg = Registry.create(tmp_path / "league.db")
    assert set(LADDER) <= set(reg.agent_store.names())
    obs = observe([car((0, -3000, 17))], FAR[:1], (0, 0, 93))
    for name in LADDER:
        policy = load_policy(reg.agent_store.get(name))
        actions, state = policy.act(obs, deterministic=True)
        assert state is None and actions.dtype == np.int64 and ((actions >= 0) & (actions < N_ACTIONS)).all()


@pytest.mark.parametrize("ball_x", [2000, -2000, 0])
def test_atba_steers_and_boosts_straight_at_the_ball(ball_x):
    obs = observe([car((0, -3000, 17))], FAR[:1], (ball_x, 0, 93))
    c = controls(AtbaBot().act(obs[:1])[0][0])
    err = heading_error(read_view(obs[:1]), np.array([[ball_x, 0.0]]))[0]
    expected = np.sign(err) if abs(err) > 0.08 else 0  # rule's steering deadband
    assert c["throttle"] == 1 and c["jump"] == 0 and c["steer"] == expected
    assert c["boost"] == (ball_x == 0)  # far and facing it: boost


def test_atba_drives_at_the_ball_even_when_that_scores_an_own_goal():
    # Up-field of the ball, which lies between the car and its own goal: rule turns away, atba drives at it.
    obs = observe([car((0, 1000, 17), yaw=-np.pi / 2)], FAR[:1], (0, -1000, 93))
    c = controls(AtbaBot().act(obs[:1])[0][0])
    assert (c["throttle"], c["steer"], c["boost"]) == (1, 0, 1)


def test_rule_pro_in_2v2_the_last_man_stays_goal_side_when_a_teammate_is_closer():
    near = car((0, -1000, 17))  # right behind the ball, facing it
    back = car((1500, -3500, 17))
    obs = observe([near, back], FAR[:2], (0, 0, 93))
    roles = team_roles(obs[:2], np.zeros((2, 2)), ProParams())
    assert roles.tolist() == [CHALLENGE, LAST]
    # Next to its spot goal-side, the back car waits facing the ball instead of driving at it.
    waiting = observe([near, car((0, -2400, 17))], FAR[:2], (0, 0, 93))
    c = controls(RuleProBot().act(waiting[1:2])[0][0])
    assert c["boost"] == 0 and c["jump"] == 0


def test_rule_pro_in_3v3_exactly_one_car_challenges():
    rng = np.random.default_rng(3)
    for _ in range(50):
        blue = [car((*rng.uniform(-3500, 3500, 1), *rng.uniform(-4500, 4500, 1), 17), yaw=rng.uniform(-np.pi, np.pi),
                    vel=(*rng.uniform(-1500, 1500, 2), 0)) for _ in range(3)]
        orange = [car((*rng.uniform(-3500, 3500, 1), *rng.uniform(-4500, 4500, 1), 17), yaw=rng.uniform(-np.pi, np.pi))
                  for _ in range(3)]
        obs = observe(blue, orange, (*rng.uniform(-3000, 3000, 2), 93))
        ball = obs[:, :2] * 2300.0
        roles = team_roles(obs, ball, ProParams())
        for team in (roles[:3], roles[3:]):  # each team's cars agree: one of each role, no double commit
            assert sorted(team.tolist()) == [CHALLENGE, SUPPORT, LAST]


def test_rule_pro_kickoff_in_2v2_sends_one_car():
    # The diagonal kickoff: both blue cars equally far; one goes, the other does not boost at the ball.
    blue = [car((-2048, -2560, 17), yaw=np.pi / 4), car((2048, -2560, 17), yaw=3 * np.pi / 4)]
    orange = [car((-2048, 2560, 17), yaw=-3 * np.pi / 4), car((2048, 2560, 17), yaw=-np.pi / 4)]
    obs = observe(blue, orange, (0, 0, 93))
    roles = team_roles(obs, np.zeros((4, 2)), ProParams())
    assert sorted(roles[:2].tolist()) == [CHALLENGE, LAST] and sorted(roles[2:].tolist()) == [CHALLENGE, LAST]


def test_rule_pro_is_deterministic_and_rows_are_independent():
    rng = np.random.default_rng(0)
    rows = [observe([car((*rng.uniform(-3500, 3500, 2), 17), yaw=rng.uniform(-np.pi, np.pi),
                         vel=(*rng.uniform(-1500, 1500, 2), 0), boost=rng.uniform(0, 100)) for _ in range(2)],
                    [car((*rng.uniform(-3500, 3500, 2), 17)) for _ in range(2)],
                    (*rng.uniform(-3000, 3000, 2), rng.uniform(93, 600))) for _ in range(16)]
    obs = np.concatenate(rows)
    batched = make_baseline("rule-pro", seed=1).act(obs)[0]
    assert np.array_equal(batched, make_baseline("rule-pro", seed=2).act(obs, deterministic=True)[0])
    assert np.array_equal(batched, np.concatenate([RuleProBot().act(obs[i:i + 1])[0] for i in range(len(obs))]))


@pytest.mark.parametrize("team_size", [1, pytest.param(2, marks=pytest.mark.slow)])  # 2v2: the slow set
def test_a_short_tournament_plays_the_whole_ladder(tmp_path, team_size):
    home = LeagueHome(tmp_path / "league")
    home.create_dirs()
    reg = Registry.create(home.db_path)
    tid, _ = open_tournament(reg, load_config(), team_size, 2, 3, LADDER)
    list(run_tournament(reg, home, tid, 2, game_seconds=6.0))
    t = reg.tournament_store.get(tid)
    assert t.status == "finished" and t.finished_games == t.planned_games == 12
