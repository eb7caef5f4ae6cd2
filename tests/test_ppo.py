"""The PPO learners on small tasks: CartPole (MLP) and a memory task (LSTM beats MLP)."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.checkpoint import MAX_WEIGHT
from agents.networks import build_network
from league.errors import LeagueError
from league.config import PolicyConfig, PpoConfig
from training.guide import Guide, UpdatePlan
from training.measure.stepwise import act, observe_rewards
from training.ppo import PpoLearner, ReturnScale, TrainingDiverged


UPDATES = 80  # ~82k env steps: every seed tried (0-3) solves it by then


def cartpole_learner(seed: int, n_envs: int = 8):
    torch.manual_seed(seed)
    net = build_network(PolicyConfig(kind="mlp", actor_sizes=[64, 64], critic_sizes=[64, 64], activation="tanh",
                                     car_frame=False), obs_dim=4, n_actions=2)
    cfg = PpoConfig(learning_rate=2.5e-3, gamma=0.99, gae_lambda=0.95, ent_coef=0.0, epochs=4,
                    minibatch_size=256, steps_per_env=128, lr_schedule="linear", max_grad_norm=0.5)
    return PpoLearner(net, cfg, slots=n_envs, obs_dim=4, seed=seed)


@pytest.mark.slow  # strength over many games or updates: CI runs it after the default suite
def test_ppo_solves_cartpole():
    torch.set_num_threads(1)
    n_envs = 8
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * n_envs,
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    learner = cartpole_learner(seed=1, n_envs=n_envs)
    obs, _ = envs.reset(seed=1)
    starts = torch.ones(n_envs)
    for u in range(UPDATES):
        for _ in range(learner.cfg.steps_per_env):
            actions = act(learner, torch.as_tensor(obs), starts)
            obs, reward, term, trunc, _ = envs.step(actions.numpy())
            observe_rewards(learner, torch.as_tensor(reward, dtype=torch.float32))
            starts = torch.as_tensor(term | trunc, dtype=torch.float32)
        stats = learner.update(torch.as_tensor(obs), starts, UpdatePlan(progress=u / UPDATES))  # linear lr schedule
        assert not stats.skipped
    # Greedy evaluation over fresh episodes: CartPole-v1 counts as solved at 475.
    env = gym.make("CartPole-v1")
    returns = []
    for ep in range(10):
        o, _ = env.reset(seed=100 + ep)
        total, done = 0.0, False
        while not done:
            with torch.no_grad():
                logits, _, _ = learner.model.step(torch.as_tensor(o)[None], None, torch.zeros(1))
            o, r, term, trunc, _ = env.step(int(logits.argmax()))
            total += r
            done = term or trunc
        returns.append(total)
    assert np.mean(returns) >= 475, returns


class CueRecall:
    """A cue (+1/-1) shown at the first step, then `delay` blank steps; the last action must match it."""

    def __init__(self, n: int, delay: int, seed: int):
        self.n, self.delay = n, delay
        self.gen = torch.Generator().manual_seed(seed)
        self.t = torch.zeros(n, dtype=torch.long)
        self.cue = torch.zeros(n)

    def _obs(self):
        first = (self.t == 0).float()
        last = (self.t == self.delay).float()
        return torch.stack([self.cue * first, last], dim=1)

    def reset(self):
        self.t.zero_()
        self.cue = torch.randint(0, 2, (self.n,), generator=self.gen).float() * 2 - 1
        return self._obs()

    def step(self, actions):
        at_end = self.t == self.delay
        want = (self.cue > 0).long()
        reward = torch.where(at_end, (actions == want).float() * 2 - 1, torch.zeros(self.n))
        self.t += 1
        done = at_end
        new_cue = torch.randint(0, 2, (self.n,), generator=self.gen).float() * 2 - 1
        self.cue = torch.where(done, new_cue, self.cue)
        self.t = torch.where(done, torch.zeros_like(self.t), self.t)
        return self._obs(), reward, done


def train_memory(kind: str, updates: int = 60, seed: int = 0) -> float:
    torch.manual_seed(seed)
    n, delay = 32, 4
    net = build_network(PolicyConfig(kind=kind, actor_sizes=[32], critic_sizes=[32], activation="tanh",
                                     lstm_hidden=32, car_frame=False), obs_dim=2, n_actions=2)
    cfg = PpoConfig(learning_rate=3e-3, gamma=0.9, gae_lambda=0.95, ent_coef=0.01, epochs=4,
                    minibatch_size=256, steps_per_env=40, sequence_length=20)
    learner = PpoLearner(net, cfg, slots=n, obs_dim=2, seed=seed)
    env = CueRecall(n, delay, seed)
    obs, starts = env.reset(), torch.ones(n)
    final_rewards = []
    for u in range(updates):
        for _ in range(cfg.steps_per_env):
            actions = act(learner, obs, starts)
            obs, reward, done = env.step(actions)
            observe_rewards(learner, reward)
            if u >= updates - 10:
                final_rewards.append(reward[done])
            starts = done.float()
        learner.update(obs, starts)
    return float(torch.cat(final_rewards).eq(1).float().mean())  # success rate late in training


@pytest.mark.slow  # strength over many games or updates: CI runs it after the default suite
def test_lstm_learner_remembers_where_mlp_cannot():
    torch.set_num_threads(1)
    lstm = train_memory("lstm")
    mlp = train_memory("mlp")
    assert lstm >= 0.9, lstm
    assert mlp <= 0.65, mlp


def test_non_finite_loss_skips_update_and_restores_weights():
    learner = cartpole_learner(seed=0, n_envs=4)
    before = {k: v.clone() for k, v in learner.model.state_dict().items()}
    obs = torch.zeros(4, 4)
    for _ in range(learner.cfg.steps_per_env):
        act(learner, obs, torch.zeros(4))
        observe_rewards(learner, torch.full((4,), float("nan")))
    stats = learner.update(obs, torch.zeros(4))
    assert stats.skipped and learner.skipped_updates == 1
    for k, v in learner.model.state_dict().items():
        assert torch.equal(v, before[k])
    assert all(torch.isfinite(p).all() for p in learner.model.parameters())


def test_return_scale_is_the_std_of_the_discounted_return():
    gamma = 0.9
    scale = ReturnScale(slots=4, gamma=gamma, device=torch.device("cpu"))
    # Reward 1 every step and no episode ends: the return so far after t steps is (1 - gamma^t) / (1 - gamma).
    got = scale.update(torch.ones(200, 4), torch.zeros(200, 4))
    expected = np.std([(1 - gamma ** (t + 1)) / (1 - gamma) for t in range(200)])
    assert got == pytest.approx(expected, rel=1e-4)
    # An episode start every step: the return is the reward itself, so the scale is the rewards' std.
    fresh = ReturnScale(slots=64, gamma=gamma, device=torch.device("cpu"))
    rewards = 3.0 * torch.randn(500, 64, generator=torch.Generator().manual_seed(0))
    assert fresh.update(rewards, torch.ones(500, 64)) == pytest.approx(3.0, rel=0.02)


def test_a_large_critic_gradient_does_not_shrink_the_policy_step():
    net = build_network(PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], car_frame=False), obs_dim=4, n_actions=3)
    learner = PpoLearner(net, PpoConfig(max_grad_norm=0.5), slots=1, obs_dim=4)
    for p in net.actor.parameters():
        p.grad = torch.full_like(p, 1e-3)
    for p in net.critic.parameters():
        p.grad = torch.full_like(p, 1e3)
    actor_before = [p.grad.clone() for p in net.actor.parameters()]
    learner._clip_gradients()
    assert all(torch.equal(p.grad, g) for p, g in zip(net.actor.parameters(), actor_before))
    critic_norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in net.critic.parameters()]))
    assert float(critic_norm) == pytest.approx(0.5, rel=1e-4)


def test_kickstarting_teaches_the_teachers_actions_without_any_reward():
    """No rewards at all, so PPO alone has nothing to learn; the kickstart term alone must make
    the policy copy a teacher that picks action 1 exactly when the first input is positive."""
    torch.manual_seed(0)
    net = build_network(PolicyConfig(kind="mlp", actor_sizes=[32], critic_sizes=[8], car_frame=False),
                        obs_dim=3, n_actions=4)
    cfg = PpoConfig(learning_rate=3e-3, epochs=4, minibatch_size=128, steps_per_env=32, ent_coef=0.0)
    learner = PpoLearner(net, cfg, slots=16, obs_dim=3, seed=0, teacher=True)
    gen = torch.Generator().manual_seed(1)
    for _ in range(15):
        while not learner.buffer.full:
            obs = torch.randn(16, 3, generator=gen)
            act(learner, obs, torch.zeros(16), teacher_probs=torch.nn.functional.one_hot((obs[:, 0] > 0).long(), 4).float())
            observe_rewards(learner, torch.zeros(16))
        stats = learner.update(torch.randn(16, 3, generator=gen), torch.zeros(16), UpdatePlan(guide=Guide(1.0)))
    assert stats.teacher_agreement > 0.95 and stats.kickstart_weight == 1.0
    obs = torch.randn(256, 3, generator=gen)
    assert float((net.logits(obs).argmax(-1) == (obs[:, 0] > 0).long()).float().mean()) > 0.95


def filled_cartpole_learner(learning_rate: float):
    """A learner whose buffer holds one rollout of plausible CartPole-like data."""
    learner = cartpole_learner(seed=0, n_envs=4)
    learner.cfg = dataclasses.replace(learner.cfg, learning_rate=learning_rate, lr_schedule="constant")
    gen = torch.Generator().manual_seed(0)
    for t in range(learner.cfg.steps_per_env):
        act(learner, torch.randn(4, 4, generator=gen), torch.zeros(4))
        observe_rewards(learner, torch.ones(4))
    return learner


@pytest.mark.parametrize("learning_rate", [1e300, 1e30])
def test_an_update_that_makes_the_weights_non_finite_stops_with_one_sentence(learning_rate):
    # Issue 37, item 4: a huge learning rate ended in a traceback that dumped a tensor of NaNs.
    learner = filled_cartpole_learner(learning_rate)
    before = {k: v.clone() for k, v in learner.model.state_dict().items()}
    with pytest.raises(TrainingDiverged) as info:
        learner.update(torch.zeros(4, 4), torch.zeros(4))
    text = str(info.value)
    assert "\n" not in text and "non-finite" in text and f"ppo.learning_rate={learning_rate:g}" in text, text
    assert isinstance(info.value, LeagueError)
    for k, v in learner.model.state_dict().items():  # the weights from before the update are kept
        assert torch.equal(v, before[k])


def test_weights_beyond_the_checkpoint_bound_stop_the_update():
    learner = filled_cartpole_learner(2.5e-3)
    with torch.no_grad():
        learner.model.critic[-1].bias.fill_(MAX_WEIGHT * 10)  # finite, but no checkpoint could hold it
    with pytest.raises(TrainingDiverged):
        learner.update(torch.zeros(4, 4), torch.zeros(4))
