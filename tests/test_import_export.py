"""`league import` and `league export` against real league homes, through the CLI."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load as load_tensors
from typer.testing import CliRunner

from agents import transfer
from agents.checkpoint import load_checkpoint, save_checkpoint, sha256_file, write_checkpoint
from agents.loading import load_policy
from agents.networks import build_network
from agents.nn_policy import NetworkPolicy
from agents.obs import OBS_DIM
from agents.rule_bot import RuleBot
from league.cli import app
from league.config import PolicyConfig
from league.home import LeagueHome
from league.registry import BASELINES, Registry

MLP = PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], activation="relu")
LSTM = PolicyConfig(kind="lstm", actor_sizes=[8], critic_sizes=[8], activation="relu", lstm_hidden=8)


def league(*args: str | Path) -> "Result":  # noqa: F821 (click's Result)
    return CliRunner().invoke(app, [str(a) for a in args])


def agent_names(home: LeagueHome) -> list[str]:
    reg = Registry.open(home.db_path)
    try:
        return reg.agent_store.names()
    finally:
        reg.close()


def registered(home: LeagueHome, name: str):
    reg = Registry.open(home.db_path)
    try:
        return reg.agent_store.get(name)
    finally:
        reg.close()


@pytest.fixture
def striker(tmp_path) -> tuple[Path, str]:
    """A checkpoint trained 'elsewhere', with its training config naming the 2v2 stage."""
    outside = tmp_path / "outside"
    sha = save_checkpoint(outside / "striker", build_network(MLP), steps=4096,
                          training_config={"stage": "2v2", "seed": 1})
    return outside / "striker.safetensors", sha


def test_import_registers_copies_and_records_the_sha256(home, striker):
    file, sha = striker
    result = league("import", file, "--name", "striker-v1", "--stage", "1v1", "--home", home.root)
    assert result.exit_code == 0, result.output
    assert "Imported striker-v1" in result.stdout

    agent = registered(home, "striker-v1")
    assert (agent.kind, agent.team_size, agent.steps_trained) == ("mlp", 1, 4096)
    assert agent.checkpoint_sha256 == sha
    assert agent.config == {"stage": "2v2", "seed": 1}
    copied = home.root / agent.checkpoint_path
    assert copied.parent == home.checkpoints and sha256_file(copied) == sha
    assert copied.with_suffix(".json").is_file()

    policy = load_policy(agent, home_root=home.root, seed=0)
    assert isinstance(policy, NetworkPolicy) and policy.name == "striker-v1"
    actions, _ = policy.act(np.zeros((3, OBS_DIM), np.float32))
    assert actions.shape == (3,)


def test_import_defaults_to_the_file_stem_and_the_recorded_stage(home, striker):
    file, _ = striker
    result = league("import", file, "--home", home.root)
    assert result.exit_code == 0, result.output
    assert registered(home, "striker").team_size == 2


def test_import_without_any_stage_asks_for_one(home, tmp_path):
    save_checkpoint(tmp_path / "anon", build_network(MLP))
    result = league("import", tmp_path / "anon.safetensors", "--home", home.root)
    assert result.exit_code == 2
    assert "--stage" in result.stderr
    assert agent_names(home) == list(BASELINES)


def refused(home: LeagueHome, file: Path, *extra: str) -> str:
    """Import `file`, expect exit code 2 with one line on stderr, nothing registered and nothing copied."""
    result = league("import", file, "--stage", "1v1", "--home", home.root, *extra)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error:") and len(result.stderr.strip().splitlines()) == 1
    assert agent_names(home) == list(BASELINES)
    assert list(home.checkpoints.iterdir()) == []
    return result.stderr


def test_a_pickle_is_refused_without_running_it(home, tmp_path):
    marker = tmp_path / "pwned"

    class RunsCode:
        def __reduce__(self):
            return (Path.touch, (marker,))

    for name in ("bot.safetensors", "bot.pt", "bot.pkl"):
        (tmp_path / name).write_bytes(pickle.dumps({"model": RunsCode()}))
        assert "pickle" in refused(home, tmp_path / name)
    assert not marker.exists()


def test_damaged_checkpoints_are_refused(home, striker):
    file, _ = striker
    blob = file.read_bytes()
    file.write_bytes(blob[: len(blob) - 64])
    assert "corrupt" in refused(home, file)
    file.write_bytes(blob[:-1] + bytes([blob[-1] ^ 0xFF]))
    assert "corrupt" in refused(home, file)
    file.write_bytes(blob)
    file.with_suffix(".json").unlink()
    assert "metadata" in refused(home, file)


def test_a_missing_file_is_refused(home, tmp_path):
    assert "No checkpoint file" in refused(home, tmp_path / "nope.safetensors")


def test_a_taken_name_is_refused_and_nothing_more_is_copied(home, striker):
    file, _ = striker
    assert league("import", file, "--name", "dup", "--home", home.root).exit_code == 0
    before = sorted(home.checkpoints.iterdir())
    result = league("import", file, "--name", "dup", "--home", home.root)
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert sorted(home.checkpoints.iterdir()) == before


def test_a_bad_stage_or_name_is_refused(home, striker):
    file, _ = striker
    assert "Unknown stage" in refused(home, file, "--stage", "4v4")
    assert "not allowed" in refused(home, file, "--name", "a/b")


def test_export_writes_the_verified_checkpoint_and_metadata(home, striker, tmp_path):
    file, sha = striker
    assert league("import", file, "--name", "striker", "--home", home.root).exit_code == 0
    out_dir = tmp_path / "exported" / "deep"
    result = league("export", "striker", out_dir, "--home", home.root)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out_dir.iterdir()) == ["striker.json", "striker.safetensors"]
    assert load_checkpoint(out_dir / "striker.safetensors", expected_sha256=sha).meta.steps == 4096

    # What one league exports, another imports unchanged.
    other = LeagueHome(tmp_path / "other-league")
    assert league("init", "--home", other.root).exit_code == 0
    assert league("import", out_dir / "striker.safetensors", "--home", other.root).exit_code == 0
    assert registered(other, "striker").checkpoint_sha256 == sha


def test_export_refuses_a_checkpoint_changed_since_it_was_registered(home, tmp_path):
    save_checkpoint(tmp_path / "a", build_network(LSTM), training_config={"stage": "3v3"})
    assert league("import", tmp_path / "a.safetensors", "--home", home.root).exit_code == 0
    agent = registered(home, "a")
    assert agent.kind == "lstm" and load_policy(agent, home_root=home.root).recurrent
    # Someone overwrites the league's copy with another valid checkpoint.
    save_checkpoint(home.root / agent.checkpoint_path, build_network(LSTM), steps=1)
    result = league("export", "a", tmp_path / "out", "--home", home.root)
    assert result.exit_code == 2 and "sha256" in result.stderr
    assert not (tmp_path / "out").exists()


def test_export_refuses_baselines_unknown_names_and_overwrites(home, striker, tmp_path):
    result = league("export", "rule", tmp_path / "out", "--home", home.root)
    assert result.exit_code == 2 and "no checkpoint" in result.stderr
    result = league("export", "strikr", tmp_path / "out", "--home", home.root)
    assert result.exit_code == 2 and "No agent named 'strikr'" in result.stderr
    file, _ = striker
    assert league("import", file, "--home", home.root).exit_code == 0
    assert league("export", "striker", tmp_path / "out", "--home", home.root).exit_code == 0
    result = league("export", "striker", tmp_path / "out", "--home", home.root)
    assert result.exit_code == 2 and "already exists" in result.stderr


def test_load_policy_builds_baselines_by_kind(home):
    assert isinstance(load_policy("rule"), RuleBot)
    assert load_policy(registered(home, "random")).name == "random"


# --------------------------------------------------------------------------- hostile checkpoints


def _trained_with_adam(tmp_path: Path) -> Path:
    """A checkpoint with the optimizer state `league train --resume` would load."""
    net = build_network(MLP)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    logits, value = net(torch.randn(4, OBS_DIM))
    (logits.mean() + value.mean()).backward()
    optimizer.step()
    save_checkpoint(tmp_path / "resumable", net, steps=64, training_config={"stage": "1v1"}, optimizer=optimizer)
    return tmp_path / "resumable.safetensors"


def _rewrite(file: Path, change_meta=None, change_tensors=None) -> None:
    tensors = dict(load_tensors(file.read_bytes()))
    meta = json.loads(file.with_suffix(".json").read_text())
    (change_meta or (lambda m: None))(meta)
    (change_tensors or (lambda t: None))(tensors)
    write_checkpoint(file, tensors, meta)


def test_malformed_optimizer_state_is_refused_at_import(home, tmp_path):
    # Before, the import succeeded and `league train --resume` of the agent failed with a traceback.
    file = _trained_with_adam(tmp_path)
    assert load_checkpoint(file).optimizer_state is not None
    _rewrite(file, change_tensors=lambda t: t.update({"optimizer/0/exp_avg": torch.zeros(3)}))
    assert "malformed optimizer state" in refused(home, file)


def test_impossible_metadata_is_refused_at_import(home, tmp_path):
    file = _trained_with_adam(tmp_path)
    _rewrite(file, change_meta=lambda m: m.update(steps=-5))
    assert "steps" in refused(home, file)
    _rewrite(file, change_meta=lambda m: (m.update(steps=5), m["architecture"].update(actor_sizes=[100_000] * 3)))
    assert "resumable.json" in refused(home, file)


def test_export_never_replaces_a_file_that_appears_while_it_writes(home, striker, tmp_path, monkeypatch):
    file, _ = striker
    assert league("import", file, "--name", "striker", "--home", home.root).exit_code == 0
    out = tmp_path / "out"
    copy_pair = transfer._copy_pair

    def another_export_lands_first(*args, **kwargs):
        out.mkdir(exist_ok=True)
        (out / "striker.safetensors").write_bytes(b"theirs")  # after export checked, before it writes
        copy_pair(*args, **kwargs)

    monkeypatch.setattr(transfer, "_copy_pair", another_export_lands_first)
    result = league("export", "striker", out, "--home", home.root)
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["striker.safetensors"]  # our half-written .json removed
    assert (out / "striker.safetensors").read_bytes() == b"theirs"
