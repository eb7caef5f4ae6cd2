"""Where `league export` may write, and what `--force` may replace (issue 37, item 1).

`--force` replaces only what an earlier export wrote (a folder holding manifest.json and exactly
the unchanged files it lists; a zip holding exactly those), never the league home, anything in
it or above it, the current folder, the user's home folder or `/`, never a symlink. Every
refusal is one sentence, exit 2, and touches nothing.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.checkpoint import save_checkpoint
from agents.networks import build_network
from agents.transfer import import_checkpoint
from league.cli import app
from league.config import PolicyConfig
from league.registry import Registry

MLP = PolicyConfig(kind="mlp", actor_sizes=[8], critic_sizes=[8], activation="relu")
NAME = "striker"


def league(*args: str | Path):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def trained(home, tmp_path) -> str:
    save_checkpoint(tmp_path / "outside" / NAME, build_network(MLP), steps=64, training_config={"stage": "1v1"})
    reg = Registry.open(home.db_path)
    try:
        import_checkpoint(home, reg, tmp_path / "outside" / f"{NAME}.safetensors")
    finally:
        reg.close()
    (home.replays / "game-1.npz").write_bytes(b"a replay")
    (home.runs / "run-1").mkdir()
    (home.runs / "run-1" / "log.txt").write_text("a run log")
    return NAME


def snapshot(root: Path) -> dict[str, object]:
    """Every path under `root` (links as links, files by content); the database by name only,
    since opening it may touch its bytes."""
    seen: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            seen[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            seen[rel] = "folder"
        elif not path.is_file():
            seen[rel] = "special"  # a FIFO: never read
        elif path.name.startswith("league.db"):
            if path.name == "league.db":
                seen[rel] = "database"
        else:
            seen[rel] = path.read_bytes()
    return seen


def refused(result, *words: str) -> str:
    """A refusal: exit 2, one sentence on stderr naming `words`."""
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert message.startswith("Error:") and "\n" not in message, message
    for word in words:
        assert word in message, message
    return message


def still_registered(home) -> None:
    reg = Registry.open(home.db_path, readonly=True)
    try:
        assert NAME in reg.agent_store.names()
    finally:
        reg.close()


def export(home, *args):
    return league("export", NAME, *args, "--home", home.root)


@pytest.fixture
def earlier(home, trained, tmp_path) -> Path:
    """An earlier export (folder and zip) at tmp_path/bots/bot."""
    dest = tmp_path / "bots" / "bot"
    assert export(home, "--rlbot", dest, "--zip").exit_code == 0
    return dest


# --------------------------------------------------------------------------- the league home


@pytest.mark.parametrize("where", ["", "checkpoints", "replays", "checkpoints/new-bot"])
def test_force_never_touches_the_league_home_or_anything_in_it(home, trained, where):
    before = snapshot(home.root)
    dest = home.root / where if where else home.root
    refused(export(home, "--rlbot", dest, "--force"), "league home")
    assert snapshot(home.root) == before and home.db_path.is_file()
    still_registered(home)


def test_a_folder_above_the_home_is_refused(home, trained, tmp_path):
    before = snapshot(tmp_path)
    refused(export(home, "--rlbot", tmp_path, "--force"), "league home")
    refused(export(home, "--rlbot", home.root / "checkpoints" / ".." / "..", "--force"), "league home")
    assert snapshot(tmp_path) == before
    still_registered(home)


def test_a_link_into_the_home_is_refused(home, trained, tmp_path):
    (tmp_path / "innocent").symlink_to(home.root / "checkpoints")
    before = snapshot(home.root)
    refused(export(home, "--rlbot", tmp_path / "innocent" / "bot", "--force"), "league home")
    assert snapshot(home.root) == before


def test_plain_export_into_the_home_or_above_it_is_refused(home, trained, tmp_path):
    before = snapshot(tmp_path)
    for dest in (home.root / "x", home.root, home.checkpoints, tmp_path):
        refused(export(home, dest), "league home")
    assert snapshot(tmp_path) == before
    assert export(home, tmp_path / "elsewhere").exit_code == 0
    assert (tmp_path / "elsewhere" / f"{NAME}.safetensors").is_file()


# --------------------------------------------------------------------------- folders that are not ours


def test_a_folder_of_the_users_files_is_never_replaced(home, trained, tmp_path):
    dest = tmp_path / "work"
    (dest / "sub").mkdir(parents=True)
    (dest / "thesis.txt").write_text("four years")
    (dest / "sub" / "data.csv").write_text("a,b\n1,2\n")
    before = snapshot(dest)
    message = refused(export(home, "--rlbot", dest), "not an rl-league export")
    assert "--force" not in message
    refused(export(home, "--rlbot", dest, "--force"), "not an rl-league export")
    refused(export(home, "--rlbot", dest, "--force", "--zip"), "not an rl-league export")
    assert snapshot(dest) == before and not (tmp_path / "work.zip").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_the_current_folder_is_refused(home, trained, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    (here / "notes.txt").write_text("mine")
    monkeypatch.chdir(here)
    for dest in (".", here, here / "sub" / ".."):
        refused(export(home, "--rlbot", dest, "--force"), "current folder")
    assert snapshot(here) == {"notes.txt": b"mine"}
    (here / "notes.txt").unlink()
    refused(export(home, "--rlbot", "."), "current folder")  # even empty: it is where the user stands
    assert list(here.iterdir()) == []


def test_the_users_home_folder_and_the_root_are_refused(home, trained, tmp_path, monkeypatch):
    user = tmp_path / "user"
    user.mkdir()
    (user / ".bashrc").write_text("alias ll='ls -l'")
    monkeypatch.setenv("HOME", str(user))
    refused(export(home, "--rlbot", user, "--force"), "home folder")
    assert snapshot(user) == {".bashrc": b"alias ll='ls -l'"}
    refused(export(home, "--rlbot", "/"), "is the root folder")
    refused(export(home, "--rlbot", user / ".." / "user", "--force"), "home folder")


def test_a_symlinked_folder_is_refused(home, trained, earlier, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(earlier)
    before = snapshot(earlier)
    refused(export(home, "--rlbot", link, "--force"), "symbolic link")
    refused(export(home, "--rlbot", link), "symbolic link")
    assert link.is_symlink() and snapshot(earlier) == before


# --------------------------------------------------------------------------- earlier exports


def test_an_earlier_export_is_replaced_with_force(home, trained, earlier, tmp_path):
    message = refused(export(home, "--rlbot", earlier), "earlier", "--force")
    old = json.loads((earlier / "manifest.json").read_text())
    result = export(home, "--rlbot", earlier, "--force", "--sampled", "--zip")
    assert result.exit_code == 0, result.output
    new = json.loads((earlier / "manifest.json").read_text())
    assert new["deterministic"] is False and old["deterministic"] is True
    assert sorted(p.name for p in earlier.iterdir()) == sorted([*new["files"], "manifest.json"])
    with zipfile.ZipFile(earlier.with_name("bot.zip")) as z:
        assert json.loads(z.read("bot/manifest.json"))["deterministic"] is False
    assert [p.name for p in earlier.parent.iterdir() if p.name.startswith(".")] == []
    assert message


def test_an_earlier_export_with_an_extra_file_is_kept(home, trained, earlier):
    (earlier / "my-tweaks.py").write_text("# mine")
    before = snapshot(earlier)
    refused(export(home, "--rlbot", earlier, "--force"), "not an rl-league export")
    (earlier / "my-tweaks.py").unlink()
    (earlier / "logs").mkdir()
    refused(export(home, "--rlbot", earlier, "--force"), "not an rl-league export")
    (earlier / "logs").rmdir()
    (earlier / "logs").symlink_to(earlier.parent)
    refused(export(home, "--rlbot", earlier, "--force"), "not an rl-league export")
    (earlier / "logs").unlink()
    (earlier / "my-tweaks.py").write_text("# mine")
    assert snapshot(earlier) == before


def test_an_edited_export_is_kept(home, trained, earlier):
    with open(earlier / "bot.toml", "a") as fh:
        fh.write("# my change\n")
    before = snapshot(earlier)
    refused(export(home, "--rlbot", earlier, "--force"), "changed since it was exported")
    (earlier / "bot.toml").unlink()  # a file the manifest lists, gone
    refused(export(home, "--rlbot", earlier, "--force"), "not an rl-league export")
    assert snapshot(earlier) == {k: v for k, v in before.items() if k != "bot.toml"}


def test_a_file_added_while_the_bot_is_written_keeps_the_earlier_export(home, trained, earlier, monkeypatch):
    from agents import rlbot_export

    real = rlbot_export.write_rlbot_bot

    def user_adds_a_file_meanwhile(ckpt, dest, **kw):
        manifest = real(ckpt, dest, **kw)
        (earlier / "added-meanwhile.txt").write_text("mine")  # after the check, before the swap
        return manifest

    monkeypatch.setattr(rlbot_export, "write_rlbot_bot", user_adds_a_file_meanwhile)
    before = snapshot(earlier)
    refused(export(home, "--rlbot", earlier, "--force"), "not an rl-league export")
    assert snapshot(earlier)["added-meanwhile.txt"] == b"mine"
    assert {k: v for k, v in snapshot(earlier).items() if k != "added-meanwhile.txt"} == before
    assert [p.name for p in earlier.parent.iterdir() if p.name.startswith(".")] == []


def test_a_folder_below_the_current_one_is_fine(home, trained, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert export(home, "--rlbot", "bots/new").exit_code == 0
    assert (tmp_path / "bots" / "new" / "manifest.json").is_file()


def test_a_manifest_of_another_format_is_not_an_export(home, trained, earlier):
    manifest = json.loads((earlier / "manifest.json").read_text())
    manifest["format"] = "something-else"
    (earlier / "manifest.json").write_text(json.dumps(manifest))
    before = snapshot(earlier)
    refused(export(home, "--rlbot", earlier, "--force"), "not an rl-league export")
    assert snapshot(earlier) == before


# --------------------------------------------------------------------------- the zip


def test_a_zip_that_is_not_an_export_is_kept(home, trained, tmp_path):
    archive = tmp_path / "bot.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("bot/thesis.txt", "four years")
    before = archive.read_bytes()
    refused(export(home, "--rlbot", tmp_path / "bot", "--zip", "--force"), "not")
    assert archive.read_bytes() == before and not (tmp_path / "bot").exists()
    archive.write_bytes(b"someone's archive")
    refused(export(home, "--rlbot", tmp_path / "bot", "--zip", "--force"), "not")
    assert archive.read_bytes() == b"someone's archive" and not (tmp_path / "bot").exists()


def test_an_earlier_export_zip_with_an_extra_member_is_kept(home, trained, earlier):
    archive = earlier.with_name("bot.zip")
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("bot/extra.txt", "mine")
    before = archive.read_bytes()
    refused(export(home, "--rlbot", earlier, "--zip", "--force"), "not")
    assert archive.read_bytes() == before


@pytest.mark.parametrize("kind", ["folder", "fifo", "symlink"])
def test_a_zip_path_that_is_not_a_file_is_refused(home, trained, earlier, tmp_path, kind):
    archive = earlier.with_name("bot.zip")
    archive.unlink()
    if kind == "folder":
        archive.mkdir()
        (archive / "keep.txt").write_text("mine")
    elif kind == "fifo":
        os.mkfifo(archive)
    else:
        (tmp_path / "target.zip").write_bytes(b"theirs")
        archive.symlink_to(tmp_path / "target.zip")
    before = snapshot(earlier.parent)
    refused(export(home, "--rlbot", earlier, "--zip", "--force"))
    assert snapshot(earlier.parent) == before
    if kind == "symlink":
        assert (tmp_path / "target.zip").read_bytes() == b"theirs"


# --------------------------------------------------------------------------- wording


@pytest.mark.parametrize("rlbot", [True, False])
def test_a_device_or_a_file_in_the_way_is_one_clear_sentence(home, trained, tmp_path, rlbot):
    flag = ["--rlbot"] if rlbot else []
    message = refused(export(home, *flag, "/dev/null"), "/dev/null is a device, not a folder")
    assert "File exists" not in message
    (tmp_path / "afile").write_text("x")
    message = refused(export(home, *flag, tmp_path / "afile" / "sub"), "afile is a file, not a folder")
    assert "File exists" not in message and "Not a directory" not in message
    assert (tmp_path / "afile").read_text() == "x"
