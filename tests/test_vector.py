"""The vectorized game runner on real RocketSim: layout, rules, resets, determinism, crashes."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from rlgym.api import StateMutator
from rlgym.rocket_league.reward_functions import TouchReward

from agents.actions import find_action
from agents.obs import LAYOUT, OBS_DIM
from arena.engine.game import GamePlugins, GameSpec, RLGymGame, make_rlgym_env
from arena.engine.rewards import GoalReward
from arena.engine.vector import VecGame, WorkerError

BALL_Y = LAYOUT["ball"].start + 1


class BallIntoOrangeGoal(StateMutator):
    """Starts the ball just in front of the orange goal, flying in: blue scores within a few steps."""

    def apply(self, state, shared_info) -> None:
        state.ball.position = np.array([0.0, 4900.0, 200.0], dtype=np.float32)
        state.ball.linear_velocity = np.array([0.0, 3000.0, 0.0], dtype=np.float32)


class FailingReward(GoalReward):
    """Raises inside the worker on its third step (a deliberate crash)."""

    def __init__(self):
        self.calls = 0

    def get_rewards_batch(self, batch, terminated, truncated):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("deliberate failure in a reward function")
        return super().get_rewards_batch(batch, terminated, truncated)


class DyingReward(GoalReward):
    """Kills its worker process outright on the second step (no traceback possible)."""

    def __init__(self):
        self.calls = 0

    def get_rewards_batch(self, batch, terminated, truncated):
        self.calls += 1
        if self.calls == 2:
            os._exit(7)
        return super().get_rewards_batch(batch, terminated, truncated)


def random_actions(games: VecGame, steps: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 90, (steps, games.num_agents))


def worker_pids(games: VecGame) -> list[int]:
    """The game worker processes' ids (of the processes placement)."""
    return games._transport.pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it has exited all the same.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def test_layout_spaces_and_dtypes():
    with VecGame(GameSpec(team_size=2), workers=2, envs_per_worker=3, placement="in-process") as games:
        assert (games.num_envs, games.agents_per_env, games.num_agents) == (6, 4, 24)
        assert games.teams.tolist()[:8] == [0, 0, 1, 1, 0, 0, 1, 1]
        assert games.env_of_row.tolist()[:8] == [0, 0, 0, 0, 1, 1, 1, 1]
        assert games.single_observation_space.shape == (OBS_DIM,)
        assert games.single_action_space.n == 90
        obs = games.reset(seed=0)
        assert obs.shape == (24, OBS_DIM) and obs.dtype == np.float32
        assert games.info.episode_start.all()
        obs, rewards, terminated, truncated, info = games.step(np.zeros(24, dtype=np.int64))
        assert rewards.dtype == np.float32 and terminated.dtype == bool and truncated.dtype == bool
        assert info.goals.shape == (6, 2) and info.touches.shape == (6, 4) and info.score.shape == (6, 2)
        assert np.allclose(info.seconds_left, 300 - 8 / 120)


def test_bad_actions_are_refused_with_the_values():
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=2, placement="in-process") as games:
        games.reset()
        with pytest.raises(ValueError, match=r"\[0, 90\), got \[90\]"):
            games.step(np.array([0, 90, 1, 2]))
        with pytest.raises(ValueError, match="shape"):
            games.step(np.zeros(3, dtype=np.int64))


def test_in_process_and_processes_agree_exactly():
    spec = GameSpec(team_size=1, random_start_share=0.5, no_touch_timeout_seconds=1.0)
    actions = None
    results = {}
    for placement in ("in-process", "processes"):
        with VecGame(spec, workers=2, envs_per_worker=2, placement=placement, seed=3) as games:
            actions = random_actions(games, 40) if actions is None else actions
            trace = [games.reset().copy()]
            for a in actions:
                obs, rewards, terminated, truncated, info = games.step(a)
                trace += [obs.copy(), rewards.copy(), terminated.copy(), truncated.copy(), info.final_obs.copy()]
            results[placement] = trace
    assert all(np.array_equal(a, b) for a, b in zip(results["in-process"], results["processes"]))


