"""Checkpoints: round trips, and every refusal a damaged or foreign file deserves."""

from __future__ import annotations

import errno
import json
import os
import pickle
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load as load_tensors

import agents.checkpoint as checkpoint_module
from agents.checkpoint import (
    FORMAT_VERSION,
    MAX_HEADER_BYTES,
    MAX_HIDDEN_LAYERS,
    checkpoint_paths,
    checkpoint_sha256,
    load_checkpoint,
    save_checkpoint,
    sha256_bytes,
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
                                    "activation": "elu", "lstm_hidden": 256, "car_frame": True,
                                    "action_space": "table", "prev_controls": False}
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


# --------------------------------------------------------------------------- hostile files


def write_raw(weights: Path, tensors: dict[str, torch.Tensor], meta_bytes: bytes) -> None:
    """A checkpoint pair from exact metadata bytes (which json.dumps would not write), correctly bound."""
    weights.with_suffix(".json").write_bytes(meta_bytes)
    weights.write_bytes(checkpoint_module._safetensors_bytes(tensors, sha256_bytes(meta_bytes)))


def rewrite_tensors(weights: Path, change) -> None:
    """Re-write a checkpoint with edited tensors (a dict from name to tensor), correctly re-bound."""
    tensors = dict(load_tensors(weights.read_bytes()))
    change(tensors)
    write_checkpoint(weights, tensors, json.loads(weights.with_suffix(".json").read_text()))


@pytest.fixture
def networks_built(monkeypatch) -> list[str]:
    """The devices every network the loader builds is built on ('meta': shapes only, no memory)."""
    built = []

    def spy(config, *args):
        built.append(str(torch.empty(0).device))  # the default device inside `with torch.device(...)`
        return build_network(config, *args)

    monkeypatch.setattr(checkpoint_module, "build_network", spy)
    return built


def test_an_architecture_far_wider_than_the_file_is_refused_before_building(saved, networks_built):
    # Before the check, build_network allocated 100000 x 100000 layers (~80 GB) before comparing shapes.
    weights, _ = saved
    rewrite_meta(weights, lambda m: m["architecture"].update(actor_sizes=[100_000, 100_000, 100_000]))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "agent.json" in one_sentence(exc)  # the config's width bound or the loader's parameter bound
    assert "cpu" not in networks_built


def test_an_architecture_that_disagrees_with_the_tensors_is_refused_before_building(saved, networks_built):
    weights, _ = saved
    rewrite_meta(weights, lambda m: m["architecture"].update(actor_sizes=[4096, 4096]))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    text = one_sentence(exc)
    assert "agent.safetensors" in text and "'actor.0.bias' has shape [32] but the architecture needs [4096]" in text
    assert networks_built == ["meta"]  # only the outline: no memory behind it


@pytest.mark.parametrize("architecture, words", [
    ({"actor_sizes": [16384] * 16}, "parameters"),
    ({"critic_sizes": [8] * 17}, "17 hidden layers"),
    ({"kind": "lstm", "lstm_hidden": 20_000}, "parameters"),
], ids=["parameters", "layers", "lstm"])
def test_architectures_beyond_the_bounds_are_refused(saved, networks_built, architecture, words):
    weights, _ = saved
    rewrite_meta(weights, lambda m: (m["architecture"].update(architecture), m.update(kind=m["architecture"]["kind"])))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert words in one_sentence(exc)
    assert "cpu" not in networks_built


def test_a_header_nested_too_deeply_is_refused(tmp_path):
    # Before, json.loads recursed into the 100k brackets and ended in RecursionError.
    depth = 100_000
    (tmp_path / "deep.safetensors").write_bytes(struct.pack("<Q", depth) + b"[" * depth)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(tmp_path / "deep.safetensors")
    assert "nested too deeply" in one_sentence(exc)


def test_metadata_nested_too_deeply_is_refused(saved):
    weights, _ = saved
    write_raw(weights, load_tensors(weights.read_bytes()), b"[" * 100_000)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "not valid JSON" in one_sentence(exc)


