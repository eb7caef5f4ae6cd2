"""Tournaments: planning, playing, replays, resume after kill -9, determinism, retired agents."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from agents.checkpoint import save_checkpoint
from agents.networks import build_network
from arena.replay import read_replay
from arena.tournament import open_tournament, resolve_entrants, run_tournament
from league.cli import app
from league.config import PolicyConfig, load_config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import BASELINES, Registry
from league.standings import read_tournament_standings

from conftest import recompute_ratings

GAME_SECONDS = 8


def add_network_agent(home: LeagueHome, reg: Registry, name: str, seed: int) -> None:
    torch.manual_seed(seed)
    net = build_network(PolicyConfig(actor_sizes=[32], critic_sizes=[32]))
    rel = Path("checkpoints") / f"{name}.safetensors"
    sha = save_checkpoint(home.root / rel, net, steps=0)
    reg.agent_store.add(name, "mlp", 1, checkpoint_path=str(rel), checkpoint_sha256=sha)


@pytest.fixture
def league(tmp_path):
    home = LeagueHome(tmp_path / "league")
    home.create_dirs()
    reg = Registry.create(home.db_path)
    add_network_agent(home, reg, "net-a", 1)
    add_network_agent(home, reg, "net-b", 2)
    return home, reg


def league_copy(tmp_path, name: str, home: LeagueHome, reg: Registry, agents=("net-a",)) -> tuple[LeagueHome, Registry]:
    """A second league home holding copies of `agents` (checkpoints included)."""
    other = LeagueHome(tmp_path / name)
    other.create_dirs()
    reg2 = Registry.create(other.db_path)
    for agent_name in agents:
        agent = reg.agent_store.get(agent_name)
        for suffix in (".safetensors", ".json"):
            dest = (other.root / agent.checkpoint_path).with_suffix(suffix)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes((home.root / agent.checkpoint_path).with_suffix(suffix).read_bytes())
        reg2.agent_store.add(agent_name, "mlp", 1, checkpoint_path=agent.checkpoint_path,
                       checkpoint_sha256=agent.checkpoint_sha256)
    return other, reg2


def play(home, reg, entrants, games=2, seed=5, workers=2):
    tid, _ = open_tournament(reg, load_config(), 1, games, seed, entrants)
    list(run_tournament(reg, home, tid, workers, game_seconds=GAME_SECONDS))
    return tid


def results(reg, tid):
    return {g.schedule_index: (g.blue, g.orange, g.blue_goals, g.orange_goals)
            for g in reg.game_store.games(tournament_id=tid)}


def test_round_robin_records_every_game_with_a_consistent_replay(league):
    home, reg = league
    entrants = resolve_entrants(reg, 1, None, baselines=True)
    assert set(entrants) == {*BASELINES, "net-a", "net-b"}
    tid = play(home, reg, ["random", "rule", "net-a", "net-b"])  # 12 games, not the whole ladder's 30
    t = reg.tournament_store.get(tid)
    assert t.status == "finished" and t.planned_games == t.finished_games == 12
    games = reg.game_store.games(tournament_id=tid)
    assert sorted(g.schedule_index for g in games) == list(range(12))
    for g in games:
        replay = read_replay(home.root / g.replay_path)
        assert replay.score_from_events() == (g.blue_goals, g.orange_goals)
        assert replay.meta["blue"] == g.blue and replay.meta["seed"] == g.seed
        assert abs(replay.meta["length_seconds"] - GAME_SECONDS) < 0.1
    recomputed = recompute_ratings(reg.game_store, 1)
    for name, (elo, mu, sigma) in recomputed.items():
        row = reg.game_store.rating(name, 1)
        assert row.elo == pytest.approx(elo) and row.mu == pytest.approx(mu)
    table = read_tournament_standings(reg.db, tid, reg.ratings_cfg).rows
    assert sum(r.games for r in table) == 24 and table[0].points >= table[-1].points


@pytest.mark.slow  # moved out of the default suite to keep it under 5 minutes (316 s on 2026-11-27)
def test_a_rerun_game_reproduces_its_replay_exactly(league, tmp_path):
    home, reg = league
    tid = play(home, reg, ["rule", "random", "net-a"], games=2, workers=2)
    first = {g.schedule_index: read_replay(home.root / g.replay_path) for g in reg.game_store.games(tournament_id=tid)}
    # The same tournament in another league home, one worker instead of two: other batches.
    other, reg2 = league_copy(tmp_path, "other", home, reg)
    tid2 = play(other, reg2, ["rule", "random", "net-a"], games=2, workers=1)
    assert results(reg, tid) == results(reg2, tid2)
    for g in reg2.game_store.games(tournament_id=tid2):
        again = read_replay(other.root / g.replay_path)
        before = first[g.schedule_index]
        assert np.array_equal(again.ball, before.ball) and np.array_equal(again.cars, before.cars)
        assert np.array_equal(again.events, before.events)


def test_retired_agents_are_never_entered(league):
    home, reg = league
    reg.agent_store.set_status("net-b", "retired")
    assert "net-b" not in resolve_entrants(reg, 1, None, baselines=True)
    with pytest.raises(LeagueError, match="retired"):
        resolve_entrants(reg, 1, ["net-a", "net-b"], baselines=True)
    with pytest.raises(LeagueError, match="at least two entrants"):
        resolve_entrants(reg, 1, None, baselines=False)


def _wait_for_games(db: Path, n: int, timeout: float = 120.0) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                count = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            if count >= n:
                return count
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    raise AssertionError("the tournament did not record games in time")


@pytest.mark.slow  # a long end-to-end check: CI runs it after the default suite
def test_kill_9_then_resume_finishes_exactly_the_planned_games(league, tmp_path):
    home, reg = league
    cmd = [sys.executable, "-m", "league.cli", "tournament", "--home", str(home.root), "--games", "4",
           "--game-seconds", str(GAME_SECONDS), "--workers", "2", "--seed", "11", "--agents", "rule,random,net-a",
           "--arenas", "1"]  # one game at a time per worker, so results stream in
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_for_games(home.db_path, 3)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-tournament
    proc.wait()
    reg = Registry.open(home.db_path)
    tid = reg.tournament_store.all()[-1].id
    done_before = len(reg.game_store.games(tournament_id=tid))
    assert 3 <= done_before < 12
    resumed = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "Resuming tournament" in resumed.stdout
    games = reg.game_store.games(tournament_id=tid)
    assert sorted(g.schedule_index for g in games) == list(range(12))  # none twice, none missing
    assert reg.tournament_store.get(tid).status == "finished"
    for name, (elo, mu, sigma) in recompute_ratings(reg.game_store, 1).items():
        assert reg.game_store.rating(name, 1).elo == pytest.approx(elo) and reg.game_store.rating(name, 1).sigma == pytest.approx(sigma)
    # The same tournament uninterrupted, elsewhere, gives the same results.
    fresh, reg2 = league_copy(tmp_path, "fresh", home, reg)
    tid2, _ = open_tournament(reg2, load_config(), 1, 4, 11, ["rule", "random", "net-a"])
    list(run_tournament(reg2, fresh, tid2, 1, game_seconds=GAME_SECONDS))
    assert results(reg, tid) == results(reg2, tid2)


def test_cli_tournament_prints_standings_and_refuses_bad_input(league):
    home, _ = league
    runner = CliRunner()
    result = runner.invoke(app, ["tournament", "--home", str(home.root), "--games", "1", "--game-seconds", "4",
                                 "--agents", "rule,random", "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "standings" in result.output and "rule" in result.output
    bad = runner.invoke(app, ["tournament", "--home", str(home.root), "--agents", "rule,nobody"])
    assert bad.exit_code == 2 and "No agent named 'nobody'" in bad.output
    bad = runner.invoke(app, ["tournament", "--home", str(home.root), "--games", "0"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("args, message", [
    (["--address", "127.0.0.1:6379"], "--address goes with --placement ray"),  # issue 37, item 11: silently ignored
    (["--agents", ""], "--agents lists no agent"),  # issue 37, item 11: entered every agent
    (["--agents", ","], "--agents lists no agent"),
    (["--agents", "rule,,random"], "has an empty name"),
])
def test_cli_tournament_refuses_flags_it_would_ignore(league, args, message):
    home, reg = league
    before = len(reg.tournament_store.all())
    result = CliRunner().invoke(app, ["tournament", "--home", str(home.root), "--games", "2", *args])
    assert result.exit_code == 2 and message in result.output, result.output
    assert len(reg.tournament_store.all()) == before  # nothing stored


@pytest.mark.slow  # starts a local Ray instance: CI runs it after the default suite
def test_ray_backend_on_a_local_instance_matches_the_local_backend(league, tmp_path):
    pytest.importorskip("ray")
    home, reg = league
    tid = play(home, reg, ["rule", "random", "net-a"], games=2, workers=2)
    other, reg2 = league_copy(tmp_path, "ray-league", home, reg)
    tid2, _ = open_tournament(reg2, load_config(), 1, 2, 5, ["rule", "random", "net-a"])
    outcomes = list(run_tournament(reg2, other, tid2, 2, game_seconds=GAME_SECONDS, placement="ray"))
    assert len(outcomes) == 6 and reg2.tournament_store.get(tid2).status == "finished"
    assert results(reg, tid) == results(reg2, tid2)
    for g in reg2.game_store.games(tournament_id=tid2):
        assert read_replay(other.root / g.replay_path).score_from_events() == (g.blue_goals, g.orange_goals)


def test_a_killed_game_worker_is_one_sentence_naming_the_worker_its_pid_and_signal(registry, home):
    """One failure sentence for every local worker (issue 38, item 2): which worker, its pid, how it ended."""
    import os
    import signal

    from arena.engine.game import GameSpec
    from arena.game_pool import GamePool
    from league.schedule import ScheduledGame

    agents = {name: registry.agent_store.get(name) for name in ("rule", "random")}
    games = [ScheduledGame(i, "rule", "random", seed=i) for i in range(4)]
    # 30-second games (0.3 s of play each): the pool notices the dead worker when worker 0's first game ends.
    with GamePool(agents, GameSpec(team_size=1, mode="timed", game_seconds=30.0), home.root, "replays/t-1",
                  {"tournament_id": 1}, workers=2, arenas=1, resume_hint="run it again") as pool:
        victim_pid = pool.pids[1]
        play = pool.play(games)
        os.kill(victim_pid, signal.SIGKILL)
        with pytest.raises(LeagueError) as caught:
            list(play)
    assert str(caught.value) == f"Game worker 1 (pid {victim_pid}) died without a traceback (signal 9); run it again."


@pytest.mark.slow  # out of the default suite to keep it under 5 minutes (311-327 s on 2026-12-02)
def test_a_game_worker_that_hangs_ends_the_games_with_one_sentence_and_the_resume_hint(registry, home, monkeypatch):
    """Run tc's title round robin recorded no game for 30 minutes and waited on forever. Fails before: a stopped
    worker (SIGSTOP: it neither answers nor dies) held the pool for good."""
    import arena.game_pool
    from arena.engine.game import GameSpec
    from arena.game_pool import GamePool, stall_seconds
    from league.schedule import ScheduledGame

    spec = GameSpec(team_size=1, mode="timed", game_seconds=30.0)
    assert stall_seconds(spec, 50) == 600 + 50 * 0.5 * 15  # the limit the title round robin's chunks get
    monkeypatch.setattr(arena.game_pool, "STALL_START_SECONDS", 10.0)  # a busy machine's start is no hang
    monkeypatch.setattr(arena.game_pool, "STALL_SECONDS_PER_GAME_MINUTE", 0.0)
    agents = {name: registry.agent_store.get(name) for name in ("rule", "random")}
    games = [ScheduledGame(i, "rule", "random", seed=i) for i in range(4)]
    played = []
    with GamePool(agents, spec, home.root, "replays/t-1", {"tournament_id": 1}, workers=2, arenas=1,
                  resume_hint="run it again") as pool:
        stopped = pool.pids[1]
        os.kill(stopped, signal.SIGSTOP)
        try:
            with pytest.raises(LeagueError) as caught:
                for outcome in pool.play(games):
                    played.append(outcome.game.index)
        finally:
            if os.path.exists(f"/proc/{stopped}"):
                os.kill(stopped, signal.SIGCONT)
    assert str(caught.value) == (f"Game worker 1 (pid {stopped}) answered nothing for 10 s, so it was stopped (the "
                                 "stacks of every worker and of this process are on standard error); run it again.")
    assert sorted(played) == [0, 2, 3]  # the other worker played the rest meanwhile


def test_a_tournament_s_placement_is_named_placement_and_backend_is_its_old_name(home, capsys):
    """Issue 57, item 8: `league tournament --backend` was a placement under training's word; --placement names it,
    and --backend still works with a note (the same flag twice with two values is refused)."""
    from typer.testing import CliRunner

    from league.cli import app

    done = CliRunner().invoke(app, ["tournament", "--placement", "threads", "--home", str(home.root)])
    assert done.exit_code == 2 and "Unknown placement 'threads'" in done.output, done.output
    old = CliRunner().invoke(app, ["tournament", "--backend", "threads", "--home", str(home.root)])
    assert old.exit_code == 2 and "'--backend' is now called '--placement'" in old.output, old.output
    both = CliRunner().invoke(app, ["tournament", "--placement", "ray", "--backend", "processes", "--home",
                                    str(home.root)])
    assert both.exit_code == 2 and "Give --placement alone" in both.output, both.output
