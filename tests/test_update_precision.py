"""Issue 59: the PPO update in bf16 on a CPU (training.amp auto, where the CPU multiplies bf16 in hardware:
AMX tiles or AVX-512 BF16) learns what the float32 update learns. On real game states (RocketSim, random
actions), from the same weights and the same minibatch, the bf16 update's losses are within tolerance of
float32's, and its step points the same way."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

from agents.networks import build_network
from arena.engine.vector import VecGame
from league.config import GameConfig, PolicyConfig, PpoConfig, RunnerConfig
from training.accel import make_accel
from training.ppo import PpoLearner


@pytest.fixture(scope="module")
def game_states() -> np.ndarray:
    """1,024 observations of real 1v1 play (random actions), every car's."""
    rng = np.random.default_rng(3)
    rows = []
    with VecGame(GameConfig(), RunnerConfig(workers=1, envs_per_worker=8, backend="in-process"), seed=3) as games:
        obs = games.reset()
        for _ in range(64):
            rows.append(obs.copy())
            obs, *_ = games.step(rng.integers(0, 90, size=games.num_agents))
    return np.concatenate(rows)[:1024].astype(np.float32)


def one_step(net, batch, amp: str) -> tuple[dict, dict[str, torch.Tensor]]:
    """One minibatch step of a copy of `net` under `amp`; its stats and the change of every weight."""
    model = copy.deepcopy(net)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    learner = PpoLearner(model, PpoConfig(learning_rate=1e-4), 1, obs_dim=batch["obs"].shape[1],
                         accel=make_accel(torch.device("cpu"), amp))
    stats = learner._minibatch_step(batch, guide_weight=0.0, distilling=False)
    after = model.state_dict()
    return stats._asdict() if hasattr(stats, "_asdict") else dataclasses.asdict(stats), {k: after[k] - before[k] for k in before}


def test_a_bf16_update_matches_the_float32_update_on_real_game_states(game_states):
    torch.manual_seed(0)
    net = build_network(PolicyConfig())
    obs = torch.from_numpy(game_states)
    with torch.no_grad():
        logits, values = net(obs)
        actions, logprobs = net.space.sample(logits, torch.Generator().manual_seed(1))
    gen = torch.Generator().manual_seed(2)
    batch = {"obs": obs, "actions": actions, "logprobs": logprobs, "values": values.squeeze(-1) if values.dim() > 1
             else values, "advantages": torch.randn(len(obs), generator=gen),
             "returns": values.reshape(-1) + torch.randn(len(obs), generator=gen)}
    exact, step32 = one_step(net, batch, "off")
    bf16, step16 = one_step(net, batch, "bf16")
    for key in ("value_loss", "entropy"):
        assert bf16[key] == pytest.approx(exact[key], rel=0.02), key
    assert abs(bf16["policy_loss"] - exact["policy_loss"]) < 0.01  # the ratio stays within bf16's rounding of 1
    assert bf16["abs_log_ratio"] < 0.02
    flat32 = torch.cat([d.flatten() for d in step32.values()])
    flat16 = torch.cat([d.flatten() for d in step16.values()])
    cosine = torch.nn.functional.cosine_similarity(flat32, flat16, dim=0)
    assert cosine > 0.95, float(cosine)  # Adam's first step is sign-like: the two steps point the same way