def test_seeded_reset_replays_exactly_after_play():
    with VecGame(GameSpec(team_size=2, random_start_share=1.0), workers=1, envs_per_worker=2,
                 placement="in-process") as games:
        actions = random_actions(games, 30, seed=1)

        def episode() -> list[np.ndarray]:
            seen = [games.reset(seed=99).copy()]
            seen += [games.step(a)[0].copy() for a in actions]
            return seen

        first = episode()
        second = episode()  # the arenas have been played in: the seeded reset must still replay
        assert all(np.array_equal(a, b) for a, b in zip(first, second))


def test_no_touch_timeout_truncates_and_resets_automatically():
    spec = GameSpec(team_size=1, no_touch_timeout_seconds=1.0)
    with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", seed=0) as games:
        games.reset()
        idle = np.full(games.num_agents, 8)  # action 8: no input at all, nobody reaches the ball
        limit = int(1.0 * 120 / spec.tick_skip)  # 15 steps
        for _ in range(limit - 1):
            obs, rewards, terminated, truncated, info = games.step(idle)
            assert not truncated.any() and not info.done.any()
        obs, rewards, terminated, truncated, info = games.step(idle)
        assert truncated.all() and not terminated.any() and info.done.all()
        assert info.episode_start.all()
        assert np.allclose(info.episode_seconds, limit * spec.tick_skip / 120)
        assert np.allclose(info.seconds_left, spec.episode_timeout_seconds)  # the new episode's clock
        # The last observation of the finished episode is kept apart from the new first one.
        assert not np.array_equal(info.final_obs, obs)


def test_goal_terminates_a_training_episode_with_goal_rewards():
    plugins = GamePlugins(mutators=(BallIntoOrangeGoal(),))
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=2, placement="in-process", plugins=plugins) as games:
        games.reset()
        for _ in range(10):
            obs, rewards, terminated, truncated, info = games.step(np.full(games.num_agents, 8))
            if info.done.any():
                break
        assert terminated.all() and info.goals.tolist() == [[1, 0], [1, 0]]
        assert rewards.tolist() == [1.0, -1.0, 1.0, -1.0]  # blue scored, orange conceded
        assert info.episode_score.tolist() == [[1, 0], [1, 0]]
        assert info.score.tolist() == [[0, 0], [0, 0]]  # the next episode starts at 0-0
        # The final observation still has the ball deep in the orange goal (blue frame: +y).
        assert (info.final_obs[0::2, BALL_Y] * 2300 > 5100).all()


def test_a_goal_that_does_not_end_the_episode_restarts_play_with_a_kickoff():
    spec = GameSpec(team_size=1, goal_ends_episode=False)
    plugins = GamePlugins(mutators=(BallIntoOrangeGoal(),))  # only the episode's start uses it
    with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", plugins=plugins) as games:
        games.reset()
        for _ in range(10):
            obs, rewards, terminated, truncated, info = games.step(np.full(games.num_agents, 8))
            if info.goals.any():
                break
        assert info.goals.tolist() == [[1, 0], [1, 0]] and rewards.tolist() == [1.0, -1.0, 1.0, -1.0]
        assert not info.done.any() and not terminated.any() and not info.episode_start.any()
        assert info.score.tolist() == [[1, 0], [1, 0]]  # the episode goes on, its score kept
        assert (obs[:, BALL_Y] == 0.0).all()  # from a kickoff: ball at centre
        for _ in range(5):
            obs, rewards, terminated, truncated, info = games.step(np.full(games.num_agents, 8))
        assert not info.done.any() and info.score.tolist() == [[1, 0], [1, 0]]


