"""The single-agent Gymnasium wrapper passes Gymnasium's own env checker, on real RocketSim."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents.baselines import RandomPolicy
from agents.policy import Policy
from arena.engine.game import GameSpec
from arena.engine.gym_env import SingleAgentEnv


@pytest.mark.filterwarnings("ignore:.*Box observation space (minimum|maximum) value")  # unbounded by design
@pytest.mark.parametrize("team_size", [1, 2])
def test_passes_gymnasium_env_checker(team_size):
    env = SingleAgentEnv(GameSpec(team_size=team_size), RandomPolicy(0), seed=0)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_spaces_are_the_runners():
    env = SingleAgentEnv(GameSpec(team_size=1), RandomPolicy(0))
    try:
        assert env.observation_space == gym.spaces.Box(-np.inf, np.inf, (196,), np.float32)
        assert env.action_space == gym.spaces.Discrete(90)
    finally:
        env.close()


def test_seeded_episode_replays_exactly():
    def rollout() -> list[np.ndarray]:
        env = SingleAgentEnv(GameSpec(team_size=1, random_start_share=0.5), RandomPolicy(1), learner_car=1)
        try:
            obs, _ = env.reset(seed=42)
            seen = [obs]
            for k in range(40):
                obs, *_ = env.step(k % 90)
                seen.append(obs)
            return seen
        finally:
            env.close()

    first, second = rollout(), rollout()
    assert all(np.array_equal(a, b) for a, b in zip(first, second))


class Idle(Policy):
    """Never touches a control (action 8 is all zeros)."""

    def act(self, obs, state=None, episode_start=None, deterministic=False):
        return np.full(len(obs), 8, dtype=np.int64), None


def test_episode_is_truncated_when_nobody_touches_the_ball():
    spec = GameSpec(team_size=1, no_touch_timeout_seconds=2.0)
    env = SingleAgentEnv(spec, Idle())
    try:
        first, _ = env.reset(seed=0)
        limit = int(2.0 * 120 / spec.tick_skip)  # 30 steps
        for step in range(1, limit + 1):
            obs, reward, terminated, truncated, info = env.step(8)
            assert terminated is False and truncated is (step == limit) and reward == 0.0
        # The last observation is the episode's own, not the next episode's kickoff.
        assert np.isclose(obs[-2] * 300, 300 - 2.0, atol=1e-4)
    finally:
        env.close()


def test_bad_action_is_refused():
    env = SingleAgentEnv(GameSpec(team_size=1), RandomPolicy(0))
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match="action must be"):
            env.step(90)
    finally:
        env.close()
