"""The training reward terms outside the runner: RLGym's per-agent `get_rewards` pays what the
batched form pays, in a plain RLGym v2 env (arena.engine.game.make_rlgym_env) and on real game states."""

import numpy as np
from rlgym.api import RewardFunction, StateMutator

from arena.engine.game import GamePlugins, GameSpec, make_rlgym_env
from arena.engine.vector import VecGame
from league.config import RewardsConfig, RewardWeights
from training.rewards import build_reward

EVERY_TERM = RewardsConfig(weights=RewardWeights(goal=10, touch=1, hit=15, velocity_player_to_ball=0.1,
                                                 velocity_ball_to_goal=2, face_ball=0.05, boost=0.5, demo=0.5, save=1))


class BallIntoOrangeGoal(StateMutator):
    """Starts the ball just in front of the orange goal, flying in: blue scores within a few steps."""

    def apply(self, state, shared_info) -> None:
        state.ball.position = np.array([0.0, 4900.0, 200.0], dtype=np.float32)
        state.ball.linear_velocity = np.array([0.0, 3000.0, 0.0], dtype=np.float32)


class PlainRLGymReward(RewardFunction):
    """Hides a term's batched form, so the runner runs it the plain RLGym way: one copy per arena,
    `get_rewards` on each arena's GameState (arena.engine.batch.RLGymRewardAdapter)."""

    def __init__(self, reward):
        self.reward = reward

    def reset(self, agents, initial_state, shared_info):
        self.reward.reset(agents, initial_state, shared_info)

    def get_rewards(self, agents, state, is_terminated, is_truncated, shared_info):
        return self.reward.get_rewards(agents, state, is_terminated, is_truncated, shared_info)


def test_a_goal_in_a_plain_rlgym_env_pays_the_goal_weight():
    spec = GameSpec(team_size=2)
    env = make_rlgym_env(spec, reward_fn=build_reward(RewardsConfig(mode="sparse")),
                         mutators=(BallIntoOrangeGoal(),), seed=0)
    try:
        env.reset()
        for _ in range(30):
            _, rewards, terminated, _ = env.step({agent: np.array([8]) for agent in env.agents})  # idle
            if any(terminated.values()):
                break
            assert set(rewards.values()) == {0.0}
        assert any(terminated.values())  # the goal ends the episode (training mode)
        goal = RewardsConfig().weights.goal  # the configured goal weight
        assert rewards == {"blue-0": goal, "blue-1": goal, "orange-0": -goal, "orange-1": -goal}
    finally:
        env.close()


def test_every_term_plays_in_a_plain_rlgym_env_across_episodes():
    spec = GameSpec(team_size=2, random_start_share=0.5, no_touch_timeout_seconds=2.0)
    env = make_rlgym_env(spec, reward_fn=build_reward(EVERY_TERM), seed=1)
    rng = np.random.default_rng(1)
    try:
        env.reset()
        seen, episodes = [], 1
        for _ in range(80):
            _, rewards, terminated, truncated = env.step({a: np.array([rng.integers(0, 90)]) for a in env.agents})
            assert list(rewards) == env.agents
            seen.append(list(rewards.values()))
            if any(terminated.values()) or any(truncated.values()):
                env.reset()
                episodes += 1
        assert episodes >= 2 and np.isfinite(seen).all() and np.abs(seen).sum() > 0
    finally:
        env.close()


def test_the_plain_rlgym_path_pays_what_the_batched_path_pays():
    """Same seed, same actions: the runner's batched rewards equal RLGym's per-arena get_rewards,
    stateful terms (touch, hit, demo) and episode resets included."""
    spec = GameSpec(team_size=2, random_start_share=0.5, no_touch_timeout_seconds=2.0)
    actions = np.random.default_rng(2).integers(0, 90, size=(120, 2 * spec.n_cars))
    paid = []
    for reward in (build_reward(EVERY_TERM), PlainRLGymReward(build_reward(EVERY_TERM))):
        with VecGame(spec, workers=1, envs_per_worker=2, placement="in-process", seed=3,
                     plugins=GamePlugins(reward_fn=reward)) as games:
            games.reset(seed=3)
            rows, resets = [], 0
            for step_actions in actions:
                _, rewards, _, _, info = games.step(step_actions)
                rows.append(rewards.copy())  # the runner's arrays are views, rewritten every step
                resets += int(info.done.sum())
            paid.append(np.stack(rows))
    batched, plain = paid
    assert resets >= 2 and np.abs(batched).sum() > 0
    np.testing.assert_allclose(plain, batched, rtol=1e-5, atol=1e-5)
