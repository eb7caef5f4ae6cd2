"""Community bots as league members (issue 39): `league bot add/list`, `league show`, tournaments and
matches at the team sizes they play, refusals in one sentence, and bot files never run."""

import os
import pickle
import shutil
import stat

import pytest
from typer.testing import CliRunner

from community_bots import bots_dir
from league.cli import app
from league.registry import Registry

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def bots(home):
    """The league home `home` with necto and element added from the bots folder."""
    folder = bots_dir()
    for kind, sub in (("necto", "Necto"), ("element", "Element")):
        done = run("bot", "add", kind, folder / sub, "--home", home.root)
        assert done.exit_code == 0, done.output
    return home


def test_bots_are_added_listed_and_shown_with_source_licence_and_adapter(bots):
    listed = run("bot", "list", "--home", bots.root)
    assert listed.exit_code == 0 and "necto-model.pt" in listed.output and "model.p" in listed.output
    assert "In this league: necto (1v1, 2v2, 3v3, active), element (1v1, active)" in listed.output
    shown = run("show", "necto", "--home", bots.root)
    assert shown.exit_code == 0
    for fragment in ("community", "137f94924afb0402af7ae9f12b7f2d7e47adff962afad4dbed7bf864c34c542b",
                     "CC BY-NC-SA 4.0", "Necto/LICENSE", "agents.community.necto.NectoPolicy", "scripted kickoff"):
        assert fragment in shown.output
    element = run("show", "element", "--home", bots.root)
    # The botpack's licence lies beside Element's folder, not in it: only the bot's own folder is read.
    assert "no licence file found in the folder" in " ".join(element.output.split())
    assert "speed-flip kickoff" in element.output
    reg = Registry.open(bots.db_path)
    try:
        agent = reg.agent_store.get("necto")
        assert agent.kind == "community" and agent.team_size is None
        manifest = agent.config["community"]
        assert manifest["tick_skip"] == 8 and manifest["team_sizes"] == [1, 2, 3]
        assert "Attribution-NonCommercial-ShareAlike" in manifest["licence_text"]
        assert (bots.root / agent.checkpoint_path).is_file()
    finally:
        reg.close()


def test_the_licence_is_looked_for_in_the_bots_own_folder_never_beside_it(home, tmp_path):
    botpack = tmp_path / "botpack"
    shutil.copytree(bots_dir() / "Element", botpack / "Element")
    (botpack / "my-license-keys.txt").write_text("SECRET-KEY-123\n")  # beside the folder given: not the bot's
    done = run("bot", "add", "element", botpack / "Element", "--home", home.root)
    assert done.exit_code == 0, done.output
    reg = Registry.open(home.db_path)
    try:
        manifest = reg.agent_store.get("element").config["community"]
    finally:
        reg.close()
    assert (manifest["licence_file"], manifest["licence_text"]) == ("", "")
    shown = run("show", "element", "--home", home.root)
    assert "SECRET" not in shown.output and "no licence file found in the folder" in " ".join(shown.output.split())


def test_community_bots_are_never_champions_and_keep_to_their_team_sizes(bots):
    promoted = run("promote", "element", "--home", bots.root)
    assert promoted.exit_code == 2 and "'element' is a community bot; only a stage's own agents can be champion." \
        in promoted.output
    wrong_size = run("tournament", "--stage", "2v2", "--agents", "necto,element", "--home", bots.root)
    assert wrong_size.exit_code == 2
    assert "'element' is a community bot that plays 1v1 only, not 2v2." in wrong_size.output
    again = run("bot", "add", "necto", bots_dir() / "Necto", "--home", bots.root)
    assert again.exit_code == 2 and "already exists" in again.output
    exported = run("export", "necto", bots.root.parent / "out", "--home", bots.root)
    assert exported.exit_code == 2 and "'necto' is a community bot; its weights are its authors'" in exported.output


@pytest.mark.slow  # moved out of the default suite to keep it under 5 minutes (316 s on 2026-11-27)
def test_community_bots_play_and_are_rated_at_every_team_size_they_play(bots):
    one = run("tournament", "--games", "2", "--agents", "necto,element,rule", "--game-seconds", "20",
              "--workers", "1", "--home", bots.root)
    assert one.exit_code == 0, one.output
    three = run("tournament", "--games", "2", "--stage", "3v3", "--agents", "necto,rule", "--game-seconds", "10",
                "--workers", "1", "--home", bots.root)
    assert three.exit_code == 0, three.output
    reg = Registry.open(bots.db_path)
    try:
        games = reg.game_store.games()
        assert len(games) == 6 + 2
        for name in ("necto", "element"):
            assert reg.game_store.rating(name, 1).games == 4
        assert reg.game_store.rating("necto", 3).games == 2
        necto_as_orange = [g for g in games if g.orange == "necto"]
        assert necto_as_orange  # both sides
    finally:
        reg.close()


class Payload:
    def __reduce__(self):
        return os.system, (f"touch {MARKER}",)


MARKER = "/tmp/rl-league-bot-payload-ran"


