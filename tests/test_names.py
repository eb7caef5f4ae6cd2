"""One name rule, checked up front: a hostile --name never trains, never writes outside the home."""

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from league.cli import app
from league.errors import LeagueError
from league.names import MAX_NAME_LENGTH, MAX_RUN_NAME_LENGTH, check_name, check_run_name

HOSTILE = ["../../etc/evil", "a,b", " lead", "trail ", "-x", ".", "..", ".hidden", "a\nb", "a\n", "\x1b[31mred",
           "a/b", "a\\b", "", "x" * (MAX_NAME_LENGTH + 1), "naïve", "a b"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused_with_the_rule_stated(name):
    with pytest.raises(LeagueError, match=r"is not allowed: use 1 to 64 letters, digits, '-', '_' or '\.', "
                                          r"starting with a letter or digit\."):
        check_name(name)


@given(st.text(max_size=80))
def test_every_accepted_name_is_one_plain_path_component(name):
    try:
        check_name(name)
    except LeagueError:
        return
    assert Path(name).name == name and name not in (".", "..") and name[0].isalnum()
    assert name.isascii() and name.isprintable() and "," not in name and len(name) <= MAX_NAME_LENGTH
    # Two agents' names always fit a replay's file name (and its temporary name) on any filesystem.
    assert len(f".{99999:05d}-{name}-vs-{name}.replay.123456.0123456789ab.tmp".encode()) <= 255


def test_a_run_name_leaves_room_for_its_versions():
    run = "r" * MAX_RUN_NAME_LENGTH
    check_run_name(run)
    check_name(f"{run}-v999999")  # a million versions
    with pytest.raises(LeagueError, match="use 1 to 56"):
        check_run_name(run + "r")


def test_registry_refuses_bad_names(registry):
    for name in ("..", "a\nb", "-rm"):
        with pytest.raises(LeagueError, match="not allowed"):
            registry.agent_store.add(name, "mlp", 1)


@pytest.mark.parametrize("name", ["../../etc/evil", "a,b", " lead", "-x", "..", "a\nb"])
def test_train_refuses_a_bad_name_before_training_and_writes_nothing(home, name):
    before = sorted(p.name for p in home.root.parent.iterdir())
    start = time.monotonic()
    result = CliRunner().invoke(app, ["train", "--home", str(home.root), "--steps", "100000", f"--name={name}"])
    assert result.exit_code == 2 and "is not allowed" in result.output
    assert time.monotonic() - start < 60  # refused up front, not after the budget
    assert sorted(p.name for p in home.root.parent.iterdir()) == before  # nothing beside the home
    assert list(home.runs.iterdir()) == [] and list(home.checkpoints.iterdir()) == []


@pytest.mark.parametrize("flag", ["--resume", "--from"])
def test_train_refuses_a_bad_agent_name_up_front(home, flag):
    result = CliRunner().invoke(app, ["train", "--home", str(home.root), "--steps", "1000", flag, "../x"])
    assert result.exit_code == 2 and "Agent name '../x' is not allowed" in result.output


def test_import_and_export_refuse_bad_names(home, tmp_path):
    result = CliRunner().invoke(app, ["import", str(tmp_path / "x.safetensors"), "--name", "../x",
                                      "--home", str(home.root)])
    assert result.exit_code == 2 and "Agent name '../x' is not allowed" in result.output
    result = CliRunner().invoke(app, ["export", "../../x", str(tmp_path / "out"), "--home", str(home.root)])
    assert result.exit_code == 2 and "Agent name '../../x' is not allowed" in result.output
    assert not (tmp_path / "out").exists()

