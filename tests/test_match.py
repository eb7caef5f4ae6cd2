"""`league match A B`: mirrored pairs recorded and rated as tournament games, the SPRT stopping
early, the statistics printed equal to the recorded games', kill -9 then resume, ownership, errors."""

import os
import re
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
from agents.loading import load_policy
from agents.networks import build_network
from agents.policy import Policy
from arena.engine.game import GameSpec
from arena.match import match_outcome, play_match, start_or_resume_match
from arena.replay import read_replay
from arena.tournament import open_tournament
from arena.tournament_play import GamePlayer
from league.cli import app
from league.config import PolicyConfig, load_config
from league.home import LeagueHome
from league.locks import claim
from league.registry import Registry
from league.schedule import ScheduledGame
from league.sprt import SprtParams, pentanomial_counts, sprt_result

from conftest import recompute_ratings

GAME_SECONDS = 8
runner = CliRunner()


def add_network_agent(home: LeagueHome, reg: Registry, name: str, seed: int, team_size: int = 1) -> None:
    torch.manual_seed(seed)
    net = build_network(PolicyConfig(actor_sizes=[32], critic_sizes=[32]))
    rel = Path("checkpoints") / f"{name}.safetensors"
    sha = save_checkpoint(home.root / rel, net, steps=0)
    reg.agent_store.add(name, "mlp", team_size, checkpoint_path=str(rel), checkpoint_sha256=sha)


@pytest.fixture
def league(home):
    reg = Registry.open(home.db_path)
    add_network_agent(home, reg, "net-a", 1)
    yield home, reg
    reg.close()


def league_copy(tmp_path, home: LeagueHome, reg: Registry) -> tuple[LeagueHome, Registry]:
    """A second league home holding a copy of net-a (checkpoint included)."""
    other = LeagueHome(tmp_path / "copy")
    other.create_dirs()
    reg2 = Registry.create(other.db_path)
    agent = reg.agent_store.get("net-a")
    for suffix in (".safetensors", ".json"):
        dest = (other.root / agent.checkpoint_path).with_suffix(suffix)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes((home.root / agent.checkpoint_path).with_suffix(suffix).read_bytes())
    reg2.agent_store.add("net-a", "mlp", 1, checkpoint_path=agent.checkpoint_path, checkpoint_sha256=agent.checkpoint_sha256)
    return other, reg2


def match_cli(home: LeagueHome, *args: str):
    return runner.invoke(app, ["match", *args, "--home", str(home.root), "--game-seconds", str(GAME_SECONDS)])


def recorded_counts(reg: Registry, tid: int, a: str) -> list[int]:
    """The pentanomial counts of the complete pairs recorded, computed here from the games alone."""
    scores = {}
    for g in reg.game_store.games(tournament_id=tid):
        mine, theirs = (g.blue_goals, g.orange_goals) if g.blue == a else (g.orange_goals, g.blue_goals)
        scores[g.schedule_index] = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return pentanomial_counts((scores[i], scores[i + 1]) for i in range(0, max(scores) + 1, 2)
                              if i in scores and i + 1 in scores)


def test_a_fixed_match_records_rates_and_replays_every_game(league):
    home, reg = league
    result = match_cli(home, "net-a", "rule", "--max-games", "4", "--workers", "2", "--seed", "7")
    assert result.exit_code == 0, result.output
    assert "Starting match 1 (tournament 1)" in result.output and "batch 1/1: 4/4 games" in result.output
    assert "Fixed match: 4 games of net-a against rule (no SPRT)" in result.output and "LLR" not in result.output
    m = match_outcome(reg, 1)
    assert (m.status, m.decision, m.mode, m.params, m.stats.games) == ("finished", None, "fixed", None, 4)
    games = reg.game_store.games(tournament_id=m.tournament_id)
    assert sorted(g.schedule_index for g in games) == [0, 1, 2, 3]
    assert [(g.blue, g.orange) for g in sorted(games, key=lambda g: g.schedule_index)] == \
        [("net-a", "rule"), ("rule", "net-a")] * 2  # mirrored pairs: the same seed, sides swapped
    by_index = {g.schedule_index: g for g in games}
    assert by_index[0].seed == by_index[1].seed != by_index[2].seed == by_index[3].seed
    for g in games:
        assert g.origin == "tournament"
        replay = read_replay(home.root / g.replay_path)
        assert replay.score_from_events() == (g.blue_goals, g.orange_goals) and replay.meta["seed"] == g.seed
    assert list(m.stats.counts) == recorded_counts(reg, m.tournament_id, "net-a")
    for name, (elo, mu, sigma) in recompute_ratings(reg.game_store, 1).items():  # rated like any other game, once each
        assert reg.game_store.rating(name, 1).elo == pytest.approx(elo) and reg.game_store.rating(name, 1).sigma == pytest.approx(sigma)
    assert reg.game_store.rating("net-a", 1).games == 4
    t = reg.tournament_store.get(m.tournament_id)
    assert (t.status, t.planned_games, t.finished_games) == ("finished", 4, 4)
    # The same command again plays nothing: it shows the finished match.
    again = match_cli(home, "net-a", "rule", "--max-games", "4", "--workers", "2", "--seed", "7")
    assert again.exit_code == 0 and "Match 1 (net-a vs rule, fixed 4 games, argmax) already finished" in again.output
    assert len(reg.game_store.games()) == 4


