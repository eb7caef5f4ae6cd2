"""ppo.temperature: the policy a rollout samples and the one PPO's ratio and entropy read are one and the
same, softmax(logits / temperature), in real RocketSim games (a ratio of 1 before any step), while the
guide term fits the logits as they are."""

import numpy as np
import pytest
import torch

from agents.networks import build_network
from arena.engine.game import GameSpec
from arena.engine.vector import VecGame
from league.config_tree import ConfigError, validate
from league.config import OpponentMix, PolicyConfig, PpoConfig
from training.collector import Collector
from training.guide import UpdatePlan
from training.ppo import PpoLearner

SELF_PLAY = OpponentMix(latest=1.0, past=0, pfsp=0, rule=0, random=0)


def first_log_ratio(collect_temperature: float, learn_temperature: float) -> float:
    """Mean |log pi_learner - log pi_behaviour| on the first minibatch of an update of one collected round."""
    torch.manual_seed(0)
    config = PolicyConfig(actor_sizes=[32], critic_sizes=[32], action_space="necto")
    with VecGame(GameSpec(team_size=1), workers=1, envs_per_worker=2, placement="in-process", seed=3) as games:
        collector = Collector(games, SELF_PLAY, 1, config, seed=3, goal_weight=10.0,
                              temperature=collect_temperature)
        net = build_network(config)
        with torch.no_grad():
            for p in net.actor.parameters():
                p.mul_(20.0)  # a confident policy: the temperature changes it (a new network's logits are near 0)
        collector.set_weights(net.state_dict(), 0)
        segment = collector.collect(16)
    learner = PpoLearner(net, PpoConfig(steps_per_env=16, minibatch_size=64, epochs=1, temperature=learn_temperature),
                         slots=segment.actions.shape[1], obs_dim=segment.obs.shape[-1])
    learner.ingest(segment)
    return learner.update(torch.from_numpy(segment.next_obs), torch.from_numpy(segment.next_starts),
                          UpdatePlan()).start_log_ratio


def test_the_update_reads_the_tempered_policy_the_rollout_sampled():
    assert first_log_ratio(0.5, 0.5) < 1e-5
    assert first_log_ratio(1.0, 1.0) < 1e-5
    assert first_log_ratio(0.5, 1.0) > 0.05  # a learner reading the raw logits sees another policy


def test_a_lower_temperature_samples_the_argmax_more_often():
    config = PolicyConfig(actor_sizes=[32], critic_sizes=[32], action_space="necto")
    net = build_network(config)
    torch.manual_seed(1)
    logits = 2.0 * torch.randn(4000, net.space.logits)
    greedy = net.space.greedy(logits)
    gen = torch.Generator().manual_seed(0)
    share = {t: float((net.space.sample(logits, gen, t)[0] == greedy).float().mean()) for t in (1.0, 0.5, 0.1)}
    assert share[1.0] < share[0.5] < share[0.1], share
    assert share[0.1] > 0.8, share


def test_temperature_is_a_checked_setting():
    with pytest.raises(ConfigError, match="temperature"):
        validate(PpoConfig, {"temperature": 0.0}, "--set")
