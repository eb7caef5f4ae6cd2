"""Gated promotion: `league promote NAME [--sprt]`, the promotions store, promotion during training and
the curriculum gate's SPRT criterion, on real league homes with real short games.

Real games, kept short: the candidates are scripted bots registered as stage agents (kind `rule`
or `random` with a team size), so an SPRT decides in a few mirrored pairs of 8-second games:
rule against random sweeps every pair (H1), a network with random weights loses every pair to
rule (H0).
"""

import re
import sqlite3
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from agents.checkpoint import save_checkpoint
from agents.networks import build_network
from arena.match import check_agents, match_outcome
from arena.promotion import promote_after_evaluation
from league.cli import app
from league.config import PolicyConfig, load_config
from league.errors import ConfigError, LeagueError
from league.home import LeagueHome
from league.registry import MatchSettings, Registry, SprtTest
from league.schema import migrations
from league.stores.database import connect
from training.curriculum import CurriculumTrainer, stage_configs
from training.curriculum_spec import parse_curriculum
from training.selfplay import SelfPlayTrainer

from conftest import promoted_by_sprt, promotions_of

GAME_SECONDS = 8
QUICK_SPRT = "elo0=0,elo1=100,alpha=0.2,beta=0.2"  # bounds +-1.39: a sweep of 3-5 pairs decides
QUICK = ["--sprt-params", QUICK_SPRT, "--max-games", "20", "--game-seconds", str(GAME_SECONDS), "--batch-pairs", "1",
         "--workers", "1"]
runner = CliRunner()


def cli(home: LeagueHome, *args: str):
    return runner.invoke(app, [*args, "--home", str(home.root)])


def add_network_agent(home: LeagueHome, reg: Registry, name: str, seed: int, team_size: int = 1) -> None:
    torch.manual_seed(seed)
    net = build_network(PolicyConfig(actor_sizes=[32], critic_sizes=[32]))
    rel = Path("checkpoints") / f"{name}.safetensors"
    sha = save_checkpoint(home.root / rel, net, steps=0)
    reg.agent_store.add(name, "mlp", team_size, checkpoint_path=str(rel), checkpoint_sha256=sha)


@pytest.fixture
def league(scripted_stage):
    """A 1v1 stage with two scripted stage agents: `rulebot` (the rule bot) and `randbot` (random actions)."""
    return scripted_stage


def one_line(result) -> str:
    text = result.output.strip()
    assert len(text.splitlines()) == 1 and "Traceback" not in text, text
    return text


# --------------------------------------------------------------------------- by hand


def test_a_plain_promote_is_recorded_as_manual(league):
    home, reg = league
    assert one_line(cli(home, "promote", "randbot")) == "randbot is now champion"
    assert one_line(cli(home, "promote", "rulebot")) == "rulebot is now champion"
    again = cli(home, "promote", "rulebot")
    assert again.exit_code == 0 and one_line(again) == "rulebot is already champion"
    rows = reg.promotion_store.for_stage(1)
    assert [(p.agent, p.previous_champion, p.method, p.promoted, p.match_id, p.decision) for p in rows] == [
        ("randbot", None, "manual", True, None, None), ("rulebot", "randbot", "manual", True, None, None)]
    assert [p.agent for p in promotions_of(reg.promotion_store, "rulebot")] == ["rulebot"]
    assert promoted_by_sprt(reg.promotion_store) == [] and reg.promotion_store.for_stage(2) == []
    assert reg.agent_store.get("rulebot").status == "champion" and reg.agent_store.get("randbot").status == "active"
    refused = cli(home, "promote", "randbot", "--max-games", "20")
    assert refused.exit_code == 2 and "--max-games goes with --sprt" in one_line(refused)
    assert reg.agent_store.get("rulebot").status == "champion" and len(reg.promotion_store.all()) == 2


# --------------------------------------------------------------------------- by SPRT


