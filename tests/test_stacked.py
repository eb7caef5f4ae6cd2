"""Stacked opponent networks: one batched forward for every feed-forward opponent, the same actions."""

import numpy as np
import pytest
import torch

from agents.networks import build_network
from agents.nn_policy import NetworkPolicy
from agents.obs import OBS_DIM
from agents.stacked import StackedActors
from league.config import PolicyConfig
from training.opponents import PolicySpec, build_pool, network_spec


def nets(n: int, config: PolicyConfig | None = None) -> list:
    config = config or PolicyConfig(kind="mlp", actor_sizes=[32, 32], critic_sizes=[32, 32])
    out = []
    for k in range(n):
        torch.manual_seed(k)
        out.append(build_network(config))
    return out


def test_each_block_of_rows_gets_its_own_networks_logits_and_greedy_actions():
    members, counts = nets(3), [5, 1, 3]
    obs = np.random.default_rng(0).standard_normal((sum(counts), OBS_DIM)).astype(np.float32)
    stacked = StackedActors(members, counts)
    bounds = np.cumsum([0, *counts])
    with torch.no_grad():
        got = stacked.logits(torch.from_numpy(obs))
        for k, net in enumerate(members):
            block = slice(bounds[k], bounds[k + 1])
            torch.testing.assert_close(got[block], net.logits(torch.from_numpy(obs[block])), rtol=1e-5, atol=1e-5)
    actions, state = stacked.act(obs, deterministic=True)
    own = np.concatenate([NetworkPolicy(net).act(obs[bounds[k]:bounds[k + 1]], deterministic=True)[0]
                          for k, net in enumerate(members)])
    assert state is None and actions.dtype == np.int64 and actions.tolist() == own.tolist()


def test_sampled_actions_follow_the_seed():
    members, counts = nets(2), [4, 4]
    obs = np.random.default_rng(1).standard_normal((8, OBS_DIM)).astype(np.float32)
    a, b = StackedActors(members, counts), StackedActors(members, counts)
    a.seed(7), b.seed(7)
    assert a.act(obs)[0].tolist() == b.act(obs)[0].tolist()


def test_networks_of_different_architectures_or_a_wrong_row_count_are_refused():
    wide = nets(1, PolicyConfig(kind="mlp", actor_sizes=[64], critic_sizes=[64]))
    with pytest.raises(ValueError, match="one architecture"):
        StackedActors(nets(1) + wide, [1, 1])
    with pytest.raises(ValueError, match="built for 3 rows"):
        StackedActors(nets(1), [3]).act(np.zeros((2, OBS_DIM), np.float32))


def test_a_pool_stacks_its_feed_forward_networks_and_keeps_one_group_per_opponent():
    a, b = nets(2)
    lstm = build_network(PolicyConfig(kind="lstm", actor_sizes=[16], critic_sizes=[16], lstm_hidden=16))
    specs = {"rule": PolicySpec("rule", "rule"), "v1": network_spec("v1", a), "v2": network_spec("v2", b),
             "rec": network_spec("rec", lstm)}
    picks = ["rule", "v1", "v2", "v1", "rec", "rule"]
    opp_rows = np.arange(len(picks))[:, None] * 2 + 1  # 1v1: the opponent is the second car of each env
    pool = build_pool(picks, specs, opp_rows, seed=3)
    # Results are counted per opponent: one group per distinct name, with its envs.
    assert pool.names() == ["rule", "v1", "v2", "rec"]
    assert pool.env_opponent.tolist() == [0, 1, 2, 1, 3, 0]
    assert [g.envs.tolist() for g in pool.groups] == [[0, 5], [1, 3], [2], [4]]
    # Acting: the rule bot and the LSTM alone, the two MLPs as one stack; every opponent row acts once.
    kinds = sorted(type(actor.policy).__name__ for actor in pool.actors)
    assert kinds == ["NetworkPolicy", "RuleBot", "StackedActors"]
    assert sorted(np.concatenate([actor.rows for actor in pool.actors]).tolist()) == opp_rows.ravel().tolist()
    stack = next(actor for actor in pool.actors if isinstance(actor.policy, StackedActors))
    assert stack.rows.tolist() == [3, 7, 5] and stack.policy.counts == [2, 1]


def test_opponents_sample_at_the_temperature_they_trained_at_and_stack_apart_from_others():
    """A snapshot trained at 0.5 (a distilled student's run) plays opponents' games at 0.5, not at 1: it draws its
    most likely action far more often, and stacks only with networks of its own temperature."""
    a, b, c = nets(3)
    with torch.no_grad():
        for net in (a, b, c):
            net.actor[-1].weight.mul_(300.0)  # logits of a few units (the head starts near-uniform): the temperature shows
    specs = {"v1": network_spec("v1", a), "v2": network_spec("v2", b, 0.5), "v3": network_spec("v3", c, 0.5)}
    picks = ["v1", "v2", "v3"] * 200
    opp_rows = np.arange(len(picks))[:, None]
    pool = build_pool(picks, specs, opp_rows, seed=3)
    stacks = sorted((actor.policy.temperature, len(actor.rows)) for actor in pool.actors)
    assert stacks == [(0.5, 400), (1.0, 200)]
    obs = np.random.default_rng(0).standard_normal((len(picks), OBS_DIM)).astype(np.float32)
    greedy_share = {}
    for actor in pool.actors:
        sampled, _ = actor.policy.act(obs[actor.rows])
        greedy, _ = actor.policy.act(obs[actor.rows], deterministic=True)
        greedy_share[actor.policy.temperature] = float((sampled == greedy).mean())
    assert greedy_share[0.5] > greedy_share[1.0] + 0.1, greedy_share
    # One network alone (heads, an LSTM: it does not stack) samples at its own temperature too.
    alone = PolicySpec("v2", "mlp", b.config, network_spec("v2", b).weights, temperature=0.5).policy()
    assert isinstance(alone, NetworkPolicy) and alone.temperature == 0.5
    with pytest.raises(ValueError, match="above 0"):
        NetworkPolicy(a, temperature=0.0)