def test_our_headers_are_far_below_the_header_bound(tmp_path):
    # The deepest network the loader accepts, with Adam's state: the header lists ~300 tensors.
    config = PolicyConfig(kind="lstm", actor_sizes=[4] * MAX_HIDDEN_LAYERS, critic_sizes=[4] * MAX_HIDDEN_LAYERS,
                          lstm_hidden=4)
    net, optimizer = trained_net(config)
    save_checkpoint(tmp_path / "deep", net, optimizer=optimizer, training_config={"stage": "1v1", "x": "y" * 1000})
    (header_len,) = struct.unpack("<Q", (tmp_path / "deep.safetensors").read_bytes()[:8])
    assert header_len < MAX_HEADER_BYTES / 20


def test_an_oversized_file_is_refused_before_it_is_read(saved, monkeypatch):
    weights, _ = saved
    monkeypatch.setattr(checkpoint_module, "MAX_CHECKPOINT_BYTES", weights.stat().st_size - 1)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "more than a checkpoint can be" in one_sentence(exc)


@pytest.mark.parametrize("steps", [-1, 10**15, 2.5, True, "many"])
def test_impossible_step_counts_are_refused(saved, steps):
    weights, _ = saved
    rewrite_meta(weights, lambda m: m.update(steps=steps))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "steps" in one_sentence(exc)


@pytest.mark.parametrize("stats", ['{"return_m2": NaN}', '{"return_mean": Infinity}', '{"return_count": -1}',
                                   '{"return_mean": "x"}', '{"return_mean": true}', '[1, 2]'])
def test_learner_statistics_that_are_not_finite_numbers_are_refused(saved, stats):
    weights, _ = saved
    meta = json.loads(weights.with_suffix(".json").read_text())
    meta["optimizer"]["learner_stats"] = "STATS"
    raw = json.dumps(meta).replace('"STATS"', stats).encode()  # NaN and Infinity: what json.dumps refuses to write
    write_raw(weights, load_tensors(weights.read_bytes()), raw)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "learner statistic" in one_sentence(exc)


def _groups(change):
    def edit(meta):
        change(meta["optimizer"]["param_groups"])
    return edit


# Each damages an Adam state that loads today and would fail at the first update of a resumed run.
BAD_OPTIMIZER_META = {
    "groups not a list of objects": lambda m: m["optimizer"].update(param_groups=["adam"]),
    "no groups": lambda m: m["optimizer"].update(param_groups=[]),
    "params missing one": _groups(lambda g: g[0].update(params=g[0]["params"][:-1])),
    "params out of range": _groups(lambda g: g[0]["params"].append(99)),
    "params of bools": _groups(lambda g: g[0].update(params=[False, True] + g[0]["params"][2:])),
    "lr negative": _groups(lambda g: g[0].update(lr=-1.0)),
    "lr a string": _groups(lambda g: g[0].update(lr="fast")),
    "betas missing": _groups(lambda g: g[0].pop("betas")),
    "betas of one": _groups(lambda g: g[0].update(betas=[0.9])),
    "a setting that is an object": _groups(lambda g: g[0].update(foreach={"a": 1})),
    "scalars of a string": lambda m: m["optimizer"].update(scalars={"0": {"extra": "x"}}),
    "scalars of an unknown parameter": lambda m: m["optimizer"].update(scalars={"99": {"extra": 1.0}}),
    "tensors but no settings": lambda m: m.update(optimizer=None),
}
BAD_OPTIMIZER_TENSORS = {
    "exp_avg misshapen": lambda t: t.update({"optimizer/0/exp_avg": torch.zeros(3)}),
    "step not a scalar": lambda t: t.update({"optimizer/0/step": torch.zeros(2)}),
    "step negative": lambda t: t.update({"optimizer/0/step": torch.tensor(-5.0)}),
    "exp_avg_sq missing": lambda t: t.pop("optimizer/0/exp_avg_sq"),
    "unknown parameter": lambda t: t.update({"optimizer/99/exp_avg": torch.zeros(3)}),
    "parameter not an index": lambda t: t.update({"optimizer/01/exp_avg": t.pop("optimizer/1/exp_avg")}),
    "integer state": lambda t: t.update({"optimizer/0/exp_avg": t["optimizer/0/exp_avg"].long()}),
    "float8 state": lambda t: t.update({"optimizer/0/exp_avg": t["optimizer/0/exp_avg"].to(torch.float8_e4m3fn)}),
    "an extra state key": lambda t: t.update({"optimizer/0/momentum": t["optimizer/0/exp_avg"].clone()}),
}