def test_sprt_promotes_on_h1_and_records_the_match(league):
    home, reg = league
    reg.promotion_store.promote_manually("randbot")
    result = cli(home, "promote", "rulebot", "--sprt", *QUICK)
    assert result.exit_code == 0, result.output
    assert "Testing rulebot against the 1v1 champion randbot in match 1" in result.output
    assert "H1 accepted: rulebot is at least 100 normalized Elo better than randbot.  (match 1)" in result.output
    assert "promoted: rulebot is now the 1v1 champion (was randbot)." in result.output
    m = match_outcome(reg, 1)
    assert (m.a, m.b, m.decision, m.game_seconds) == ("rulebot", "randbot", "H1", GAME_SECONDS)
    assert 2 <= m.stats.games < 20 and len(reg.game_store.games(tournament_id=m.tournament_id)) == m.stats.games
    (row,) = promoted_by_sprt(reg.promotion_store, 1)
    assert (row.agent, row.previous_champion, row.method, row.promoted, row.match_id, row.decision) == (
        "rulebot", "randbot", "sprt", True, m.id, "H1")
    assert (row.llr, row.elo, row.elo_lo, row.elo_hi, row.los, row.games) == (
        m.stats.llr, m.stats.elo, m.stats.elo_lo, m.stats.elo_hi, m.stats.los, m.stats.games)
    printed = dict(re.findall(r"^  (LLR)\s+(\S+)", result.output, re.M))
    assert printed["LLR"] == f"{m.stats.llr:+.3f}"  # the match's statistics, printed as `league match` does
    assert reg.agent_store.get("rulebot").status == "champion" and reg.agent_store.get("randbot").status == "active"
    # The champion asked again: nothing to test, nothing played.
    again = cli(home, "promote", "rulebot", "--sprt", *QUICK)
    assert again.exit_code == 0 and "rulebot is already the 1v1 champion; nothing to test." in again.output
    assert len(reg.match_store.all()) == 1 and len(reg.promotion_store.all()) == 2


def test_sprt_h0_keeps_the_champion_and_exits_1(league):
    home, reg = league
    add_network_agent(home, reg, "net", seed=1)  # random weights: rule wins every pair
    reg.promotion_store.promote_manually("rulebot")
    result = cli(home, "promote", "net", "--sprt", *QUICK)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "H0 accepted: net is no more than 0 normalized Elo better than rulebot.  (match 1)" in result.output
    assert "not promoted: H0 accepted; rulebot stays the 1v1 champion." in text
    m = match_outcome(reg, 1)
    (row,) = promotions_of(reg.promotion_store, "net")
    assert (row.method, row.promoted, row.match_id, row.decision, row.previous_champion, row.games) == (
        "sprt", False, m.id, "H0", "rulebot", m.stats.games)
    assert reg.agent_store.get("rulebot").status == "champion" and reg.agent_store.get("net").status == "active"
    assert promoted_by_sprt(reg.promotion_store) == []
    # The same command again replays nothing: the decided test is shown, and recorded once.
    games = len(reg.game_store.games())
    again = cli(home, "promote", "net", "--sprt", *QUICK)
    assert again.exit_code == 1 and "already decided this test" in again.output and "not promoted: H0" in again.output
    assert len(reg.game_store.games()) == games and len(promotions_of(reg.promotion_store, "net")) == 1


def test_without_a_champion_the_candidate_must_beat_rule(league):
    home, reg = league
    result = cli(home, "promote", "randbot", "--sprt", *QUICK)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "Testing randbot against rule (the 1v1 stage has no champion yet" in text
    assert "not promoted: H0 accepted" in text and "the 1v1 stage still has no champion." in text
    (row,) = promotions_of(reg.promotion_store, "randbot")
    assert row.previous_champion is None and match_outcome(reg, row.match_id).b == "rule"
    assert reg.agent_store.champion(1) is None


