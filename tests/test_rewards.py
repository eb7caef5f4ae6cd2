"""Batched reward terms on hand-made game states."""

import numpy as np
import pytest

from arena.engine.batch import StepBatch
from arena.engine.rewards import GoalReward
from league.config import RewardsConfig, RewardWeights
from training.rewards import (DemoTerm, FaceBall, HitTerm, SaveTerm, ShotTerm, TouchTerm, VelocityBallToGoal,
                              VelocityPlayerToBall, build_reward, rescale_shaping, shaping_scale)


def batch(ball=None, cars=None, goals=None, touches=None, team_size=1, n_envs=1):
    c = 2 * team_size
    b = np.zeros((n_envs, 9), np.float32) if ball is None else np.asarray(ball, np.float32)
    cs = np.zeros((n_envs, c, 18), np.float32) if cars is None else np.asarray(cars, np.float32)
    return StepBatch(team_size=team_size, tick_skip=8, teams=np.repeat(np.array([0, 1], np.int8), team_size),
                     agent_ids=[f"c{i}" for i in range(c)], ball=b, cars=cs, pads=np.ones((n_envs, 34), np.float32),
                     goals=np.zeros((n_envs, 2)) if goals is None else np.asarray(goals),
                     touches=np.zeros((n_envs, c)) if touches is None else np.asarray(touches),
                     score=np.zeros((n_envs, 2)), seconds_left=np.zeros(n_envs), episode_seconds=np.zeros(n_envs),
                     seconds_since_touch=np.zeros(n_envs), game_states=lambda: [])


def rewards(term, b):
    return term.get_rewards_batch(b, np.zeros(b.n_envs, bool), np.zeros(b.n_envs, bool))


def test_goal_and_touch():
    b = batch(goals=[[1, 0]], touches=[[0, 3]])
    assert rewards(GoalReward(), b).tolist() == [[1, -1]]
    assert rewards(TouchTerm(), b).tolist() == [[0, 1]]


def test_a_run_of_touching_steps_is_one_touch_and_a_reset_starts_afresh():
    term = TouchTerm()
    assert rewards(term, batch(touches=[[2, 0]])).tolist() == [[1, 0]]
    assert rewards(term, batch(touches=[[8, 0]])).tolist() == [[0, 0]]  # still touching: hugging is not paid
    assert rewards(term, batch(touches=[[0, 1]])).tolist() == [[0, 1]]
    assert rewards(term, batch(touches=[[1, 0]])).tolist() == [[1, 0]]  # a new touch
    term.reset_batch(np.array([0]), [])
    assert rewards(term, batch(touches=[[0, 1]])).tolist() == [[0, 1]]


def test_hit_pays_the_ball_velocity_change_to_the_toucher_only():
    term = HitTerm()
    ball = np.zeros((1, 9))
    assert rewards(term, batch(ball=ball, touches=[[1, 0]])).tolist() == [[0, 0]]  # no earlier step to compare
    ball[0, 4] = 3000  # the ball now moves at half its top speed
    assert rewards(term, batch(ball=ball, touches=[[1, 0]]))[0].tolist() == pytest.approx([0.5, 0.0])
    ball[0, 4] = 2000
    assert rewards(term, batch(ball=ball))[0].tolist() == [0, 0]  # slowed without a touch (a wall): nothing
    term.reset_batch(np.array([0]), [])
    ball[0, 4] = -4000
    assert rewards(term, batch(ball=ball, touches=[[0, 1]]))[0].tolist() == [0, 0]  # a new episode's first step


def test_shot_pays_the_touch_towards_the_opponents_goal_and_charges_one_towards_ours():
    term = ShotTerm()
    ball = np.zeros((1, 9))
    ball[0, 2] = 321.0  # at the goals' centre height, on the centre spot: the goals lie straight along y
    assert rewards(term, batch(ball=ball, touches=[[1, 0]])).tolist() == [[0, 0]]  # no earlier step to compare
    ball[0, 4] = 3000  # blue hit it towards orange's goal (+y) at half the ball's top speed
    assert rewards(term, batch(ball=ball, touches=[[1, 0]]))[0].tolist() == pytest.approx([0.5, 0.0])
    ball[0, 4] = -3000  # orange sends it back: +1 share for orange, nothing for blue (it did not touch)
    assert rewards(term, batch(ball=ball, touches=[[0, 1]]))[0].tolist() == pytest.approx([0.0, 1.0])
    ball[0, 4] = -6000  # blue touches it further towards its own goal: that costs blue
    assert rewards(term, batch(ball=ball, touches=[[1, 0]]))[0].tolist() == pytest.approx([-0.5, 0.0])


