"""`league probe NAME`: an exploitability probe (training.probe) on a real league home with real games,
its record (league.probes, the probes store), `league show`, and the promotion gate it feeds."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from arena.promotion import promote_by_sprt
from league.cli import app
from league.config import load_config
from league.errors import LeagueError
from league.probes import ProbeResult
from league.ratings import wilson_interval as wilson

runner = CliRunner()
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


def test_bad_probes_are_one_sentence_and_exit_2(scripted_stage):
    home, reg = scripted_stage
    for args, words in ((["nobody"], "nobody"), (["randbot", "--games", "1"], "--games"),
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
    reg.probe_store.add(ProbeResult("rulebot", "randbot", 1, 1.0, 100, 10, 4, 1, 5, 0))
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