@pytest.mark.parametrize("args, words", [
    (["rulebot", "--sprt", "--sprt-params", "speed=3"], "Unknown SPRT option 'speed'"),
    (["rulebot", "--sprt", "--sprt-params", "elo0=10,elo1=5"], "SPRT elo0 must be less than elo1"),
    (["rulebot", "--sprt", "--max-games", "7"], "--max-games must be an even number of games"),
    (["rule", "--sprt"], "'rule' is a baseline that plays every stage"),
    (["nobody", "--sprt"], "No agent named 'nobody'"),
])
def test_bad_requests_are_one_sentence_exit_2_and_store_nothing(league, args, words):
    home, reg = league
    result = cli(home, "promote", *args)
    assert result.exit_code == 2 and words in one_line(result)
    assert reg.match_store.all() == [] and reg.promotion_store.all() == [] and reg.agent_store.champion(1) is None


def test_the_promotion_config_is_checked_at_load(league, tmp_path):
    home, reg = league
    bad = tmp_path / "bad.yaml"
    bad.write_text('promotion:\n  sprt: "elo0=10,elo1=5"\n')
    result = cli(home, "promote", "rulebot", "--sprt", "--config", str(bad))
    text = one_line(result)
    assert result.exit_code == 2 and str(bad) in text and "key 'promotion.sprt' is not a valid SPRT" in text
    assert reg.match_store.all() == []
    cfg = load_config()
    assert (cfg.promotion.sprt, cfg.promotion.max_games, cfg.promotion.during_training) == (
        "elo0=0,elo1=30,alpha=0.05,beta=0.05", 400, False)
    for setting, words in (("promotion.sprt=elo1=abc", "SPRT option 'elo1' must be a number"),
                           ("promotion.max_games=7", "must be an even number of games"),
                           ("promotion.training_max_games=0", "between 2 and 10000"),
                           ("promotion.training_min_score=2", "between 0 and 1"),
                           ("promotion.during_training=maybe", "true or false")):
        with pytest.raises(ConfigError, match=re.escape(words)):
            load_config(sets=[setting])


def test_a_gate_sprt_is_checked_when_the_curriculum_is_read():
    def stage(gate):
        return {"stages": [{"name": "a", "gate": gate}]}

    with pytest.raises(ConfigError, match=r"^my\.yaml: key 'stages\[0\]\.gate\.sprt_vs_previous' is not a valid SPRT"):
        parse_curriculum(stage({"sprt_vs_previous": "elo0=5,elo1=1"}), "my.yaml")
    with pytest.raises(ConfigError, match=r"key 'stages\[0\]\.gate\.sprt_max_games' must be an even number"):
        parse_curriculum(stage({"sprt_vs_previous": "elo1=20", "sprt_max_games": 31}), "my.yaml")
    spec = parse_curriculum(stage({"sprt_vs_previous": "elo0=-30,elo1=0"}), "my.yaml")
    assert (spec.stages[0].gate.sprt_vs_previous, spec.stages[0].gate.sprt_max_games) == ("elo0=-30,elo1=0", 200)


# --------------------------------------------------------------------------- the store


def test_a_test_against_a_champion_that_changed_promotes_nobody(league):
    home, reg = league
    reg.promotion_store.promote_manually("randbot")
    cfg = load_config()
    row, _ = reg.match_store.open(MatchSettings("rulebot", "randbot", 1, "sprt", "{}", 20, 8.0, 0), 1, cfg.to_dict())
    test = SprtTest(row.id, "H1", 2.0, 900.0, 800.0, 1000.0, 1.0, 8)
    reg.promotion_store.promote_manually("rulebot")  # another command crowned someone while the match ran
    reg.promotion_store.promote_manually("randbot")
    with pytest.raises(LeagueError, match="test it again"):
        reg.promotion_store.record_test("rulebot", "sprt", test, tested_against=None)
    assert reg.agent_store.get("randbot").status == "champion" and reg.promotion_store.for_match(row.id) is None
    first = reg.promotion_store.record_test("rulebot", "sprt", test, tested_against="randbot")
    assert first.promoted and reg.agent_store.get("rulebot").status == "champion"
    assert reg.promotion_store.record_test("rulebot", "sprt", test, tested_against="rulebot") == first  # once