def test_goal_ends_episode_is_read_from_the_config():
    from league.config import load_config

    default = GameSpec.from_config(load_config(stage="1v1").game)
    on = GameSpec.from_config(load_config(stage="1v1", sets=["game.goal_ends_episode=true"]).game)
    assert not default.goal_ends_episode and default.kickoff_after_goal  # the league's default
    assert on.goal_ends_episode and not on.kickoff_after_goal
    assert GameSpec(mode="timed").kickoff_after_goal


def test_timed_game_restarts_with_a_kickoff_and_ends_on_the_clock():
    spec = GameSpec(team_size=1, mode="timed", game_seconds=2.0)
    plugins = GamePlugins(mutators=(BallIntoOrangeGoal(),))  # only the game's first start uses it
    with VecGame(spec, workers=1, envs_per_worker=1, placement="in-process", plugins=plugins) as games:
        games.reset()
        steps = int(2.0 * 120 / spec.tick_skip)
        goal_at = None
        for k in range(steps):
            obs, rewards, terminated, truncated, info = games.step(np.full(2, 8))
            if info.goals.any() and goal_at is None:
                goal_at = k
                assert not info.done.any() and info.score.tolist() == [[1, 0]]
                assert obs[0, BALL_Y] == 0.0  # restarted from a kickoff: ball at centre
            if k < steps - 1:
                assert not info.done.any()
        assert goal_at is not None
        assert info.done.all() and terminated.all()
        assert info.episode_score.tolist() == [[1, 0]] and np.isclose(info.episode_seconds[0], 2.0)
        assert info.score.tolist() == [[0, 0]] and np.isclose(info.seconds_left[0], 2.0)


def test_plain_rlgym_reward_runs_through_the_adapter_and_matches_touches():
    spec = GameSpec(team_size=1)
    plugins = GamePlugins(reward_fn=TouchReward())
    with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", seed=1, plugins=plugins) as games:
        games.reset()
        forward = find_action(throttle=1, steer=0, boost=1, handbrake=0, jump=0, pitch=0, roll=0)
        touched = False  # both cars boost straight at the kickoff ball
        for _ in range(60):
            obs, rewards, terminated, truncated, info = games.step(np.full(games.num_agents, forward))
            np.testing.assert_array_equal(rewards, (info.touches.reshape(-1) > 0).astype(np.float32))
            touched |= bool(info.touches.any())
        assert touched


def test_worker_exception_is_raised_with_its_traceback_and_everything_stops():
    plugins = GamePlugins(reward_fn=FailingReward())
    games = VecGame(GameSpec(team_size=1), workers=2, envs_per_worker=1, plugins=plugins)
    pids = worker_pids(games)
    games.reset()
    started = time.monotonic()
    with pytest.raises(WorkerError) as caught:
        for _ in range(5):
            games.step(np.zeros(games.num_agents, dtype=np.int64))
    assert time.monotonic() - started < 30
    text = str(caught.value)
    assert "deliberate failure in a reward function" in text and "Traceback" in text and "get_rewards_batch" in text
    assert not any(alive(pid) for pid in pids)
    with pytest.raises(RuntimeError, match="closed"):
        games.step(np.zeros(games.num_agents, dtype=np.int64))


def test_worker_that_dies_outright_is_reported_not_waited_for():
    plugins = GamePlugins(reward_fn=DyingReward())
    games = VecGame(GameSpec(team_size=1), workers=2, envs_per_worker=1, plugins=plugins)
    pids = worker_pids(games)
    games.reset()
    with pytest.raises(WorkerError, match="died without a traceback.*exit code 7"):
        for _ in range(5):
            games.step(np.zeros(games.num_agents, dtype=np.int64))
    assert not any(alive(pid) for pid in pids)


def test_close_leaves_no_worker_processes():
    games = VecGame(GameSpec(team_size=3), workers=2, envs_per_worker=1)
    pids = worker_pids(games)
    games.reset()
    games.step(np.zeros(games.num_agents, dtype=np.int64))
    games.close()
    games.close()  # idempotent
    assert len(pids) == 2 and not any(alive(pid) for pid in pids)


