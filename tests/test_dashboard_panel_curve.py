"""The Training page's learning curve against the evaluation panel (dashboard/panel_view.py) through Streamlit's
AppTest, on a real league home: a run whose snapshots have panel tests in the league and panel rows in its
metrics.jsonl (the keys training.judge.panel_row writes), and runs without either, which show no such section."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from dashboard_fixture import START, build_empty_league, write_training_runs  # noqa: E402
from league.registry import Registry  # noqa: E402
from league.results import Record  # noqa: E402
from test_dashboard import texts  # noqa: E402
from test_dashboard_distill import charts, training_page  # noqa: E402

RUN = "climber"
SECTION = "Learning curve against the evaluation panel"
# (snapshot, steps, records, passed, beaten_by, CPU-minutes, the champion's Elo in that row or None)
TESTS = [(f"{RUN}-v1", 100_000, {"random": Record(6, 0, 2), "rule": Record(0, 1, 5)}, False, "rule", 12.5, None),
         (f"{RUN}-v2", 200_000, {"random": Record(8, 0, 0), "rule": Record(3, 2, 3)}, True, None, 25.0, 40.0),
         (f"{RUN}-v3", 300_000, {"random": Record(7, 1, 0), "rule": Record(4, 2, 2), "atba": Record(5, 0, 3)}, True,
          None, 37.5, 95.0),
         # cut short by its run's share of the clock: neither passed nor beaten
         (f"{RUN}-v4", 400_000, {"random": Record(2, 0, 0), "rule": Record(0, 1, 1)}, False, None, 50.0, 95.0)]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = build_empty_league(tmp_path_factory.mktemp("panel") / "league")
    write_training_runs(home)  # ppo-1v1 and ppo-2v2: metrics, no panel test
    reg = Registry.open(home.db_path)
    rows, tests = [], []
    try:
        for i, (snapshot, steps, records, passed, beaten_by, minutes, champion) in enumerate(TESTS):
            reg.agent_store.add(snapshot, "mlp", 1, steps_trained=steps)
            test = reg.panel_store.add(snapshot, RUN, steps, records, passed=passed, beaten_by=beaten_by,
                                       seconds=30.0, seed=i)
            tests.append(test)
            low, high = test.elo_interval
            t = START.timestamp() + i * 600.0
            rows.append({"step": steps - 50_000, "time": t - 300.0, "charts/episode_reward": 0.1 * i})
            row = {"step": steps, "time": t, "panel/elo": test.elo, "panel/elo_lo": low,
                   "panel/elo_hi": high, "panel/games": float(test.total.games),
                   "panel/passed": float(passed), "panel/undecided": float(not passed and beaten_by is None),
                   "panel/cpu_minutes": minutes,
                   "panel/worst_score": test.worst[1].score}
            if champion is not None:
                row["panel/champion_elo"] = champion
            rows.append(row)
    finally:
        reg.close()
    run_dir = home.runs / RUN
    run_dir.mkdir(parents=True)
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return SimpleNamespace(root=home.root, rows=[r for r in rows if "panel/elo" in r], tests=tests)


def panel_table(at) -> pd.DataFrame | None:
    return next((d.value for d in at.dataframe if "snapshot" in d.value.columns), None)


def test_a_run_with_panel_tests_plots_its_elo_over_cpu_minutes_and_lists_its_tests(monkeypatch, home):
    at = training_page(monkeypatch, home.root, [RUN])
    assert SECTION in [s.value for s in at.subheader]
    curve = charts(at)[RUN]
    points, bars, champion = curve["point"], curve["rule"], curve["line"]
    assert points["cpu_minutes"].tolist() == [12.5, 25.0, 37.5, 50.0]
    assert points["elo"].tolist() == pytest.approx([t.elo for t in home.tests])
    assert points["step"].tolist() == [100_000, 200_000, 300_000, 400_000]
    assert points["result"].tolist() == ["beaten", "passed", "passed", "undecided"]
    assert bars["elo_lo"].tolist() == pytest.approx([r["panel/elo_lo"] for r in home.rows])
    assert bars["elo_hi"].tolist() == pytest.approx([r["panel/elo_hi"] for r in home.rows])
    assert all(lo < elo < hi for lo, elo, hi in zip(bars["elo_lo"], bars["elo"], bars["elo_hi"]))
    # The champion's line only where the rows name its Elo (it had no panel test at the first).
    assert champion["cpu_minutes"].tolist() == [25.0, 37.5, 50.0]
    assert champion["champion_elo"].tolist() == [40.0, 95.0, 95.0]

    table = panel_table(at)
    assert table is not None
    assert table.columns.tolist() == ["snapshot", "steps", "result", "games", "elo", "vs random", "vs rule", "vs atba"]
    assert table["snapshot"].tolist() == [f"{RUN}-v1", f"{RUN}-v2", f"{RUN}-v3", f"{RUN}-v4"]
    assert table["steps"].tolist() == [100_000, 200_000, 300_000, 400_000]
    assert table["result"].tolist() == ["beaten by rule", "passed", "passed", "undecided"]
    assert table["games"].tolist() == [14, 16, 24, 4]
    assert table["elo"].tolist() == pytest.approx([t.elo for t in home.tests])
    assert table["vs random"].tolist() == [0.75, 1.0, 0.9375, 1.0]
    assert table["vs rule"].tolist() == pytest.approx([0.5 / 6, 0.5, 0.625, 0.25])
    assert [None if math.isnan(v) else v for v in table["vs atba"]] == [None, None, 0.625, None]  # met at the third


def test_runs_without_panel_rows_show_no_panel_curve(monkeypatch, home):
    at = training_page(monkeypatch, home.root, ["ppo-1v1", "ppo-2v2"])
    assert SECTION not in [s.value for s in at.subheader]
    assert panel_table(at) is None
    assert not [title for title, layers in charts(at).items() if "point" in layers]
    assert "No panel tests yet" not in texts(at.caption)
    # Chosen with a run that has them, the section shows that run's curve and names the others.
    at = training_page(monkeypatch, home.root, ["ppo-1v1", RUN])
    assert SECTION in [s.value for s in at.subheader]
    assert [title for title, layers in charts(at).items() if "point" in layers] == [RUN]
    assert panel_table(at)["snapshot"].tolist() == [f"{RUN}-v1", f"{RUN}-v2", f"{RUN}-v3", f"{RUN}-v4"]
    assert "No panel tests yet: ppo-1v1." in texts(at.caption)
