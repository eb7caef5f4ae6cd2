"""The Training page's distillation section (issue 48, item 6) through Streamlit's AppTest: a run
that distils a teacher, written as training.selfplay writes its metrics (tests/dashboard_fixture.py),
and one distilled for real by `league train --distill`; a run without distillation shows as before."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from dashboard.distill_view import phase_ends, teacher_of  # noqa: E402
from dashboard_fixture import build_empty_league, write_distill_run, write_training_runs  # noqa: E402
from league.cli import app  # noqa: E402
from test_dashboard import texts  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
TITLES = ["held-out agreement (argmax)", "held-out cross-entropy", "guide weight", "score rate against the teacher"]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = build_empty_league(tmp_path_factory.mktemp("distill") / "league")
    write_training_runs(home)
    rows = write_distill_run(home)
    write_distill_run(home, "no-info-1v1", updates=8, distilling=8)
    (home.runs / "no-info-1v1" / "run.json").unlink()
    return SimpleNamespace(root=home.root, runs=home.runs, rows=rows)


def training_page(monkeypatch, root, runs: list[str], axis: str | None = None) -> AppTest:
    monkeypatch.setenv("LEAGUE_HOME", str(root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "training"
    at.run()
    at.multiselect(key="training_runs").set_value(runs).run()
    if axis:
        at.radio(key="training_axis").set_value(axis).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def distill_summary(at: AppTest) -> pd.DataFrame:
    """The section's table: one row per distilling run."""
    return next(d.value for d in at.dataframe if "teacher" in d.value.columns)


def charts(at: AppTest) -> dict[str, dict[str, pd.DataFrame]]:
    """Each chart by title: its layers' data by mark ("line", "rule", ...; the last layer of a mark wins)."""
    found = {}
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        data = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets}
        layers = spec.get("layer", [spec])
        found[spec.get("title")] = {layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]:
                                    data.get(layer.get("data", {}).get("name")) for layer in layers}
    return found


def test_a_distilling_run_plots_agreement_cross_entropy_guide_and_the_teacher_with_the_phase_end(monkeypatch, home):
    rows = home.rows
    updates = [r for r in rows if "distill/phase" in r]
    last_distilling = max(r["step"] for r in updates if r["distill/phase"] == 1)
    at = training_page(monkeypatch, home.root, ["student-1v1"])
    assert "Distillation" in [s.value for s in at.subheader]
    summary = distill_summary(at)
    held = [r["distill/held_out_agreement"] for r in updates if "distill/held_out_agreement" in r]
    versus = [r["eval/win_rate/necto"] for r in rows if "eval/win_rate/necto" in r]
    expected = {
        "run": "student-1v1", "teacher": "necto", "phase ended at step": last_distilling, "distilling now": False,
        "best held-out agreement": max(held), "last held-out agreement": held[-1], "last score vs teacher": versus[-1]}
    assert [{k: r[k] for k in expected} for r in summary.to_dict("records")] == [expected]
    assert pd.isna(summary["games behind it"].iloc[0])  # no evaluation game in the league: the metrics' figure
    found = charts(at)
    assert set(TITLES) <= set(found)
    agreement = found["held-out agreement (argmax)"]
    assert list(agreement["line"]["value"]) == held  # over the distilling updates only
    assert list(agreement["line"]["x"]) == [r["step"] for r in updates if "distill/held_out_agreement" in r]
    for title in TITLES:  # every chart marks where the phase ended, in the run's colour
        assert found[title]["rule"].to_dict("records") == [{"run": "student-1v1", "x": last_distilling}]
    entropy = found["held-out cross-entropy"]["line"]
    assert list(entropy["value"]) == [r["distill/held_out_cross_entropy"] for r in updates if r["distill/phase"]]
    guide = found["guide weight"]["line"]
    assert list(guide["value"]) == [r["charts/guide_weight"] for r in updates] and set(guide["value"]) == {1.0, 0.05}
    teacher = found["score rate against the teacher"]["line"]
    assert list(teacher["value"]) == versus and set(teacher["teacher"]) == {"necto"}
    # Over wall time the phase's end moves with the axis: seconds since the run's first line.
    at = training_page(monkeypatch, home.root, ["student-1v1"], axis="Wall time (s)")
    first = min(r["time"] for r in rows)
    ended = next(r["time"] for r in updates if r["step"] == last_distilling) - first
    assert charts(at)["guide weight"]["rule"]["x"].tolist() == [ended]


