"""Names, paths and text from files never drive the terminal they are printed on (issue 37, item 9):
control characters are shown escaped, and `:name:` is never turned into an emoji."""

from __future__ import annotations

from pathlib import Path

import pytest
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


# Issue 47, item 10: hostile text was echoed whole (a 10,000-character name, megabytes of a file's bytes).
LONG = "a" * 10_000


def one_short_line(result, most: int = 600) -> str:
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and len(result.output) < most, result.output[:300]
    return result.output


def test_a_long_name_is_quoted_clipped_with_its_length(home):
    for args in (["show", LONG], ["train", "--name", LONG, "--steps", "10"], ["probe", LONG],
                 ["match", LONG, "rule", "--stage", "1v1"], ["tournament", "--agents", f"{LONG},rule"],
                 ["roles", LONG], ["bot", "add", LONG, "."]):
        output = one_short_line(league(*args, "--home", home.root))
        assert "(10,000 characters)" in output, output


def test_a_path_too_long_for_the_system_is_one_sentence(home, tmp_path):
    output = one_short_line(league("bot", "add", "element", tmp_path / LONG, "--home", home.root))
    assert "File name too long" in output


def test_an_error_quoting_a_file_is_one_short_line(home, tmp_path):
    folder = tmp_path / "Element"
    folder.mkdir()
    (folder / "model.p").write_bytes(b"\x80\x02S" + b"x" * 3_000_000 + b"\n.")  # pickle quotes the line back
    one_short_line(league("bot", "add", "element", folder, "--home", home.root), most=2_200)


def test_the_error_line_is_cut_whatever_its_sentence_quotes(home, tmp_path):
    deep = tmp_path.joinpath(*["d" * 200] * 19) / "none.safetensors"  # a path the system takes: under 4,096 bytes
    output = one_short_line(league("import", deep, "--home", home.root), most=2_200)
    assert f"... ({len(str(deep)) + len('No checkpoint file at .'):,} characters in all)" in output, output


@pytest.mark.parametrize("line, words", [
    ("root:$6$SECRETHASH$abcdefghijklmnopqrstuvwxyz0123456789:19000:0:99999:7:::", "unknown key of 73 characters"),
    ("root:$6$SECRETHASH$abcdefghijklmnopqrstuvwxyz0123456789:19000:0:99999:7", "the top level must be a mapping"),
])
def test_a_config_file_that_is_some_other_file_is_refused_without_quoting_it(home, tmp_path, line, words):
    secret = tmp_path / "shadow"  # a file the user may not be meant to read, reached through a symlink
    secret.write_text(line + "\n")
    link = tmp_path / "roles.yaml"
    link.symlink_to(secret)
    for args in (["train", "--league", link, "--minutes", "1"], ["train", "--curriculum", link, "--minutes", "1"],
                 ["tournament", "--games", "2", "--config", link]):
        output = one_short_line(league(*args, "--home", home.root))
        assert words in output and "SECRETHASH" not in output, output
