"""Checkpoints: round trips, and every refusal a damaged or foreign file deserves."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load as load_tensors

from agents.checkpoint import (
    FORMAT_VERSION,
    checkpoint_paths,
    checkpoint_sha256,
    load_checkpoint,
    save_checkpoint,
    sha256_file,
    write_checkpoint,
)
from agents.networks import build_network
from agents.nn_policy import NetworkPolicy
from agents.obs import OBS_DIM, OBS_LAYOUT_VERSION
from league.config import PolicyConfig
from league.errors import LeagueError

MLP = PolicyConfig(kind="mlp", actor_sizes=[32, 16], critic_sizes=[16], activation="elu")
LSTM = PolicyConfig(kind="lstm", actor_sizes=[16], critic_sizes=[16], activation="tanh", lstm_hidden=8)


def one_sentence(exc: pytest.ExceptionInfo) -> str:
    """The refusal message, checked to be one line ending in a full stop."""
    text = str(exc.value)
    assert "\n" not in text and text.endswith((".", "?")), text
    return text


def trained_net(config: PolicyConfig):
    """A network after one optimiser step, so Adam has state to save."""
    torch.manual_seed(0)
    net = build_network(config)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    obs = torch.randn(8, OBS_DIM)
    if net.recurrent:
        logits, value = net.sequence_forward(obs[None], net.initial_state(8), torch.ones(1, 8))
    else:
        logits, value = net(obs)
    (-torch.log_softmax(logits, -1)[..., 0].mean() + value.pow(2).mean()).backward()
    optimizer.step()
    return net, optimizer


@pytest.fixture
def saved(tmp_path) -> tuple[Path, str]:
    net, optimizer = trained_net(MLP)
    sha = save_checkpoint(tmp_path / "agent", net, steps=1234, training_config={"stage": "1v1", "seed": 3},
                          optimizer=optimizer, notes="test")
    return tmp_path / "agent.safetensors", sha


def rewrite_meta(weights: Path, change) -> None:
    """Re-write a checkpoint with edited metadata, correctly re-bound (a well-formed file whose content we choose)."""
    _, meta_path = checkpoint_paths(weights)
    meta = json.loads(meta_path.read_text())
    change(meta)
    write_checkpoint(weights, load_tensors(weights.read_bytes()), meta)


@pytest.mark.parametrize("config", [MLP, LSTM], ids=["mlp", "lstm"])
def test_round_trip_keeps_weights_metadata_and_optimizer(tmp_path, config):
    net, optimizer = trained_net(config)
    sha = save_checkpoint(tmp_path / "ckpt", net, steps=77, training_config={"stage": "2v2"}, optimizer=optimizer)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.json", "ckpt.safetensors"]
    assert sha == sha256_file(tmp_path / "ckpt.safetensors") == checkpoint_sha256(tmp_path / "ckpt.json")

    ckpt = load_checkpoint(tmp_path / "ckpt.safetensors", expected_sha256=sha)
    assert ckpt.meta.kind == config.kind and ckpt.meta.architecture == config
    assert ckpt.meta.steps == 77 and ckpt.meta.training_config == {"stage": "2v2"}
    assert ckpt.meta.obs_layout_version == OBS_LAYOUT_VERSION and ckpt.meta.format_version == FORMAT_VERSION
    for name, tensor in net.state_dict().items():
        assert torch.equal(ckpt.net.state_dict()[name], tensor)

    restored = torch.optim.Adam(ckpt.net.parameters(), lr=1e-3)
    restored.load_state_dict(ckpt.optimizer_state)
    for key, value in optimizer.state_dict()["state"][0].items():
        assert torch.equal(restored.state_dict()["state"][0][key], value)

    obs = np.random.default_rng(0).normal(size=(5, OBS_DIM)).astype(np.float32)
    a, _ = NetworkPolicy(net).act(obs, deterministic=True)
    b, _ = NetworkPolicy(ckpt.net).act(obs, deterministic=True)
    assert np.array_equal(a, b)


def test_metadata_is_readable_json_with_versions(saved):
    weights, _ = saved
    meta = json.loads(weights.with_suffix(".json").read_text())
    assert meta["format"] == "rl-league-checkpoint" and meta["format_version"] == FORMAT_VERSION
    assert meta["architecture"] == {"kind": "mlp", "actor_sizes": [32, 16], "critic_sizes": [16],
                                    "activation": "elu", "lstm_hidden": 256, "car_frame": True}
    assert meta["obs_layout_version"] == OBS_LAYOUT_VERSION and meta["action_table_version"] == 1
    assert meta["steps"] == 1234 and meta["optimizer"]["class"] == "Adam"


def test_saving_refuses_non_finite_weights_and_writes_nothing(tmp_path):
    net = build_network(MLP)
    with torch.no_grad():
        net.actor[0].weight[0, 0] = float("nan")
    with pytest.raises(LeagueError) as exc:
        save_checkpoint(tmp_path / "bad", net)
    assert "NaN or infinite" in one_sentence(exc)
    assert list(tmp_path.iterdir()) == []


def test_saving_replaces_an_existing_checkpoint_atomically(tmp_path):
    net = build_network(MLP)
    first = save_checkpoint(tmp_path / "c", net, steps=1)
    second = save_checkpoint(tmp_path / "c", net, steps=2)
    assert first != second
    assert load_checkpoint(tmp_path / "c", expected_sha256=second).meta.steps == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "c.safetensors"]  # no temp files left
    plain = tmp_path / "plain"
    plain.write_bytes(b"")  # checkpoints get the permissions any new file gets (the umask's)
    assert (tmp_path / "c.safetensors").stat().st_mode == (tmp_path / "c.json").stat().st_mode == plain.stat().st_mode


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(tmp_path / "nothing.safetensors")
    assert "No checkpoint file" in one_sentence(exc)


def test_truncated_file_is_refused(saved):
    weights, _ = saved
    blob = weights.read_bytes()
    for keep in (len(blob) - 100, len(blob) // 2, 40, 5):
        weights.write_bytes(blob[:keep])
        with pytest.raises(LeagueError) as exc:
            load_checkpoint(weights)
        one_sentence(exc)


@pytest.mark.parametrize("where", ["data", "header", "length"])
def test_corrupt_bytes_are_refused(saved, where):
    weights, _ = saved
    blob = bytearray(weights.read_bytes())
    header_len = int.from_bytes(blob[:8], "little")
    at = {"data": len(blob) - 17, "header": 8 + header_len // 2, "length": 2}[where]
    blob[at] ^= 0x5A
    weights.write_bytes(bytes(blob))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    one_sentence(exc)


def test_wrong_sha256_is_refused(saved):
    weights, sha = saved
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights, expected_sha256="0" * 64)
    assert "sha256" in one_sentence(exc)
    assert load_checkpoint(weights, expected_sha256=sha.upper()).sha256 == sha


def test_future_layout_version_is_refused(saved):
    weights, _ = saved
    rewrite_meta(weights, lambda m: m.update(obs_layout_version=OBS_LAYOUT_VERSION + 1))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "observation layout version" in one_sentence(exc)


def test_future_action_table_and_format_versions_are_refused(saved):
    weights, _ = saved
    rewrite_meta(weights, lambda m: m.update(action_table_version=99))
    with pytest.raises(LeagueError, match="action table version 99"):
        load_checkpoint(weights)
    rewrite_meta(weights, lambda m: m.update(action_table_version=1, format_version=FORMAT_VERSION + 1))
    with pytest.raises(LeagueError, match="upgrade rl-league"):
        load_checkpoint(weights)


def test_missing_metadata_file_is_refused(saved):
    weights, _ = saved
    weights.with_suffix(".json").unlink()
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "no metadata file" in one_sentence(exc)


def test_metadata_missing_a_field_is_refused(saved):
    weights, _ = saved
    rewrite_meta(weights, lambda m: m.pop("kind"))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "missing the field 'kind'" in one_sentence(exc)


def test_metadata_swapped_from_another_checkpoint_is_refused(saved, tmp_path):
    weights, _ = saved
    save_checkpoint(tmp_path / "other", build_network(MLP), steps=5)
    weights.with_suffix(".json").write_bytes((tmp_path / "other.json").read_bytes())
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "does not belong" in one_sentence(exc)


def test_weights_that_do_not_fit_the_architecture_are_refused(saved):
    weights, _ = saved
    rewrite_meta(weights, lambda m: m["architecture"].update(actor_sizes=[64, 16]))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "shape" in one_sentence(exc)
    rewrite_meta(weights, lambda m: m["architecture"].update(activation="swish"))
    with pytest.raises(LeagueError, match="activation"):
        load_checkpoint(weights)


def test_a_checkpoint_whose_first_byte_is_the_pickle_opcode_still_loads(tmp_path):
    # The first byte of a safetensors file is its header length's low byte: 0x80 must not read as a pickle.
    for width in range(1, 400):
        config = PolicyConfig(kind="mlp", actor_sizes=[width], critic_sizes=[2])
        save_checkpoint(tmp_path / "c", build_network(config))
        blob = (tmp_path / "c.safetensors").read_bytes()
        if blob[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05"):
            break
    else:
        pytest.fail("no architecture gave a header length starting with a pickle's bytes")
    assert load_checkpoint(tmp_path / "c").meta.architecture == config


class RunsCode:
    """Unpickling this would create a marker file: the proof that a loader executed it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("name", ["evil.safetensors", "evil.pt", "evil_torch.pt"])
def test_a_pickle_that_would_run_code_is_refused_and_never_unpickled(tmp_path, name):
    marker = tmp_path / "pwned"
    evil = tmp_path / name
    if name.startswith("evil_torch"):
        torch.save({"payload": RunsCode(marker)}, evil)  # a zip archive holding the pickle
    else:
        evil.write_bytes(pickle.dumps({"state_dict": RunsCode(marker)}))
    assert not marker.exists()
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(evil)
    assert "pickle" in one_sentence(exc)
    assert not marker.exists()