@pytest.mark.parametrize("damage", list(BAD_OPTIMIZER_META) + list(BAD_OPTIMIZER_TENSORS))
def test_malformed_optimizer_state_is_refused_at_load(saved, damage):
    weights, _ = saved
    if damage in BAD_OPTIMIZER_META:
        rewrite_meta(weights, BAD_OPTIMIZER_META[damage])
    else:
        rewrite_tensors(weights, BAD_OPTIMIZER_TENSORS[damage])
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "malformed optimizer state" in one_sentence(exc)


def test_weights_of_an_uncheckable_dtype_are_refused(saved):
    # float8 weights: torch cannot tell whether they are finite (NotImplementedError before).
    weights, _ = saved

    def to_float8(tensors):
        tensors["model/actor.0.bias"] = tensors["model/actor.0.bias"].to(torch.float8_e4m3fn)

    rewrite_tensors(weights, to_float8)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "'actor.0.bias' holds non-finite or non-float values" in one_sentence(exc)


def test_a_loaded_optimizer_state_resumes_training(saved):
    ckpt = load_checkpoint(saved[0])
    optimizer = torch.optim.Adam(ckpt.net.parameters(), lr=1e-3, eps=1e-5, fused=True)  # as training/ppo.py makes it
    optimizer.load_state_dict(ckpt.optimizer_state)
    ckpt.net.train()
    logits, value = ckpt.net(torch.randn(4, OBS_DIM))
    (logits.mean() + value.mean()).backward()
    optimizer.step()
    assert all(bool(torch.isfinite(p).all()) for p in ckpt.net.parameters())


# --------------------------------------------------------------------------- writing


def test_a_failed_write_removes_its_temporary_file(saved, monkeypatch):
    weights, sha = saved

    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError):
        save_checkpoint(weights, build_network(MLP), steps=1)
    assert sorted(p.name for p in weights.parent.iterdir()) == ["agent.json", "agent.safetensors"]
    assert load_checkpoint(weights, expected_sha256=sha).meta.steps == 1234


def test_exclusive_writes_never_replace_a_checkpoint(saved):
    weights, sha = saved
    before = {p.name: sha256_file(p) for p in weights.parent.iterdir()}
    with pytest.raises(LeagueError) as exc:
        save_checkpoint(weights, build_network(MLP), steps=1, exclusive=True)
    assert "already exists" in one_sentence(exc)
    assert {p.name: sha256_file(p) for p in weights.parent.iterdir()} == before
    assert load_checkpoint(weights, expected_sha256=sha).meta.steps == 1234