def test_the_status_change_and_its_row_are_one_transaction(league):
    home, reg = league
    reg.promotion_store.promote_manually("randbot")
    missing_match = SprtTest(999, "H1", 2.0, 900.0, 800.0, 1000.0, 1.0, 8)  # no such match: the row cannot be written
    with pytest.raises(sqlite3.IntegrityError):
        reg.promotion_store.record_test("rulebot", "sprt", missing_match, tested_against="randbot")
    assert reg.agent_store.get("randbot").status == "champion" and reg.agent_store.get("rulebot").status == "active"
    assert [p.agent for p in reg.promotion_store.all()] == ["randbot"]


def test_an_older_home_read_only_has_no_promotions(tmp_path):
    path = tmp_path / "v7.db"
    db = connect(path)
    migrations.apply(db, stop_before="0008_promotions")
    db.conn.close()
    old = Registry.open(path, readonly=True)
    assert "promotions" not in old.db.table_names()
    store = old.promotion_store
    assert store.all() == [] and store.for_stage(1) == [] and promotions_of(store, "x") == []
    assert promoted_by_sprt(store) == [] and store.for_match(1) is None
    old.close()
    assert "promotions" in Registry.open(path).db.table_names()  # a writing open migrates


def test_a_match_may_take_b_from_another_stage_only_when_asked(league):
    home, reg = league
    add_network_agent(home, reg, "net-2v2", seed=2, team_size=2)
    with pytest.raises(LeagueError, match="'rulebot' is a 1v1 agent, not 2v2"):
        check_agents(reg, "net-2v2", "rulebot", 2)
    check_agents(reg, "net-2v2", "rulebot", 2, b_any_stage=True)  # a curriculum gate's previous-stage agent
    with pytest.raises(LeagueError, match="'net-2v2' is a 2v2 agent, not 1v1"):
        check_agents(reg, "net-2v2", "rulebot", 1, b_any_stage=True)  # A is always the stage's own


# --------------------------------------------------------------------------- training


def quick_config(*extra: str):
    return load_config(sets=[f"promotion.sprt={QUICK_SPRT}", f"promotion.game_seconds={GAME_SECONDS}",
                             "promotion.training_max_games=20", *extra])


def test_training_tests_a_promising_snapshot_and_promotes_it_on_h1(league):
    home, reg = league
    reg.promotion_store.promote_manually("randbot")
    cfg = quick_config()
    skipped = promote_after_evaluation(home, reg, cfg, "rulebot", {"randbot": 0.25, "rule": 1.0}, seed=5)
    assert skipped.result is None and "below promotion.training_min_score 50%" in skipped.note
    assert reg.match_store.all() == [] and skipped.metrics() == {}
    attempt = promote_after_evaluation(home, reg, cfg, "rulebot", {"randbot": 0.75}, seed=5)
    assert attempt.result is not None and attempt.result.promoted, attempt.note
    assert attempt.note.startswith("promotion: rulebot is now the 1v1 champion (was randbot): H1 accepted")
    (row,) = promoted_by_sprt(reg.promotion_store, 1)
    m = match_outcome(reg, row.match_id)
    assert (row.agent, row.method, row.decision, m.seed, m.max_games) == ("rulebot", "training", "H1", 5, 20)
    assert attempt.metrics() == {"promotion/promoted": 1.0, "promotion/llr": m.stats.llr,
                                 "promotion/games": float(m.stats.games)}
    assert reg.agent_store.get("rulebot").status == "champion"