def test_an_sprt_match_stops_early_and_prints_the_recorded_games_llr(league):
    home, reg = league
    result = match_cli(home, "rule", "random", "--sprt", "elo0=0,elo1=50,alpha=0.3,beta=0.3", "--max-games", "40",
                       "--batch-pairs", "1", "--workers", "1")
    assert result.exit_code == 0, result.output
    m = match_outcome(reg, 1)
    assert m.decision == "H1" and m.status == "finished"
    assert f"H1 accepted: rule is at least 50 normalized Elo better than random.  (match {m.id})" in result.output
    games = reg.game_store.games(tournament_id=m.tournament_id)
    assert 2 <= len(games) == m.stats.games < 40  # stopped at the decision, far below the cap
    counts = recorded_counts(reg, m.tournament_id, "rule")
    expected = sprt_result(counts, SprtParams(elo1=50, alpha=0.3, beta=0.3))
    assert expected.decision == "H1" and list(m.stats.counts) == counts
    printed = dict(re.findall(r"^  (LLR|pairs LL LD WL\+DD WD WW)\s+(.+)$", result.output, re.M))
    assert printed["LLR"] == f"{expected.llr:+.3f}  bounds [{expected.lower:+.3f}, {expected.upper:+.3f}]"
    assert printed["pairs LL LD WL+DD WD WW"] == " ".join(map(str, counts))
    assert re.search(r"wall time\s+\d+\.\d s", result.output)
    assert len(re.findall(r"^batch \d+/20: ", result.output, re.M)) == len(games) // 2  # a line per batch
    t = reg.tournament_store.get(m.tournament_id)
    assert (t.status, t.planned_games) == ("finished", len(games)) and "H1" in t.message


def net_a_path(home: LeagueHome, game) -> np.ndarray:
    """net-a's car positions over a game's replay [T, 3]."""
    replay = read_replay(home.root / game.replay_path)
    return replay.cars[:, 0 if game.blue == "net-a" else 1, :3]


def test_a_sampled_match_draws_the_networks_actions_and_stays_sampled_when_resumed(league):
    home, reg = league
    cfg = load_config(overrides={"seed": 5, "game.game_seconds": GAME_SECONDS})
    run = start_or_resume_match(reg, home, cfg, "net-a", "rule", max_games=4, batch_pairs=1, workers=1,
                                deterministic=False)
    next(run.batches)
    run.batches.close()  # stopped after its first pair: interrupted, sampled
    m = match_outcome(reg, run.id)
    assert (m.status, m.deterministic, reg.match_store.get(m.id).deterministic) == ("interrupted", False, 0)
    resumed = match_cli(home, "--resume", str(m.id), "--workers", "1")
    assert resumed.exit_code == 0, resumed.output
    assert "Resuming match 1 (tournament 1): net-a vs rule, 1v1, fixed 4 games, sampled," in resumed.output
    assert match_outcome(reg, m.id).status == "finished"
    args = ["net-a", "rule", "--max-games", "4", "--batch-pairs", "1", "--workers", "1", "--seed", "5"]
    again = match_cli(home, *args, "--sampled")
    assert again.exit_code == 0 and "Match 1 (net-a vs rule, fixed 4 games, sampled) already finished" in again.output
    greedy = match_cli(home, *args)  # the same games played argmax: another match
    assert greedy.exit_code == 0, greedy.output
    assert "Starting match 2 (tournament 2): net-a vs rule, 1v1, fixed 4 games, argmax," in greedy.output
    assert "sampled" in reg.tournament_store.get(m.tournament_id).name
    # Same seeds, same start states, rule playing the same way: net-a's car goes its own way in every game
    # where it sampled, the games played after the resume included.
    sampled, argmax = ({g.schedule_index: g for g in reg.game_store.games(tournament_id=t)} for t in (1, 2))
    assert sorted(sampled) == sorted(argmax) == [0, 1, 2, 3]
    for i in range(4):
        assert sampled[i].seed == argmax[i].seed
        a, b = net_a_path(home, sampled[i]), net_a_path(home, argmax[i])
        assert np.array_equal(a[0], b[0]) and not np.array_equal(a, b), i


