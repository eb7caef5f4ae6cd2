"""One process owns a training run or a tournament: a second command on it fails at once, naming
the holder, and touches nothing; the owner's snapshots and games are never replaced."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from typer.testing import CliRunner

from agents.checkpoint import load_checkpoint, save_checkpoint, sha256_file
from agents.networks import build_network
from arena.tournament import open_tournament, run_tournament
from league.cli import app
from league.config import load_config
from league.errors import LeagueError
from league.locks import claim
from league.registry import Registry
from training.selfplay import SelfPlayTrainer

from conftest import full_disk_at, interruptible

from test_selfplay import TINY, train
from test_tournament import GAME_SECONDS, league  # noqa: F401  (fixture)

LEAGUE = [sys.executable, "-m", "league.cli"]


def _train_cmd(home, *args):
    return [*LEAGUE, "train", "--home", str(home.root), *args,
            *[a for s in TINY for a in ("--set", s)], "--set", "training.eval_games=0"]


def _wait_for(predicate, proc, timeout=120.0):
    deadline = time.time() + timeout
    while not predicate():
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "timed out"
        time.sleep(0.1)


def test_a_lock_is_exclusive_released_on_exit_and_names_its_holder(tmp_path):
    first = claim(tmp_path, "run", "x", "Run 'x'")
    with pytest.raises(LeagueError, match=rf"Run 'x' is in use by process {os.getpid()} \(started "):
        claim(tmp_path, "run", "x", "Run 'x'")
    claim(tmp_path, "run", "y", "Run 'y'").release()  # other names are free
    first.release()
    claim(tmp_path, "run", "x", "Run 'x'").release()


def test_a_lock_dies_with_its_process_even_by_kill_9(tmp_path):
    code = ("import sys, time; from pathlib import Path; from league.locks import claim; "
            "h = claim(Path(sys.argv[1]), 'run', 'x', 'Run x'); print('held', flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    with pytest.raises(LeagueError, match=f"process {proc.pid}"):
        claim(tmp_path, "run", "x", "Run 'x'")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    claim(tmp_path, "run", "x", "Run 'x'").release()


@pytest.mark.slow  # a long end-to-end check: CI runs it after the default suite
def test_a_second_train_on_the_same_run_name_fails_at_once_and_the_first_keeps_its_snapshot(home):
    first = interruptible(_train_cmd(home, "--minutes", "5", "--name", "dup"), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    metrics = home.runs / "dup" / "metrics.jsonl"
    _wait_for(lambda: metrics.exists() and metrics.stat().st_size > 0, first)
    second = subprocess.run(_train_cmd(home, "--minutes", "5", "--name", "dup"), capture_output=True, text=True,
                            timeout=120)
    assert second.returncode == 2, second.stderr
    message = " ".join(second.stderr.split())
    assert f"Run 'dup' is in use by process {first.pid}" in message and "Traceback" not in second.stderr
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    reg = Registry.open(home.db_path)
    agent = reg.agent_store.get("dup-v1")  # the registry's hash is the file's: no other writer replaced it
    assert sha256_file(home.root / agent.checkpoint_path) == agent.checkpoint_sha256
    load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)


@pytest.mark.slow  # a long end-to-end check: CI runs it after the default suite
def test_resuming_one_snapshot_twice_at_once_is_refused(home):
    result, reg = train(home, 256, ["training.eval_every_snapshots=0"])
    cfg = load_config(stage="1v1", sets=[*TINY, "training.steps=256"])
    owner = SelfPlayTrainer(cfg, home, reg, resume=result.versions[-1])
    with pytest.raises(LeagueError, match=r"Run 'mlp-1v1' is in use by process"):
        SelfPlayTrainer(cfg, home, reg, resume=result.versions[-1])
    with pytest.raises(LeagueError, match=r"Run 'mlp-1v1' is in use"):  # a new run of the same name, too
        SelfPlayTrainer(cfg, home, reg)
    owner.run()
    SelfPlayTrainer(cfg, home, reg, resume=reg.agent_store.names()[-1]).run()  # released when the owner is done


def test_a_snapshot_never_replaces_a_file_it_did_not_write(home):
    orphan = home.checkpoints / "orph-v1.safetensors"  # left by a run killed between writing and registering
    orphan.write_bytes(b"someone else's bytes")
    result, reg = train(home, 256, ["training.eval_every_snapshots=0"], name="orph")
    assert orphan.read_bytes() == b"someone else's bytes"
    agent = reg.agent_store.get(result.versions[0])
    assert agent.checkpoint_path != "checkpoints/orph-v1.safetensors"
    load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)


def test_a_snapshot_that_cannot_be_written_stops_the_run_and_keeps_the_previous_one(home, tmp_path):
    cfg = load_config(stage="1v1", sets=[*TINY, "training.steps=4096", "training.eval_every_snapshots=0"])
    reg = Registry.open(home.db_path, cfg.ratings)
    probe = build_network(cfg.policy)  # what one snapshot of this network takes on disk, in whole pages
    optimizer = torch.optim.Adam(probe.parameters())
    sum(p.sum() for p in probe.parameters()).backward()
    optimizer.step()
    save_checkpoint(tmp_path / "probe", probe, optimizer=optimizer, training_config=cfg.to_dict())
    size = sum(-(-p.stat().st_size // 4096) * 4096 for p in tmp_path.glob("probe.*"))
    with full_disk_at(home.checkpoints, int(size * 1.5)):  # room for one snapshot, not two
        with pytest.raises(LeagueError, match=r"Snapshot full-v2 was not written \(No space left on device\); "
                                              r"training stopped and the last snapshot, full-v1, is kept\."):
            SelfPlayTrainer(cfg, home, reg, name="full").run()
        assert [n for n in reg.agent_store.names() if n.startswith("full-")] == ["full-v1"]
        agent = reg.agent_store.get("full-v1")
        load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)
        assert not [p.name for p in home.checkpoints.iterdir() if p.name.endswith(".tmp")]
    claim(home.root, "run", "full", "Run 'full'").release()  # the failed run let go of its name


@pytest.mark.slow  # a long end-to-end check: CI runs it after the default suite
def test_a_second_tournament_command_on_a_running_one_leaves_it_alone(league, tmp_path):  # noqa: F811
    home, reg = league
    cmd = [*LEAGUE, "tournament", "--home", str(home.root), "--games", "20", "--game-seconds", "300",
           "--workers", "1", "--seed", "3", "--agents", "rule,random,net-a", "--arenas", "1"]
    first = interruptible(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: bool(Registry.open(home.db_path, readonly=True).game_store.games()), first)
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert first.poll() is None, "the first tournament ended before the second command ran"
    assert second.returncode == 2, second.stderr
    tid = reg.tournament_store.all()[-1].id
    assert f"Tournament {tid} is in use by process {first.pid}" in " ".join(second.stderr.split())
    assert "Traceback" not in second.stderr and "Resuming" not in second.stdout
    assert reg.tournament_store.get(tid).status == "running"  # not marked interrupted by the second command
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=120)
    indexes = [g.schedule_index for g in reg.game_store.games(tournament_id=tid)]
    assert indexes and len(indexes) == len(set(indexes))
    assert reg.tournament_store.get(tid).finished_games == len(indexes)


def test_abandon_ends_a_tournament_for_good_and_keeps_its_games(league):  # noqa: F811
    home, reg = league
    runner = CliRunner()
    cfg = load_config(sets=["game.game_seconds=4"])
    tid, _ = open_tournament(reg, cfg, 1, 2, 9, ["rule", "random", "net-a"])
    games = run_tournament(reg, home, tid, 1, game_seconds=4, max_arenas=1)
    next(games)
    games.close()  # stopped after one game: 'interrupted'
    assert reg.tournament_store.get(tid).status == "interrupted"
    result = runner.invoke(app, ["tournament", "--home", str(home.root), "--abandon", str(tid)])
    assert result.exit_code == 0, result.output
    assert "1 finished games stay recorded" in result.output
    t = reg.tournament_store.get(tid)
    assert t.status == "abandoned" and t.finished and "abandoned" in t.message
    assert len(reg.game_store.games(tournament_id=tid)) == 1
    for args in (["--resume", str(tid)], ["--abandon", str(tid)]):
        again = runner.invoke(app, ["tournament", "--home", str(home.root), *args])
        assert again.exit_code == 2 and f"Tournament {tid} is already abandoned." in again.output
    # The same parameters now start a new tournament instead of resuming the abandoned one.
    assert open_tournament(reg, cfg, 1, 2, 9, ["rule", "random", "net-a"]) == (tid + 1, False)


def test_a_tournament_too_large_to_play_is_refused_before_anything_is_stored(league):  # noqa: F811
    home, reg = league
    for games in ("100000000", "0"):
        result = CliRunner().invoke(app, ["tournament", "--home", str(home.root), "--games", games])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert reg.tournament_store.all() == []
