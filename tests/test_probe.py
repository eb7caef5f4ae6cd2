"""`league probe NAME`: an exploitability probe (training.probe) on a real league home with real games,
its record (league.probes, the probes store), `league show`, and the promotion gate it feeds."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from arena.promotion import promote_by_sprt
from league.cli import app
from league.config import load_config
from league.errors import LeagueError
from league.probes import ProbeResult
from league.names import check_run_name
from league.ratings import wilson_interval as wilson
from training.probe import check_probe, probe_name, run_probe

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
TINY_SETS = ["runner.backend=in-process", "runner.workers=1", "runner.envs_per_worker=2", "ppo.steps_per_env=16",
             "ppo.minibatch_size=64", "policy.actor_sizes=[32]", "policy.critic_sizes=[32]",
             "training.kickstart.teacher="]
TINY = ["--set", "runner.workers=1", "--set", "runner.envs_per_worker=2", "--set", "ppo.steps_per_env=16",
        "--set", "ppo.minibatch_size=64", "--set", "policy.actor_sizes=[32]", "--set", "policy.critic_sizes=[32]"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.integers(1, 300))
def test_the_wilson_interval_holds_the_rate_within_0_and_1(wins, games):
    wins = min(wins, games)
    low, high = wilson(wins, games)
    assert 0.0 <= low <= wins / games <= high <= 1.0
    wider = wilson(wins, games, z=2.58)
    assert wider[0] <= low and high <= wider[1]
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.slow  # 6 s: a probe trained and played; the default suite keeps its refusals, record and gate
def test_a_probe_trains_against_its_target_alone_plays_it_and_is_recorded(scripted_stage):
    home, reg = scripted_stage
    result = runner.invoke(app, ["probe", "randbot", "--minutes", "0.05", "--games", "4", *TINY,
                                 "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    line = " ".join(result.output.split())  # rich wraps long lines
    assert re.search(r"Probe probe-randbot-1-v\d+ \([\d,]+ steps in 0.05 min\) against randbot: \d+-\d+-\d+ "
                     r"\(W-D-L\) in 4 games; win rate \d+% \(95% interval \d+%\.\.\d+%\)", line), line
    (probe,) = reg.probe_store.of("randbot")
    assert probe.games == 4 and probe.wins + probe.draws + probe.losses == 4 and probe.steps > 0
    rows = [json.loads(line) for line in (home.runs / "probe-randbot-1" / "metrics.jsonl").read_text().splitlines()]
    shares = [r for r in rows if any(k.startswith("charts/opponent_share/") for k in r)]
    assert shares and all(r.get("charts/opponent_share/randbot") == 1.0 for r in shares)  # it played nobody else
    versions = [a for a in reg.agent_store.all(include_retired=True) if a.name.startswith("probe-randbot-1-v")]
    assert versions and all(a.status == "retired" for a in versions)  # out of every pool once measured
    assert not [g for g in reg.game_store.games() if "probe" in (g.blue, g.orange)]  # its games are not rated
    shown = runner.invoke(app, ["show", "randbot", "--home", str(home.root)])
    assert shown.exit_code == 0 and "Exploitability probes" in shown.output and probe.probe in shown.output


@pytest.mark.slow  # 12 s: two probes trained and played
def test_a_probe_from_an_agent_starts_from_its_weights_and_says_so(scripted_stage):
    home, reg = scripted_stage
    first = runner.invoke(app, ["probe", "randbot", "--minutes", "0.05", "--games", "2", *TINY,
                                "--home", str(home.root)])
    assert first.exit_code == 0, first.output
    (fresh,) = reg.probe_store.of("randbot")
    assert fresh.start is None
    start = reg.agent_store.get(fresh.probe)
    second = runner.invoke(app, ["probe", "randbot", "--from", fresh.probe, "--minutes", "0.05", "--games", "2",
                                 "--set", "runner.workers=1", "--set", "runner.envs_per_worker=2",
                                 "--set", "ppo.steps_per_env=16", "--set", "ppo.minibatch_size=64",
                                 "--home", str(home.root)])  # the network is the start's: no policy.* flags
    assert second.exit_code == 0, second.output
    assert f"(from {fresh.probe}, " in " ".join(second.output.split())
    probe = reg.probe_store.of("randbot")[-1]
    assert probe.start == fresh.probe and probe.probe.startswith("probe-randbot-2-v")
    first_version = reg.agent_store.get(reg.agent_store.run_versions("probe-randbot-2")[0])
    assert reg.agent_store.by_id(first_version.parent_id).name == fresh.probe  # the lineage holds the start
    assert reg.agent_store.get(probe.probe).steps_trained == start.steps_trained + probe.steps  # its steps go on
    assert [p.start for p in reg.probe_store.of("randbot")] == [None, fresh.probe]
    shown = " ".join(runner.invoke(app, ["show", "randbot", "--home", str(home.root)]).output.split())
    assert fresh.probe in shown and "fresh" in shown


def test_a_probe_from_what_is_no_league_network_is_one_sentence(scripted_stage):
    home, reg = scripted_stage
    for start, words in (("nobody", "nobody"), ("rulebot", "'rulebot' is a rule agent without trained weights; --from "
                                                            "needs a trained agent")):
        result = runner.invoke(app, ["probe", "randbot", "--from", start, "--home", str(home.root)])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert words in result.output
    assert reg.probe_store.of("randbot") == []


def test_bad_probes_are_one_sentence_and_exit_2(scripted_stage):
    home, reg = scripted_stage
    for args, words in ((["nobody"], "nobody"), (["randbot", "--games", "1"], "--games"),
                        (["randbot", "--games", "3", "--minutes", "0.01"], "--games must be an even number of games"),
                        (["randbot", "--minutes", "0"], "--minutes"),
                        (["rule", "--stage", "4v4"], "4v4")):
        result = runner.invoke(app, ["probe", *args, "--home", str(home.root)])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert words in result.output
    assert reg.probe_store.of("randbot") == []


def test_the_exploitability_gate_refuses_a_candidate_without_a_probe_or_beaten_too_often(scripted_stage):
    home, reg = scripted_stage
    cfg = load_config(sets=["promotion.max_exploitability=0.3"])
    with pytest.raises(LeagueError, match="has no exploitability probe; run `league probe rulebot` first"):
        promote_by_sprt(home, reg, cfg, "rulebot")
    reg.probe_store.add(ProbeResult(wins=4, draws=1, losses=5, target="rulebot", probe="randbot", team_size=1,
                                    minutes=1.0, steps=100, seed=0))
    with pytest.raises(LeagueError, match=r"too exploitable to promote: its probe randbot won 4 of 10 games \(40%\)"):
        promote_by_sprt(home, reg, cfg, "rulebot")
    assert reg.match_store.all() == []  # refused before any game


@pytest.mark.slow  # about 10 s: Necto acts in every game
def test_a_community_bot_can_be_probed_at_a_team_size_it_plays(scripted_stage):
    from tests.community_bots import bots_dir

    home, reg = scripted_stage
    added = runner.invoke(app, ["bot", "add", "necto", str(bots_dir() / "Necto"), "--home", str(home.root)])
    assert added.exit_code == 0, added.output
    result = runner.invoke(app, ["probe", "necto", "--stage", "1v1", "--minutes", "0.05", "--games", "2", *TINY,
                                 "--home", str(home.root)])
    assert result.exit_code == 0, result.output  # the games publish the state Necto reads
    assert [p.team_size for p in reg.probe_store.of("necto")] == [1]
    unsized = runner.invoke(app, ["probe", "necto", "--home", str(home.root)])
    assert unsized.exit_code == 2 and "plays more than one team size; pass --stage" in unsized.output


class _Killed(Exception):
    """The probe's process ends here, as kill -9 would end it."""