def test_runs_without_distillation_show_the_page_as_before(monkeypatch, home):
    at = training_page(monkeypatch, home.root, ["ppo-1v1", "ppo-2v2"])
    assert "Distillation" not in [s.value for s in at.subheader]
    found = charts(at)
    assert not set(found) & set(TITLES)
    assert set(found) == set(at.multiselect(key="training_metrics").value)  # the metrics chosen, nothing else
    # Chosen with a distilling run, only that run is in the section; the others keep their charts.
    at = training_page(monkeypatch, home.root, ["ppo-1v1", "student-1v1"])
    assert list(distill_summary(at)["run"]) == ["student-1v1"]
    assert set(charts(at)["guide weight"]["line"]["run"]) == {"student-1v1"}


def test_a_run_whose_teacher_is_unknown_still_plots_its_agreement(monkeypatch, home):
    at = training_page(monkeypatch, home.root, ["no-info-1v1"])
    found = charts(at)
    assert "held-out agreement (argmax)" in found and "score rate against the teacher" not in found
    assert found["held-out agreement (argmax)"]["rule"].empty  # still distilling at its last update
    summary = distill_summary(at).to_dict("records")[0]
    assert summary["distilling now"] and summary["teacher"] == "" and pd.isna(summary["phase ended at step"])
    assert "no-info-1v1 (its teacher is not in run.json)" in texts(at.caption)


def test_phase_ends_and_teacher_from_the_run_config():
    frame = pd.DataFrame({"step": [1, 2, 3, 4, 5, 6, 7], "distill/phase": [1, 1, None, 0, 1, 0, 0]})
    assert phase_ends(frame, "step") == [2.0, 5.0]  # a resumed run that distilled again ends twice
    assert phase_ends(pd.DataFrame({"step": [1]}), "step") == []
    assert teacher_of({"config": {"training": {"distill": {"teacher": "necto"}}}}) == "necto"
    for info in ({}, {"config": None}, {"config": {"training": {"distill": {"teacher": ""}}}},
                 {"config": {"training": {"distill": {"teacher": 3}}}}):
        assert teacher_of(info) is None


@pytest.mark.slow  # trains for real (a few seconds of games): CI runs it after the default suite
def test_the_page_plots_a_run_distilled_for_real(monkeypatch, tmp_path):
    home = build_empty_league(tmp_path / "league")
    sets = ["runner.workers=1", "runner.envs_per_worker=4", "ppo.steps_per_env=64", "ppo.minibatch_size=256",
            "policy.actor_sizes=[32]", "policy.critic_sizes=[32]", "training.snapshot_every_steps=1024",
            "training.eval_every_snapshots=1", "training.eval_games=2", "training.eval_game_seconds=4",
            "training.distill.steps=1024"]
    done = CliRunner().invoke(app, ["train", "--stage", "1v1", "--home", str(home.root), "--distill", "rule",
                                    "--steps", "2048", "--name", "student", *[x for s in sets for x in ("--set", s)]])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in (home.runs / "student" / "metrics.jsonl").read_text().splitlines()]
    phases = [r["distill/phase"] for r in rows if "distill/phase" in r]
    assert phases[0] == 1 and phases[-1] == 0  # the phase ended inside the run
    at = training_page(monkeypatch, home.root, ["student"])
    found = charts(at)
    assert set(TITLES) <= set(found)  # rule is an evaluation opponent: the teacher's score rate is plotted
    assert distill_summary(at)["teacher"].tolist() == ["rule"]
    assert len(found["guide weight"]["rule"]) == 1