@pytest.mark.slow  # 5 s: the whole command; promote_after_evaluation itself is tested by default above
def test_league_train_with_promotion_tests_its_evaluated_snapshot(league):
    """A tiny run: its snapshot is evaluated, then tested against the champion; the decision is recorded."""
    home, reg = league
    reg.promotion_store.promote_manually("randbot")
    sets = ["runner.workers=2", "runner.envs_per_worker=2", "ppo.steps_per_env=32", "ppo.minibatch_size=128",
            "policy.actor_sizes=[32]", "policy.critic_sizes=[32]", "training.snapshot_every_steps=256",
            "training.eval_every_snapshots=1", "training.eval_games=2", "training.eval_game_seconds=5",
            "training.steps=512", "promotion.during_training=true", "promotion.training_min_score=0",
            "promotion.training_max_games=4", "promotion.game_seconds=5", "panel.games=0"]  # as tests/test_selfplay.py's TINY
    cfg = load_config(stage="1v1", sets=sets)
    notes = []
    result = SelfPlayTrainer(cfg, home, reg, on_progress=lambda e: notes.append(getattr(e, "text", ""))).run()
    snapshot = result.versions[0]  # the evaluated one (a final snapshot, if any, is not evaluated)
    (row,) = promotions_of(reg.promotion_store, snapshot)
    m = match_outcome(reg, row.match_id)
    assert (row.method, row.previous_champion, m.a, m.b, m.max_games) == ("training", "randbot", snapshot, "randbot", 4)
    assert row.decision == m.decision and row.promoted == (m.decision == "H1")
    assert reg.agent_store.champion(1).name == (snapshot if row.promoted else "randbot")
    assert any(n.startswith(f"promotion: {snapshot}") for n in notes)
    assert result.timing["evaluation"] > 0
    metrics = (home.runs / "mlp-1v1" / "metrics.jsonl").read_text()
    assert '"promotion/games"' in metrics


# --------------------------------------------------------------------------- curriculum gates


def test_a_curriculum_gate_with_an_sprt_plays_the_match_and_passes_only_on_h1(league):
    home, reg = league
    gate = {"min_games": 2, "game_seconds": GAME_SECONDS, "sprt_vs_previous": QUICK_SPRT, "sprt_max_games": 20}
    spec = parse_curriculum({"name": "gated", "stages": [
        {"name": "first", "stage": "1v1", "max_steps": 200, "eval_every_steps": 200},
        {"name": "second", "stage": "1v1", "max_steps": 200, "eval_every_steps": 200, "gate": gate}]}, "test")
    trainer = CurriculumTrainer(spec, home, reg, stage_configs(spec, home, sets=["runner.workers=1"]))
    reg.curriculum_store.start(spec.name, spec.to_dict(), "test", [("first", 1, "gated-first"), ("second", 1, "gated-second")])
    reg.curriculum_store.update_stage(spec.name, 0, status="passed", final_agent="randbot")
    passed = trainer._check_gate(1, "rulebot", 200)  # the stage's snapshot against the previous stage's final agent
    (c,) = passed.criteria
    assert passed.passed and c.name == "sprt_vs_previous" and "H1 accepted" in c.reason and c.value >= c.threshold
    reg.curriculum_store.update_stage(spec.name, 0, final_agent="rulebot")
    failed = trainer._check_gate(1, "randbot", 200)
    (c,) = failed.criteria
    assert not failed.passed and "H0 accepted" in c.reason and c.value < c.threshold
    checks = reg.curriculum_store.gate_checks(spec.name, 1)
    assert [ck.passed for ck in checks] == [True, False]
    assert [ck.criteria[0]["name"] for ck in checks] == ["sprt_vs_previous"] * 2
    matches = reg.match_store.all()
    assert [(m.a, m.b, m.decision) for m in matches] == [("rulebot", "randbot", "H1"),
                                                                    ("randbot", "rulebot", "H0")]
    assert all(f"match {m.id}" in ck.criteria[0]["reason"] for m, ck in zip(matches, checks))