def test_a_probes_snapshots_are_never_active_so_a_probe_killed_while_it_plays_leaves_none_in_any_pool(scripted_stage):
    home, reg = scripted_stage
    # A snapshot left active by a probe killed before its snapshots were registered retired: the next probe retires it.
    reg.agent_store.add("probe-randbot-1-v1", "random", 1)
    seen = {}

    def playing() -> None:  # what the registry holds as the games start is what a kill -9 there would leave
        seen["probes"] = {a.name: a.status for a in reg.agent_store.all(include_retired=True)
                          if a.name.startswith("probe-")}
        seen["pool"] = [a.name for a in reg.agent_store.all(1)]  # what opponent mixes and tournaments draw from
        raise _Killed

    with pytest.raises(_Killed):
        run_probe(home, reg, "randbot", 0.01, 2, sets=TINY_SETS, on_games=playing)
    assert len(seen["probes"]) > 1 and set(seen["probes"].values()) == {"retired"}, seen["probes"]
    assert not [n for n in seen["pool"] if n.startswith("probe-")]
    assert reg.probe_store.of("randbot") == []  # nothing measured, nothing recorded


def test_a_probe_of_a_bot_that_plays_one_team_size_needs_no_stage(scripted_stage):
    from agents.community.bots import KINDS

    home, reg = scripted_stage
    for kind in KINDS.values():  # registered as `league bot add` registers it: its manifest lists its team sizes
        reg.agent_store.add(kind.kind, "community", None, config={"community": {"team_sizes": list(kind.team_sizes)}})
    assert check_probe(reg, "element", 2) == 1  # Element plays 1v1 only
    with pytest.raises(LeagueError, match="plays more than one team size; pass --stage"):
        check_probe(reg, "necto", 2)
    with pytest.raises(LeagueError, match="'element' does not play 2v2"):
        check_probe(reg, "element", 2, "2v2")


@pytest.mark.parametrize("length", [48, 52, 60, 64])
def test_a_probe_of_an_agent_with_a_long_name_gets_a_valid_run_name_of_its_own(scripted_stage, length):
    home, reg = scripted_stage
    targets = ["a" * length, "a" * (length - 1) + "b"]
    names = [probe_name(reg, t) for t in targets]
    for name in names:
        assert check_run_name(name) == name and name.startswith("probe-aaaa") and name.endswith("-1")
    assert names[0] != names[1]
    reg.agent_store.add(f"{names[0]}-v1", "random", 1)
    assert probe_name(reg, targets[0]) == names[0][:-1] + "2"


@pytest.mark.slow  # about 10 s: a probe killed with kill -9 while it plays
def test_kill_9_while_a_probe_plays_leaves_no_probe_snapshot_active(scripted_stage):
    home, reg = scripted_stage
    cmd = [sys.executable, "-m", "league.cli", "probe", "randbot", "--minutes", "0.02", "--games", "200", *TINY,
           "--home", str(home.root)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # its snapshot is registered: training is over, the games are under way
            assert proc.poll() is None, "the probe ended before it was killed"
            with sqlite3.connect(home.db_path) as conn:
                if conn.execute("SELECT count(*) FROM agents WHERE name LIKE 'probe-%'").fetchone()[0]:
                    break
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    probes = [a for a in reg.agent_store.all(include_retired=True) if a.name.startswith("probe-")]
    assert probes and all(a.status == "retired" for a in probes)
    assert not [a for a in reg.agent_store.all(1) if a.name.startswith("probe-")]
