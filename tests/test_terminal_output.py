"""Names, paths and text from files never drive the terminal they are printed on (issue 37, item 9):
control characters are shown escaped, and `:name:` is never turned into an emoji."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agents.checkpoint import save_checkpoint
from agents.networks import build_network
from league.cli import app
from league.config import PolicyConfig
from league.files import printable
from league.registry import Registry

MLP = PolicyConfig(kind="mlp", actor_sizes=[8], critic_sizes=[8], activation="relu")
HOSTILE = "ck\x1b]0;PWNED\x07\x1b[2J\u202e"


def league(*args: str | Path):
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_harmless(output: str) -> None:
    for ch in ("\x1b", "\x07", "\u202e", "\r"):
        assert ch not in output, repr(output)


def test_printable_escapes_control_characters_and_keeps_text():
    assert printable("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"
    assert printable("line\nnext") == "line\\nnext"
    assert printable("line\nnext\ttab", keep_lines=True) == "line\nnext\ttab"
    assert printable("plain név ⚽") == "plain név ⚽"


def test_an_imported_file_name_with_escapes_is_shown_escaped(home, tmp_path):
    folder = tmp_path / HOSTILE
    save_checkpoint(folder / f"bot{HOSTILE}", build_network(MLP), steps=10, training_config={"stage": "1v1"})
    result = league("import", folder / f"bot{HOSTILE}.safetensors", "--name", "bot", "--home", home.root)
    assert result.exit_code == 0, result.output
    assert_harmless(result.output)
    shown = league("show", "bot", "--home", home.root)
    assert shown.exit_code == 0, shown.output
    assert_harmless(shown.output)
    reg = Registry.open(home.db_path)  # the dashboard shows the stored notes too
    try:
        assert_harmless(reg.agent_store.get("bot").notes)
    finally:
        reg.close()


def test_an_error_echoing_a_path_with_escapes_is_one_escaped_line(home, tmp_path):
    bad = tmp_path / f"nothing{HOSTILE}\nsecond line.safetensors"
    result = league("import", bad, "--home", home.root)
    assert result.exit_code == 2
    assert_harmless(result.output)
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "\\x1b" in result.output


def test_colons_in_echoed_config_text_stay_text(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("seed: root:x:0:0\n")
    result = league("tournament", "--games", "2", "--config", config, "--home", home.root)
    assert result.exit_code == 2
    assert "root:x:0:0" in result.output and "❌" not in result.output, result.output
