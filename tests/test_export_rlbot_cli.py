"""`league export NAME --rlbot DIR` through the CLI: the folder, the zip, the record `league show`
lists, and the refusals (nothing half-written). The bot's behaviour is tested in test_rlbot_export.py."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents import rlbot_export
from agents.checkpoint import save_checkpoint, sha256_file
from agents.networks import build_network
from league.cli import app
from league.config import PolicyConfig
from league.registry import Registry

MLP = PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], activation="relu")
LSTM = PolicyConfig(kind="lstm", actor_sizes=[8], critic_sizes=[8], activation="relu", lstm_hidden=8)


def league(*args: str | Path):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def trained(home, tmp_path) -> str:
    """An MLP agent with a parent (lineage), registered through `league import`."""
    for name, parent in (("striker-v1", None), ("striker-v2", "striker-v1")):
        save_checkpoint(tmp_path / "outside" / name, build_network(MLP), steps=4096,
                        training_config={"stage": "2v2", "game": {"tick_skip": 8}})
        assert league("import", tmp_path / "outside" / f"{name}.safetensors", "--home", home.root).exit_code == 0
    reg = Registry.open(home.db_path)
    try:
        reg.db.execute("UPDATE agents SET parent_id = (SELECT id FROM agents WHERE name = 'striker-v1') "
                       "WHERE name = 'striker-v2'")
        reg.db.conn.commit()
    finally:
        reg.close()
    return "striker-v2"


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_export_writes_a_bot_folder_a_zip_and_a_record(home, trained, tmp_path):
    dest = tmp_path / "bots" / "striker"
    result = league("export", trained, "--rlbot", dest, "--zip", "--home", home.root)
    assert result.exit_code == 0, result.output
    names = {p.name for p in dest.iterdir()}
    assert {"bot.toml", "bot.py", "loadout.toml", "README.md", "requirements.txt", "manifest.json",
            "weights.safetensors"} <= names
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["agent"] == trained and manifest["lineage"] == ["striker-v1"]
    assert manifest["deterministic"] is True
    with zipfile.ZipFile(dest.with_name("striker.zip")) as z:
        assert {n.split("/", 1)[0] for n in z.namelist()} == {"striker"}
        assert z.read("striker/manifest.json") == (dest / "manifest.json").read_bytes()
    assert leftovers(dest.parent) == []

    shown = league("show", trained, "--home", home.root)
    assert shown.exit_code == 0 and "Exports" in shown.output and "argmax" in shown.output
    reg = Registry.open(home.db_path, readonly=True)
    try:
        (record,) = reg.export_store.of(trained)
    finally:
        reg.close()
    assert record.path == str(dest) and record.zip_path == str(dest.with_name("striker.zip"))
    assert record.manifest_sha256 == sha256_file(dest / "manifest.json")


def test_sampled_exports_say_so(home, trained, tmp_path):
    assert league("export", trained, "--rlbot", tmp_path / "b", "--sampled", "--home", home.root).exit_code == 0
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["deterministic"] is False
    assert "sampled" in league("show", trained, "--home", home.root).output


def test_a_non_empty_folder_is_kept_even_when_forced(home, trained, tmp_path):
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("my notes")
    result = league("export", trained, "--rlbot", dest, "--home", home.root)
    assert result.exit_code == 2 and "not an rl-league export" in result.stderr and "--force" not in result.stderr
    result = league("export", trained, "--rlbot", dest, "--force", "--home", home.root)
    assert result.exit_code == 2 and "not an rl-league export" in result.stderr  # more cases: test_export_destination.py
    assert sorted(p.name for p in dest.iterdir()) == ["notes.txt"]
    assert leftovers(tmp_path) == []


def test_an_empty_folder_is_used(home, trained, tmp_path):
    (tmp_path / "empty").mkdir()
    assert league("export", trained, "--rlbot", tmp_path / "empty", "--home", home.root).exit_code == 0
    assert (tmp_path / "empty" / "bot.py").is_file()


@pytest.mark.parametrize("args, message", [
    (("rule",), "no weights to export"),
    (("random",), "no weights to export"),
    (("strikr",), "No agent named 'strikr'"),
])
def test_agents_without_weights_and_unknown_names_are_refused(home, trained, tmp_path, args, message):
    result = league("export", *args, "--rlbot", tmp_path / "out", "--home", home.root)
    assert result.exit_code == 2 and message in result.stderr
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_option_mistakes_are_one_sentence(home, trained, tmp_path):
    result = league("export", trained, tmp_path / "a", "--rlbot", tmp_path / "b", "--home", home.root)
    assert result.exit_code == 2 and "not both" in result.stderr
    result = league("export", trained, tmp_path / "a", "--zip", "--home", home.root)
    assert result.exit_code == 2 and "go with --rlbot" in result.stderr
    result = league("export", trained, "--home", home.root)
    assert result.exit_code == 2 and "--rlbot DIR" in result.stderr
    (tmp_path / "file").write_text("x")
    result = league("export", trained, "--rlbot", tmp_path / "file", "--home", home.root)
    assert result.exit_code == 2 and "is a file" in result.stderr


def test_an_existing_zip_is_kept_unless_forced(home, trained, tmp_path):
    (tmp_path / "bot.zip").write_bytes(b"someone's archive")
    result = league("export", trained, "--rlbot", tmp_path / "bot", "--zip", "--home", home.root)
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert (tmp_path / "bot.zip").read_bytes() == b"someone's archive" and not (tmp_path / "bot").exists()


def test_an_export_that_fails_part_way_leaves_nothing(home, trained, tmp_path, monkeypatch):
    real = rlbot_export.write_rlbot_bot

    def half_then_fail(ckpt, dest, **kw):
        real(ckpt, dest, **kw)
        raise OSError(28, "No space left on device")

    dest = tmp_path / "out"
    assert league("export", trained, "--rlbot", dest, "--home", home.root).exit_code == 0  # the previous export
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    monkeypatch.setattr(rlbot_export, "write_rlbot_bot", half_then_fail)
    result = league("export", trained, "--rlbot", dest, "--force", "--zip", "--home", home.root)
    assert result.exit_code == 2 and "No space left on device" in result.stderr
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before  # the old folder is untouched
    assert leftovers(tmp_path) == [] and not (tmp_path / "out.zip").exists()
    reg = Registry.open(home.db_path, readonly=True)
    try:
        assert len(reg.export_store.of(trained)) == 1  # the previous export's record only
    finally:
        reg.close()


def test_an_lstm_agent_exports_too(home, tmp_path):
    save_checkpoint(tmp_path / "rec", build_network(LSTM), steps=10, training_config={"stage": "3v3"})
    assert league("import", tmp_path / "rec.safetensors", "--home", home.root).exit_code == 0
    assert league("export", "rec", "--rlbot", tmp_path / "rec-bot", "--home", home.root).exit_code == 0
    assert json.loads((tmp_path / "rec-bot" / "manifest.json").read_text())["kind"] == "lstm"
