"""Car-frame input features (agents/features.py) and the networks that use them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from safetensors.torch import load as load_tensors

from agents.checkpoint import load_checkpoint, save_checkpoint, write_checkpoint
from agents.features import N_FEATURES, CarFrame
from agents.networks import build_network
from agents.obs import (
    C_BALL_REL_POS,
    C_FWD,
    C_POS,
    C_PRESENT,
    C_UP,
    C_VEL,
    LAYOUT,
    OBS_DIM,
)
from league.config import PolicyConfig
from league.errors import LeagueError

FRAME_MLP = PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16])  # car_frame is the default


def scene(car_pos, fwd, up, ball, car_vel=(0.0, 0.0, 0.0), opp=None) -> torch.Tensor:
    """One observation row holding a car, the ball and optionally an opponent (observation units)."""
    obs = np.zeros(OBS_DIM, np.float32)
    s = LAYOUT["self"].start
    obs[s + C_PRESENT] = 1.0
    obs[s + C_POS.start:s + C_POS.stop] = car_pos
    obs[s + C_FWD.start:s + C_FWD.stop] = fwd
    obs[s + C_UP.start:s + C_UP.stop] = up
    obs[s + C_VEL.start:s + C_VEL.stop] = car_vel
    obs[s + C_BALL_REL_POS.start:s + C_BALL_REL_POS.stop] = np.subtract(ball, car_pos)
    if opp is not None:
        o = LAYOUT["opp0"].start
        obs[o + C_PRESENT] = 1.0
        obs[o + C_POS.start:o + C_POS.stop] = opp
    return torch.from_numpy(obs)[None]


def features(obs: torch.Tensor) -> torch.Tensor:
    out = CarFrame()(obs)
    assert out.shape == (1, OBS_DIM + N_FEATURES)
    assert torch.equal(out[:, :OBS_DIM], obs)  # the observation itself is kept
    return out[0, OBS_DIM:]


def test_ball_ahead_and_to_the_left_read_in_the_cars_frame():
    # A car facing +y, upright: forward is +y, left is -x.
    ahead = features(scene((0, 0, 0), (0, 1, 0), (0, 0, 1), ball=(0, 2, 0)))
    assert ahead[:3].tolist() == pytest.approx([2, 0, 0])
    assert ahead[6].item() == pytest.approx(2.0)  # distance
    left = features(scene((0, 0, 0), (0, 1, 0), (0, 0, 1), ball=(-1, 0, 0)))
    assert left[:3].tolist() == pytest.approx([0, 1, 0])
    assert left[3:6].tolist() == pytest.approx([0, 1, 0])  # direction


def test_features_do_not_change_when_the_scene_turns_about_the_car():
    """Rotating car, ball, velocity and opponent together about the vertical through the car
    leaves every car-frame feature alone (the goal directions excepted: the goals stay put)."""
    rng = np.random.default_rng(3)
    fwd = np.array([0.6, 0.8, 0.0])
    car_vel, ball, opp = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    before = features(scene((0, 0, 0), fwd, (0, 0, 1), ball, car_vel, opp))
    a = math.radians(73)
    turn = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    after = features(scene((0, 0, 0), turn @ fwd, (0, 0, 1), turn @ ball, turn @ car_vel, turn @ opp))
    assert after[:19].tolist() == pytest.approx(before[:19].tolist(), abs=1e-5)


def test_alignment_says_whether_a_push_goes_towards_the_goal_attacked():
    # The goal attacked is at +y: a car below the ball on the y axis pushes it goalwards.
    behind = features(scene((0, -1, 0), (0, 1, 0), (0, 0, 1), ball=(0, 0, 0)))
    in_front = features(scene((0, 1, 0), (0, -1, 0), (0, 0, 1), ball=(0, 0, 0)))
    assert behind[-1].item() > 0.99 and in_front[-1].item() < -0.99
    assert behind[-4:-1].tolist() == pytest.approx([1, 0, 0], abs=0.07)  # the goal: ahead (a little up)


def test_no_opponent_gives_zero_opponent_features():
    assert features(scene((0, 0, 0), (1, 0, 0), (0, 0, 1), ball=(1, 1, 0)))[16:19].tolist() == [0, 0, 0]


def test_car_frame_networks_take_the_league_observation_only():
    for kind in ("mlp", "lstm"):
        net = build_network(PolicyConfig(kind=kind, actor_sizes=[8], critic_sizes=[8], lstm_hidden=8, car_frame=True))
        logits, value, _ = net.step(torch.randn(5, OBS_DIM), net.initial_state(5), torch.zeros(5))
        assert logits.shape[0] == 5 and value.shape == (5,)
    with pytest.raises(LeagueError, match="196-wide observation"):
        build_network(PolicyConfig(kind="mlp", car_frame=True), obs_dim=4, n_actions=2)


def test_checkpoints_keep_car_frame_and_older_files_load_without_it(tmp_path):
    net = build_network(FRAME_MLP)
    save_checkpoint(tmp_path / "framed", net)
    loaded = load_checkpoint(tmp_path / "framed.safetensors")
    assert loaded.net.config.car_frame
    obs = torch.randn(3, OBS_DIM)
    assert torch.equal(loaded.net.logits(obs), net.logits(obs))

    save_checkpoint(tmp_path / "old", build_network(PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16],
                                                                        car_frame=False)))
    weights = tmp_path / "old.safetensors"
    meta = json.loads((tmp_path / "old.json").read_text())
    del meta["architecture"]["car_frame"]  # as written before the field existed
    write_checkpoint(weights, load_tensors(weights.read_bytes()), meta)
    assert load_checkpoint(tmp_path / "old.safetensors").net.config.car_frame is False