def test_an_exclusive_write_that_loses_the_weights_race_removes_its_metadata(tmp_path, monkeypatch):
    net = build_network(MLP)
    weights, meta = checkpoint_paths(tmp_path / "c")
    link = os.link

    def another_writer_first(src, dst):
        if Path(dst) == weights:  # another writer publishes its weights between our two links
            weights.write_bytes(b"theirs")
        return link(src, dst)

    monkeypatch.setattr(os, "link", another_writer_first)
    with pytest.raises(LeagueError, match="already exists"):
        save_checkpoint(tmp_path / "c", net, exclusive=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.safetensors"] and weights.read_bytes() == b"theirs"


def test_of_writers_racing_for_one_name_exactly_one_wins(tmp_path):
    nets = [build_network(MLP) for _ in range(4)]
    barrier = threading.Barrier(len(nets))
    results: list[str | Exception] = [""] * len(nets)

    def write(i):
        barrier.wait()
        try:
            results[i] = save_checkpoint(tmp_path / "c", nets[i], steps=i, exclusive=True)
        except LeagueError as exc:
            results[i] = exc

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(nets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if isinstance(r, str)]
    assert len(winners) == 1, results
    assert all("already exists" in str(r) for r in results if not isinstance(r, str))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "c.safetensors"]
    assert load_checkpoint(tmp_path / "c", expected_sha256=winners[0]).sha256 == winners[0]


# --------------------------------------------------------------------------- weights checked as the network holds them (issue 37, item 4)


def test_float64_weights_that_overflow_float32_are_refused(saved):
    # Finite as float64, infinite once converted to the network's float32: the check ran before the conversion.
    weights, _ = saved
    rewrite_tensors(weights, lambda t: t.update({"model/actor.0.weight": torch.full_like(
        t["model/actor.0.weight"], 1e300, dtype=torch.float64)}))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "'actor.0.weight'" in one_sentence(exc)


def test_float32_weights_beyond_the_magnitude_bound_are_refused(saved):
    weights, _ = saved
    rewrite_tensors(weights, lambda t: t["model/critic.0.bias"].fill_(3e38))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    text = one_sentence(exc)
    assert "'critic.0.bias'" in text and f"{checkpoint_module.MAX_WEIGHT:g}" in text


def test_weights_at_the_magnitude_bound_still_load(saved):
    weights, _ = saved
    rewrite_tensors(weights, lambda t: t["model/critic.0.bias"].fill_(-checkpoint_module.MAX_WEIGHT))
    assert float(load_checkpoint(weights).net.state_dict()["critic.0.bias"].min()) == -checkpoint_module.MAX_WEIGHT


def test_float64_optimizer_state_that_overflows_float32_is_refused(saved):
    weights, _ = saved
    key = next(k for k in load_tensors(weights.read_bytes()) if k.endswith("/exp_avg_sq"))
    rewrite_tensors(weights, lambda t: t.update({key: torch.full_like(t[key], 1e300, dtype=torch.float64)}))
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "malformed optimizer state" in one_sentence(exc)


def test_saving_refuses_weights_beyond_the_magnitude_bound(tmp_path):
    net, _ = trained_net(MLP)
    with torch.no_grad():
        next(net.parameters()).fill_(1e7)
    with pytest.raises(LeagueError) as exc:
        save_checkpoint(tmp_path / "huge", net)
    assert "larger than" in one_sentence(exc)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(20)
def test_a_fifo_is_refused_at_once_for_what_it_is(tmp_path):
    fifo = tmp_path / "agent.safetensors"
    os.mkfifo(fifo)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(fifo)
    assert "is a named pipe (FIFO), not a file" in one_sentence(exc)


@pytest.mark.timeout(20)
def test_a_fifo_metadata_file_is_refused_at_once(saved):
    weights, _ = saved
    meta = weights.with_suffix(".json")
    meta.unlink()
    os.mkfifo(meta)
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(weights)
    assert "is a named pipe (FIFO), not a file" in one_sentence(exc)


def test_a_folder_is_refused_for_what_it_is(tmp_path):
    (tmp_path / "agent.safetensors").mkdir()
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(tmp_path / "agent.safetensors")
    assert "is a folder, not a file" in one_sentence(exc)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.timeout(20)
def test_a_device_is_refused_for_what_it_is(tmp_path):
    (tmp_path / "agent.safetensors").symlink_to("/dev/zero")
    with pytest.raises(LeagueError) as exc:
        load_checkpoint(tmp_path / "agent.safetensors")
    assert "is a device, not a file" in one_sentence(exc)
