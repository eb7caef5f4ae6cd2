"""Actor-critic networks, the batched NetworkPolicy and the baseline policies."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from agents.actions import N_ACTIONS
from agents.baselines import RandomPolicy, make_baseline
from agents.networks import (
    LstmActorCritic,
    MlpActorCritic,
    build_network,
    policy_preset,
    seed_mlp_config,
)
from agents.nn_policy import NetworkPolicy
from agents.obs import OBS_DIM
from agents.rule_bot import RuleBot
from league.config import PolicyConfig, load_config
from league.errors import LeagueError

SMALL_MLP = PolicyConfig(kind="mlp", actor_sizes=[32, 16], critic_sizes=[24], activation="tanh")
SMALL_LSTM = PolicyConfig(kind="lstm", actor_sizes=[16], critic_sizes=[16], activation="relu", lstm_hidden=8)


def obs_batch(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, OBS_DIM)).astype(np.float32)


def linear_widths(seq: nn.Sequential) -> list[int]:
    return [m.out_features for m in seq if isinstance(m, nn.Linear)]


def test_mlp_sizes_and_activation_come_from_the_config():
    net = build_network(SMALL_MLP)
    assert isinstance(net, MlpActorCritic)
    assert linear_widths(net.actor) == [32, 16, N_ACTIONS]
    assert linear_widths(net.critic) == [24, 1]
    assert all(isinstance(m, nn.Tanh) for m in net.actor if not isinstance(m, nn.Linear))


def test_seed_preset_is_the_seed_documents_network():
    cfg = seed_mlp_config()
    assert (cfg.kind, cfg.actor_sizes, cfg.critic_sizes, cfg.activation) == ("mlp", [1024, 512, 256], [1024, 512, 256], "elu")
    assert policy_preset("seed-mlp") == cfg
    net = build_network(cfg)
    assert linear_widths(net.actor) == [1024, 512, 256, N_ACTIONS]
    assert any(isinstance(m, nn.ELU) for m in net.actor)
    with pytest.raises(LeagueError, match="preset"):
        policy_preset("huge")


def test_the_shipped_default_config_builds():
    net = build_network(load_config().policy)
    logits, value = net(torch.zeros(3, OBS_DIM))
    assert logits.shape == (3, N_ACTIONS) and value.shape == (3,)


def test_mlp_gives_the_ppo_quantities_and_gradients():
    net = build_network(SMALL_MLP)
    obs = torch.from_numpy(obs_batch(6))
    actions = torch.arange(6)
    logits, value = net(obs)
    dist = torch.distributions.Categorical(logits=logits)
    log_prob, entropy = dist.log_prob(actions), dist.entropy()
    assert log_prob.shape == entropy.shape == value.shape == (6,)
    expected = torch.log_softmax(net.logits(obs), -1)[torch.arange(6), actions]
    assert torch.allclose(log_prob, expected)
    (-(log_prob.mean()) + value.pow(2).mean() - entropy.mean()).backward()
    assert all(p.grad is not None for p in net.parameters())
    # Near-uniform first actions: the policy head starts with small weights.
    assert float(entropy.detach().mean()) > 0.99 * np.log(N_ACTIONS)


def test_lstm_resets_exactly_the_rows_whose_episode_starts():
    torch.manual_seed(0)
    net = build_network(SMALL_LSTM)
    assert isinstance(net, LstmActorCritic)
    obs = torch.from_numpy(obs_batch(4))
    _, _, state = net.step(obs, net.initial_state(4), torch.zeros(4))
    start = torch.tensor([1.0, 0.0, 1.0, 0.0])
    logits, value, new_state = net.step(obs, state, start)
    fresh_logits, fresh_value, fresh_state = net.step(obs, net.initial_state(4), torch.zeros(4))
    carried_logits, _, _ = net.step(obs, state, torch.zeros(4))
    for row in (0, 2):
        assert torch.allclose(logits[row], fresh_logits[row]) and torch.allclose(value[row], fresh_value[row])
        assert torch.allclose(new_state.h[0, row], fresh_state.h[0, row])
    for row in (1, 3):
        assert torch.allclose(logits[row], carried_logits[row])
        assert not torch.allclose(logits[row], fresh_logits[row])


def test_lstm_sequence_forward_matches_step_by_step_rollout():
    torch.manual_seed(1)
    net = build_network(SMALL_LSTM)
    steps, rows = 5, 3
    obs = torch.from_numpy(obs_batch(steps * rows).reshape(steps, rows, OBS_DIM))
    starts = torch.zeros(steps, rows)
    starts[2, 1] = 1.0
    starts[4, 0] = 1.0
    actions = torch.randint(0, N_ACTIONS, (steps, rows))
    state0 = net.initial_state(rows)
    state = state0
    step_logp, step_values = [], []
    for t in range(steps):
        logits, value, state = net.step(obs[t], state, starts[t])
        step_logp.append(torch.distributions.Categorical(logits=logits).log_prob(actions[t]))
        step_values.append(value)
    logits, values = net.sequence_forward(obs, state0, starts)
    dist = torch.distributions.Categorical(logits=logits)
    log_prob, entropy = dist.log_prob(actions), dist.entropy()
    assert log_prob.shape == entropy.shape == values.shape == (steps, rows)
    assert torch.allclose(log_prob, torch.stack(step_logp), atol=1e-6)
    assert torch.allclose(values, torch.stack(step_values), atol=1e-6)
    assert torch.allclose(net.value_sequence(obs, state0, starts), values)
    log_prob.sum().backward()
    assert net.lstm.weight_hh_l0.grad is not None


def test_network_policy_acts_in_batches_reproducibly():
    policy = NetworkPolicy(build_network(SMALL_MLP))
    obs = obs_batch(64)
    policy.seed(7)
    first, state = policy.act(obs)
    policy.seed(7)
    second, _ = policy.act(obs)
    assert state is None
    assert first.dtype == np.int64 and first.shape == (64,)
    assert (first >= 0).all() and (first < N_ACTIONS).all()
    assert np.array_equal(first, second)
    policy.seed(8)
    assert not np.array_equal(first, policy.act(obs)[0])


def test_deterministic_actions_are_the_argmax():
    net = build_network(SMALL_MLP)
    obs = obs_batch(16)
    actions, _ = NetworkPolicy(net).act(obs, deterministic=True)
    with torch.no_grad():
        expected = net.logits(torch.from_numpy(obs)).argmax(-1).numpy()
    assert np.array_equal(actions, expected)


def test_observations_go_in_without_a_copy():
    policy = NetworkPolicy(build_network(SMALL_MLP))
    obs = obs_batch(4)
    assert policy._tensor(obs, np.float32).data_ptr() == obs.ctypes.data
    # Other dtypes and layouts still work (converted once).
    actions, _ = policy.act(obs.astype(np.float64)[:, :])
    assert actions.shape == (4,)


def test_lstm_policy_carries_and_resets_its_state():
    policy = NetworkPolicy(build_network(SMALL_LSTM))
    assert policy.recurrent
    obs = obs_batch(3)
    state = policy.initial_state(3)
    _, state = policy.act(obs, state, np.ones(3, dtype=bool), deterministic=True)
    carried, _ = policy.act(obs, state, np.zeros(3, dtype=bool), deterministic=True)
    restarted, _ = policy.act(obs, state, np.ones(3, dtype=bool), deterministic=True)
    fresh, _ = policy.act(obs, None, None, deterministic=True)
    assert np.array_equal(restarted, fresh)
    assert carried.shape == (3,)


def test_random_policy_is_uniform_and_seeded():
    policy = RandomPolicy(seed=3)
    actions, _ = policy.act(np.zeros((9000, OBS_DIM), np.float32))
    counts = np.bincount(actions, minlength=N_ACTIONS)
    assert counts.min() > 50 and counts.max() < 160  # ~100 each
    policy.seed(5)
    a, _ = policy.act(np.zeros((10, OBS_DIM), np.float32))
    policy.seed(5)
    b, _ = policy.act(np.zeros((10, OBS_DIM), np.float32))
    assert np.array_equal(a, b)


def test_make_baseline_knows_random_and_rule():
    assert isinstance(make_baseline("random"), RandomPolicy)
    assert isinstance(make_baseline("rule"), RuleBot)
    with pytest.raises(LeagueError, match="Unknown baseline"):
        make_baseline("mlp")