def test_velocity_terms_point_the_right_way_for_each_team():
    cars = np.zeros((1, 2, 18))
    cars[0, 0, 1], cars[0, 0, 10] = -1000, 2300  # blue behind the ball, driving at it
    cars[0, 1, 1], cars[0, 1, 10] = 1000, 2300  # orange in front, driving away from it
    cars[0, :, 3:6] = [0, 1, 0]
    ball = np.zeros((1, 9))
    ball[0, 4] = 3000  # ball rolling towards orange's goal
    b = batch(ball=ball, cars=cars)
    assert rewards(VelocityPlayerToBall(), b)[0].tolist() == pytest.approx([1.0, -1.0])
    ball_goal = rewards(VelocityBallToGoal(), b)[0]
    assert ball_goal[0] > 0.45 and ball_goal[1] < -0.45
    assert rewards(FaceBall(), b)[0].tolist() == pytest.approx([1.0, -1.0])


def test_demo_counts_new_demolitions_once():
    term = DemoTerm()
    cars = np.zeros((1, 2, 18))
    assert rewards(term, batch(cars=cars)).tolist() == [[0, 0]]
    cars[0, 1, 17] = 1  # orange demolished
    assert rewards(term, batch(cars=cars)).tolist() == [[1, -1]]
    assert rewards(term, batch(cars=cars)).tolist() == [[0, 0]]  # still demolished: no new reward


def test_save_needs_a_dangerous_ball_and_a_touch():
    ball = np.zeros((1, 9))
    ball[0, 1], ball[0, 4] = -4000, -2000  # deep in blue's half, heading into blue's goal
    assert rewards(SaveTerm(), batch(ball=ball, touches=[[1, 0]])).tolist() == [[1, 0]]
    assert rewards(SaveTerm(), batch(ball=ball, touches=[[0, 1]])).tolist() == [[0, 0]]


def test_weighted_sum_and_sparse_mode():
    b = batch(goals=[[0, 1]], touches=[[1, 0]])
    dense = build_reward(RewardsConfig(weights=RewardWeights(goal=10, touch=0.5, hit=0, velocity_player_to_ball=0,
                                                             velocity_ball_to_goal=0, face_ball=0, demo=0, save=0)))
    assert rewards(dense, b).tolist() == [[-9.5, 10.0]]
    sparse_config = RewardsConfig(mode="sparse")
    goal = sparse_config.weights.goal  # sparse keeps only the goal term, at its configured weight
    assert rewards(build_reward(sparse_config), b).tolist() == [[-goal, goal]]


def test_shaping_fades_linearly_to_its_floor():
    assert shaping_scale(123, 0, 0.0) == 1.0  # off
    assert shaping_scale(0, 1000, 0.2) == 1.0
    assert shaping_scale(500, 1000, 0.2) == pytest.approx(0.6)
    assert shaping_scale(5000, 1000, 0.2) == pytest.approx(0.2)


def test_rescaling_keeps_the_goal_term_and_scales_the_rest():
    # Two arenas, 1v1 rows blue/orange each: arena 0 blue scored this step, arena 1 no goal.
    teams = np.array([0, 1, 0, 1])
    goals = np.array([[1, 0], [1, 0], [0, 0], [0, 0]])  # each row's arena's goals
    shaped = np.array([0.5, -0.25, 0.3, 0.1], np.float32)
    rewards = shaped + 10 * np.array([1, -1, 0, 0], np.float32)  # what the runner returns, goal weight 10
    assert rescale_shaping(rewards, goals, teams, 10.0, 1.0) is rewards
    np.testing.assert_allclose(rescale_shaping(rewards, goals, teams, 10.0, 0.5),
                               10 * np.array([1, -1, 0, 0]) + 0.5 * shaped, rtol=1e-6)
    np.testing.assert_allclose(rescale_shaping(rewards, goals, teams, 10.0, 0.0), [10, -10, 0, 0], atol=1e-6)


def test_team_spirit_shares_a_touch_with_teammates_and_keeps_the_goal_term():
    weights = RewardWeights(goal=10, touch=1.0, hit=0, shot=0, velocity_player_to_ball=0, velocity_ball_to_goal=0,
                            face_ball=0, demo=0, save=0)
    b = batch(goals=[[1, 0]], touches=[[1, 0, 0, 0]], team_size=2)  # blue scores; blue's first car touched
    own = rewards(build_reward(RewardsConfig(weights=weights)), b)
    assert own.tolist() == [[11, 10, -10, -10]]
    shared = rewards(build_reward(RewardsConfig(weights=weights, team_spirit=0.5)), b)
    assert shared.tolist() == [[10.75, 10.25, -10, -10]]  # the touch: 0.5 own + 0.5 of the team's mean 0.5
    one_v_one = batch(goals=[[1, 0]], touches=[[1, 0]])
    assert rewards(build_reward(RewardsConfig(weights=weights, team_spirit=1.0)), one_v_one).tolist() == [[11, -10]]
