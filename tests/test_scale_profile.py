"""`league diagnose --test scale`: a short training run with every phase clock read (training.measure.scale).

Real games, a real learner, both the rollout-worker and the central backends; the figures are
only checked for being measured and consistent (shares of one wall time), never for speed.
"""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from arena.engine.phases import PhaseClock, add_phases
from league.cli import app
from training.measure.scale import gpu_windows, profile_scale

WORKER_PHASES = ("physics", "state read", "rules and rewards", "observations", "learner forward", "teacher",
                 "opponents", "segment writes", "waiting")


def test_a_phase_clock_gives_each_phase_the_time_since_the_last_mark():
    clock = PhaseClock()
    clock.start()
    time.sleep(0.02)
    clock.mark("a")
    time.sleep(0.01)
    clock.mark("b")
    clock.mark("a")
    seconds = clock.take()
    assert seconds["a"] >= 0.02 and 0.01 <= seconds["b"] < seconds["a"]
    assert clock.take() == {}  # a take starts the counts again
    assert add_phases({"a": 1.0}, {"a": 2.0, "b": 1.0}) == {"a": 3.0, "b": 1.0}


def test_gpu_samples_fall_into_equal_windows_of_the_run():
    assert gpu_windows([0.5, 2.5, 2.6, 9.9], [10.0, 20.0, 40.0, 80.0], 0.0, 10.0, windows=5) == [
        10.0, 30.0, None, None, 80.0]
    assert gpu_windows([], [], 0.0, 10.0, windows=2) == [None, None]


@pytest.mark.slow  # 5 s: a training run; the default suite keeps the clock and window tests
def test_rollout_workers_report_every_phase_as_shares_of_the_wall_time():
    report = profile_scale("1v1", 5.0, False, ["runner.workers=2", "runner.backend=rollout"], small=True)
    assert report.backend == "rollout" and report.collectors == 2 and report.agent_steps > 0
    for worker in report.workers:
        assert all(worker[p] > 0 for p in WORKER_PHASES if p != "waiting"), worker
        assert sum(worker.values()) == pytest.approx(100.0, abs=0.5)
    assert set(report.learner) >= {"receiving", "batching", "updating", "sending"}
    assert report.learner["updating"] > 0 and sum(report.learner.values()) == pytest.approx(100.0, abs=0.5)
    assert len(report.core_busy_percent) >= 1 and all(0 <= c <= 100 for c in report.core_busy_percent)
    assert report.gpu_busy_mean is None and report.gpu_busy_windows == [None] * 10


@pytest.mark.slow  # 6 s: the central backend's profile through the command
def test_the_command_prints_the_collectors_and_writes_the_figures(tmp_path):
    out = tmp_path / "scale.json"
    result = CliRunner().invoke(app, ["diagnose", "--test", "scale", "--quick", "--set", "runner.backend=central",
                                      "--set", "training.kickstart.teacher=", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "Collectors: where each one's time went" in result.output
    figures = {k: v["value"] for k, v in json.loads(out.read_text())["figures"].items()}
    assert figures["scale.agent_steps_per_s"] > 0
    # the central backend's game workers keep their clocks: its one collector waits for them
    assert figures["scale.collector.waiting_for_game_workers_percent"] > 0
    assert figures["scale.collector.learner_forward_percent"] > 0
    assert "scale.collector.teacher_percent" not in figures  # no teacher asked for
    assert figures["scale.learner.updating_percent"] > 0
    assert not any(k.startswith("scale.gpu.window") for k in figures)  # no GPU here: no empty rows