class Recorded(Policy):
    """A policy that notes how each `act` was asked to choose, and passes it on."""

    def __init__(self, inner: Policy):
        self.inner, self.name, self.asked = inner, inner.name, []
        self.recurrent, self.speaks_controls = inner.recurrent, inner.speaks_controls

    def initial_state(self, n):
        return self.inner.initial_state(n)

    def seed(self, seed):
        self.inner.seed(seed)

    def act(self, obs, state=None, episode_start=None, deterministic=False):
        self.asked.append(deterministic)
        return self.inner.act(obs, state, episode_start, deterministic)


def test_the_game_player_samples_only_when_asked_and_a_sampled_round_replays_exactly(league, tmp_path):
    home, reg = league
    spec = GameSpec(team_size=1, tick_skip=8, mode="timed", game_seconds=4.0)
    games = [ScheduledGame(0, "net-a", "rule", 11), ScheduledGame(1, "rule", "net-a", 11)]

    def play(deterministic: bool, folder: str) -> tuple[list[bool], list[np.ndarray]]:
        net = Recorded(load_policy(reg.agent_store.get("net-a"), home_root=home.root))
        player = GamePlayer(spec, {"net-a": net, "rule": load_policy("rule")}, tmp_path, folder, arenas=2,
                            deterministic=deterministic)
        try:
            outcomes = list(player.play(games))
        finally:
            player.close()
        paths = [read_replay(tmp_path / o.replay_path).cars[..., :3] for o in outcomes]
        return net.asked, paths

    asked, greedy = play(True, "argmax")
    assert asked and set(asked) == {True}
    asked, drawn = play(False, "sampled")
    assert asked and set(asked) == {False}
    _, again = play(False, "again")  # a round's draws follow from its games' seeds alone
    assert all(np.array_equal(x, y) for x, y in zip(drawn, again))
    assert not any(np.array_equal(x, y) for x, y in zip(drawn, greedy))


def _wait_for_games(db: Path, n: int, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                if conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] >= n:
                    return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    raise AssertionError("the match did not record games in time")


