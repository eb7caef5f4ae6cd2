"""The learning benchmark end to end on a tiny budget: it trains, evaluates against the whole
ladder in one go, and reports the time split and the run's own learning curve."""

from __future__ import annotations

import pytest

from league.home import LeagueHome
from league.registry import Registry
from training.measure.learning import OPPONENTS, UNTRAINED_OPPONENTS, bench_learning, report_json

TINY = ["runner.workers=2", "runner.envs_per_worker=2", "ppo.steps_per_env=32", "ppo.minibatch_size=128",
        "policy.actor_sizes=[32]", "policy.critic_sizes=[32]", "training.snapshot_every_steps=256",
        "training.eval_every_snapshots=1", "training.eval_games=2", "training.eval_game_seconds=5"]


@pytest.mark.slow  # trains end to end: CI runs it after the default suite
def test_tiny_benchmark_reports_results_timing_and_curve(tmp_path):
    bench = bench_learning(minutes=0.15, games=2, root=tmp_path / "home", seed=3, sets=TINY)
    report = report_json(bench)
    assert report["steps"] > 0 and report["kickstart_teacher"] == "rule-pro"
    assert set(report["timing"]) == {"collection", "inference", "update", "snapshot", "evaluation"}
    assert report["timing"]["evaluation"] > 0  # the run played its evaluation games
    assert list(report["results"]) == ([f"{bench.trained} vs {o}" for o in OPPONENTS]
                                       + [f"untrained vs {o}" for o in UNTRAINED_OPPONENTS])
    assert all(r["games"] == 2 for r in report["results"].values())
    # The trained agent again, taking its most likely actions (issue 48, item 7).
    assert list(report["argmax"]) == [f"{bench.trained} vs {o}" for o in OPPONENTS]
    assert all(r["games"] == 2 for r in report["argmax"].values())
    assert [r.play for r in bench.results].count("argmax") == len(OPPONENTS)
    registry = Registry.open(LeagueHome(bench.home).db_path)
    played = [g for g in registry.game_store.games(1) if bench.trained in (g.blue, g.orange) and g.seed == 1000]
    assert len(played) == 2 * 2 * len(OPPONENTS)  # both ways recorded, so both count in the ratings below
    # The curve: every evaluated version against every baseline of the ladder, two games each, by steps.
    curve = report["curve"]
    assert {p["opponent"] for p in curve} == set(OPPONENTS)
    assert all(p["wins"] + p["draws"] + p["losses"] == 2 for p in curve)
    assert [p["steps"] for p in curve] == sorted(p["steps"] for p in curve)
    assert set(report["ratings"]) == {bench.trained, "untrained", "rule", "random"}