@pytest.mark.parametrize("damage", ["payload", "truncated", "not a pickle"])
def test_a_bad_weights_file_is_one_sentence_and_exit_2_and_nothing_in_it_runs(home, tmp_path, damage):
    folder = tmp_path / "Element"
    shutil.copytree(bots_dir() / "Element", folder)
    weights = folder / "model.p"
    weights.chmod(0o644)
    if damage == "payload":
        weights.write_bytes(pickle.dumps({"fc1.weight": Payload()}))
    elif damage == "truncated":
        weights.write_bytes(weights.read_bytes()[:5000])
    else:
        weights.write_bytes(b"#!/bin/sh\ntouch " + MARKER.encode() + b"\n")
    if os.path.exists(MARKER):
        os.remove(MARKER)
    done = run("bot", "add", "element", folder, "--home", home.root)
    assert done.exit_code == 2, done.output
    assert "is not a usable community weights file" in done.output and "Traceback" not in done.output
    assert not os.path.exists(MARKER)
    assert not (home.root / "community").exists() or not any((home.root / "community").iterdir())
    reg = Registry.open(home.db_path)
    try:
        assert "element" not in {a.name for a in reg.agent_store.all(include_retired=True)}
    finally:
        reg.close()


def _refused(result, words: str) -> None:
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert words in result.output, result.output


@pytest.mark.parametrize("make, words", [
    (lambda p: p.symlink_to(p.parent.parent / "elsewhere.p"), "is a symbolic link, not a file"),
    (os.mkfifo, "is a named pipe (FIFO), not a file"),
    (lambda p: p.mkdir(), "is a folder, not a file"),
    (lambda p: os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 3)), "is a device, not a file"),
])
def test_a_weights_file_that_is_not_a_regular_file_is_refused_for_what_it_is(home, tmp_path, make, words):
    folder = tmp_path / "Element"
    folder.mkdir()
    (tmp_path / "elsewhere.p").write_bytes(b"not read")
    try:
        make(folder / "model.p")
    except PermissionError:
        pytest.skip("making a device file needs root")
    result = run("bot", "add", "element", folder, "--home", home.root)
    _refused(result, words)
    assert "model.p" in result.output and "No model.p" not in result.output


def test_an_empty_name_for_a_bot_is_refused_not_replaced_by_the_kind(home, tmp_path):
    _refused(run("bot", "add", "element", tmp_path, "--name", "", "--home", home.root), "Agent name '' is not allowed")
    reg = Registry.open(home.db_path)
    try:
        assert "element" not in reg.agent_store.names()
    finally:
        reg.close()


def test_weights_changed_in_the_home_are_refused_before_play(bots):
    reg = Registry.open(bots.db_path)
    path = bots.root / reg.agent_store.get("element").checkpoint_path
    reg.close()
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    done = run("match", "element", "rule", "--max-games", "2", "--game-seconds", "5", "--home", bots.root)
    assert done.exit_code == 2, done.output
    assert "does not match the sha256 the league recorded for 'element'" in done.output


def test_a_learner_trains_against_community_bots_and_with_necto_as_its_teacher(bots):
    from league.config import load_config
    from training.selfplay import SelfPlayTrainer

    cfg = load_config("1v1", sets=["runner.workers=1", "runner.envs_per_worker=4", "runner.backend=in-process",
                                   "ppo.steps_per_env=32", "ppo.minibatch_size=128", "policy.actor_sizes=[32]",
                                   "policy.critic_sizes=[32]", "training.snapshot_every_steps=256",
                                   "training.eval_every_snapshots=1", "training.eval_games=1",
                                   "training.eval_game_seconds=5", "training.kickstart.teacher=necto",
                                   "training.opponents.community=1", "training.opponents.latest=0.5",
                                   "training.opponents.rule=0", "training.opponents.random=0",
                                   "training.opponents.past=0", "training.opponents.pfsp=0"])
    cfg.training.steps = 512
    reg = Registry.open(bots.db_path)
    notes = []
    try:
        result = SelfPlayTrainer(cfg, bots, reg, name="taught", on_progress=notes.append).run()
        assert result.steps >= 512
        played = {(g.blue, g.orange) for g in reg.game_store.games() if g.origin == "evaluation"}
        assert {("taught-v1", "necto"), ("taught-v1", "element")} <= played  # evaluation meets them
    finally:
        reg.close()
    assert any("moves to the nearest row of the learner's 90-action table" in str(n) for n in notes)
    shares = [line for line in (bots.runs / "taught" / "metrics.jsonl").read_text().splitlines()
              if "opponent_share/necto" in line or "opponent_share/element" in line]
    assert shares  # they played as opponents


def test_a_community_bot_is_listed_only_on_the_leaderboards_of_the_team_sizes_it_plays(bots):
    one, two = run("leaderboard", "--home", bots.root), run("leaderboard", "--stage", "2v2", "--home", bots.root)
    assert one.exit_code == two.exit_code == 0
    assert "element" in one.output and "necto" in one.output
    assert "element" not in two.output and "necto" in two.output