def test_rlgym_env_plays_the_same_timed_game_rules():
    """arena.engine.game's RLGym env path: a goal restarts with a kickoff, the clock ends the game."""
    spec = GameSpec(team_size=1, mode="timed", game_seconds=2.0)
    game = RLGymGame(spec, make_rlgym_env(spec, mutators=(BallIntoOrangeGoal(),), seed=0))
    try:
        game.reset()
        steps, ended, goal_seen = 0, False, False
        while not ended:
            obs, rewards, terminated, truncated = game.step({a: np.array([8]) for a in game.env.agents})
            steps += 1
            if game.clock.blue and not goal_seen:
                goal_seen = True
                assert rewards["blue-0"] == 1 and rewards["orange-0"] == -1
                assert obs["blue-0"][BALL_Y] == 0.0  # kickoff restart: ball at centre
            ended = any(terminated.values())
        assert goal_seen and steps == int(2.0 * 120 / spec.tick_skip)
        assert (game.clock.blue, game.clock.orange) == (1, 0) and game.clock.seconds_left == 0
    finally:
        game.close()


def test_rlgym_env_restarts_a_training_episode_that_a_goal_does_not_end():
    spec = GameSpec(team_size=1, goal_ends_episode=False, no_touch_timeout_seconds=2.0)
    game = RLGymGame(spec, make_rlgym_env(spec, mutators=(BallIntoOrangeGoal(),), seed=0))
    try:
        game.reset()
        for _ in range(10):
            obs, rewards, terminated, truncated = game.step({a: np.array([0]) for a in game.env.agents})
            if game.clock.blue:
                break
        assert game.clock.blue == 1 and rewards["blue-0"] == 1 and rewards["orange-0"] == -1
        assert not any(terminated.values()) and not any(truncated.values())
        assert obs["blue-0"][BALL_Y] == 0.0  # kickoff restart: ball at centre, the score kept
        ended = False
        for _ in range(int(3 * 120 / spec.tick_skip)):  # idle cars: the no-touch timeout ends it
            obs, rewards, terminated, truncated = game.step({a: np.array([0]) for a in game.env.agents})
            if any(truncated.values()):
                ended = True
                break
        assert ended and game.clock.blue == 1
    finally:
        game.close()


def ball_height_reward(batch, terminated, truncated):
    """A plain function as a batched reward: every car gets the ball's height in uu."""
    return np.repeat(batch.ball[:, 2:3], batch.cars.shape[1], axis=1)


def test_a_plain_function_is_a_batched_reward():
    plugins = GamePlugins(reward_fn=ball_height_reward)
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=2, placement="in-process", plugins=plugins) as games:
        games.reset()
        obs, rewards, *_ = games.step(np.full(games.num_agents, 8))
        np.testing.assert_allclose(rewards, obs[:, LAYOUT["ball"].start + 2] * 2300, rtol=1e-5)


def test_kill_9_of_the_driver_leaves_no_worker_and_no_fork_server():
    """Workers start from multiprocessing's fork server (arena.engine.procs.worker_context), so their parent is
    that server, not the driver: the driver's death must still take the server and every worker with it."""
    import signal
    import subprocess
    import sys

    import psutil

    code = ("import os, sys, numpy as np\n"
            "from arena.engine.game import GameSpec\nfrom arena.engine.vector import VecGame\n"
            "g = VecGame(GameSpec(team_size=1), workers=2, envs_per_worker=1)\ng.reset()\n"
            "print(*g._transport.pids, flush=True)\nsys.stdin.read()\n")
    driver = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in driver.stdout.readline().split()]
        family = [p.pid for p in psutil.Process(driver.pid).children(recursive=True)]
        assert len(pids) == 2 and set(pids) <= set(family)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    deadline = time.monotonic() + 20
    while any(alive(pid) for pid in family) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in family), family