@pytest.mark.slow  # a long end-to-end check: CI runs it after the default suite
def test_kill_9_then_resume_plays_only_the_missing_games_and_ends_as_an_uninterrupted_match(league, tmp_path):
    home, reg = league
    sprt = "elo0=0,elo1=5,alpha=0.2,beta=0.2"  # bounds +-1.39, unlikely to be reached within 6 pairs
    cmd = [sys.executable, "-m", "league.cli", "match", "net-a", "random", "--home", str(home.root),
           "--sprt", sprt, "--max-games", "12", "--batch-pairs", "3", "--game-seconds", str(GAME_SECONDS),
           "--workers", "2", "--arenas", "1", "--seed", "11"]  # one game at a time per worker: results stream in
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_for_games(home.db_path, 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-match
    proc.wait()
    m = match_outcome(reg, 1)
    before = {g.schedule_index for g in reg.game_store.games(tournament_id=m.tournament_id)}
    assert m.status == "running" and 3 <= len(before) < 12  # killed: nobody could mark it
    resumed = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "Resuming match 1 (tournament 1)" in resumed.stdout and f"{len(before)} games recorded" in resumed.stdout
    m = match_outcome(reg, 1)
    games = reg.game_store.games(tournament_id=m.tournament_id)
    indexes = [g.schedule_index for g in games]
    assert len(indexes) == len(set(indexes)) == m.stats.games  # none twice, every pair complete
    assert f"{m.stats.games - len(before)} played now" in resumed.stdout
    assert m.status == "finished" and list(m.stats.counts) == recorded_counts(reg, m.tournament_id, "net-a")
    for name, (elo, mu, sigma) in recompute_ratings(reg.game_store, 1).items():
        assert reg.game_store.rating(name, 1).elo == pytest.approx(elo) and reg.game_store.rating(name, 1).sigma == pytest.approx(sigma)
    # The same match uninterrupted, in another league home, ends with the same games and counts.
    other, reg2 = league_copy(tmp_path, home, reg)
    cfg = load_config(overrides={"seed": 11, "game.game_seconds": GAME_SECONDS})
    fresh = play_match(other, reg2, cfg, "net-a", "random", SprtParams.parse(sprt), 12, batch_pairs=3, workers=1)
    assert (fresh.decision, fresh.stats) == (m.decision, m.stats)
    results = {g.schedule_index: (g.blue, g.blue_goals, g.orange_goals) for g in games}
    assert results == {g.schedule_index: (g.blue, g.blue_goals, g.orange_goals)
                       for g in reg2.game_store.games(tournament_id=fresh.tournament_id)}


def test_a_match_played_elsewhere_is_left_alone_and_only_league_match_resumes_it(league):
    home, reg = league
    cfg = load_config(overrides={"seed": 3, "game.game_seconds": GAME_SECONDS})
    run = start_or_resume_match(reg, home, cfg, "rule", "random", max_games=8, batch_pairs=1, workers=1)
    next(run.batches)
    run.batches.close()  # stopped after one batch (one pair): 'interrupted'
    m = match_outcome(reg, run.id)
    assert m.status == "interrupted" and reg.tournament_store.get(m.tournament_id).status == "interrupted"
    args = ["rule", "random", "--max-games", "8", "--batch-pairs", "1", "--workers", "1", "--seed", "3"]
    with claim(home.root, "tournament", str(m.tournament_id), "someone"):  # another process plays it
        busy = match_cli(home, *args)
        assert busy.exit_code == 2 and f"Match {m.id} is in use by process {os.getpid()}" in busy.output
    assert len(reg.game_store.games(tournament_id=m.tournament_id)) == 2 and match_outcome(reg, m.id).status == "interrupted"
    # `league tournament` neither resumes nor abandons it, nor mistakes it for a round robin of its own.
    for flag in ("--resume", "--abandon"):
        refused = runner.invoke(app, ["tournament", "--home", str(home.root), flag, str(m.tournament_id)])
        assert refused.exit_code == 2
        assert f"Tournament {m.tournament_id} is match {m.id} (rule vs random); {flag[2:]} it with" in refused.output
    assert open_tournament(reg, cfg, 1, 8, 3, ["rule", "random"]) == (m.tournament_id + 1, False)
    # --abandon ends it for good; its games stay recorded.
    abandoned = runner.invoke(app, ["match", "--home", str(home.root), "--abandon", str(m.id)])
    assert abandoned.exit_code == 0 and "2 recorded games stay recorded" in abandoned.output
    again = match_cli(home, *args)
    assert again.exit_code == 2 and f"Match {m.id} with these settings was abandoned" in again.output


def test_bad_requests_end_in_one_sentence_and_store_nothing(league):
    home, reg = league
    add_network_agent(home, reg, "net-2v2", 2, team_size=2)
    add_network_agent(home, reg, "net-old", 3)
    reg.agent_store.set_status("net-old", "retired")
    cases = [
        (["rule", "nobody"], "No agent named 'nobody'"),
        (["rule", "rule"], "A match needs two different agents, not 'rule' twice."),
        (["rule", "net-2v2"], "'net-2v2' is a 2v2 agent, not 1v1."),
        (["net-old", "rule"], "'net-old' is retired; reactivate it to play a match."),
        (["rule", "random", "--sprt", "elo1=abc"], "SPRT option 'elo1' must be a number"),
        (["rule", "random", "--sprt", "elo0=10,elo1=5"], "SPRT elo0 must be less than elo1"),
        (["rule", "random", "--sprt", "speed=3"], "Unknown SPRT option 'speed'"),
        (["rule", "random", "--max-games", "7"], "--max-games must be an even number of games"),
        (["rule", "random", "--max-games", "0"], "--max-games must be an even number of games"),
        (["rule", "random", "--batch-pairs", "0"], "--batch-pairs must be between 1"),
        (["rule"], "Name the two agents of the match"),
        (["--resume", "9"], "No match with id 9."),
    ]
    for args, message in cases:
        result = match_cli(home, *args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, (args, result.output)
    assert reg.tournament_store.all() == [] and reg.match_store.all() == []
