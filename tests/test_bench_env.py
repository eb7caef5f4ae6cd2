"""`league bench env` runs every measurement end to end (tiny durations) and refuses bad input.

The figures themselves are benchmark output, never asserted: these machines are too noisy.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from league.cli import app

runner = CliRunner()


@pytest.mark.slow  # moved out of the default suite to keep it under 5 minutes (316 s on 2026-11-27)
def test_bench_env_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "bench.json"
    result = runner.invoke(app, ["bench", "env", "--stage", "2v2", "--workers", "2", "--envs-per-worker", "2",
                                 "--seconds", "0.4", "--warmup", "0.1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    for row in ("bare RocketSim (ceiling)", "bare RocketSim, 1 process", "RLGym v2 standard env (reference) x",
                "this runner, random actions", "this runner, MLP policy", "rollout workers, random actions",
                "rollout workers, MLP policy"):
        assert row in result.output
    report = json.loads(out.read_text())
    assert report["stage"] == "2v2" and report["team_size"] == 2 and report["workers"] == 2
    names = [m["name"] for m in report["measurements"]]
    assert len(names) == 7
    for m in report["measurements"]:
        assert m["env_steps_per_s"] > 0
        assert m["agent_steps_per_s"] == pytest.approx(4 * m["env_steps_per_s"])
        assert m["ticks_per_s"] == pytest.approx(8 * m["env_steps_per_s"])
    assert report["runner_vs_ceiling"] > 0 and report["runner_vs_reference"] > 0
    assert report["rollout_vs_ceiling"] > 0 and report["rollout_vs_reference"] > 0
    assert report["rollout_mlp_vs_ceiling"] > 0 and report["rollout_mlp_vs_reference"] > 0


@pytest.mark.parametrize("args, message", [
    (["--stage", "4v4"], "Unknown stage '4v4'"),
    (["--seconds", "0"], "--seconds must be positive"),
    (["--envs-per-worker", "0"], "--envs-per-worker at least 1"),
])
def test_bad_input_is_one_sentence_and_exit_2(args, message):
    result = runner.invoke(app, ["bench", "env", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_step_profile_accounts_for_every_phase_of_a_step(tmp_path):
    from training.measure.step_profile import PHASES, main, profile_step

    report = profile_step(team_size=2, arenas=2, seconds=0.3)
    assert report.steps > 0 and report.arenas == 2
    assert set(report.ms_per_step) == {*PHASES, "inference", "other"}
    # Every phase the worker's clock counts was timed (a phase the clock stopped marking would read 0 here).
    for phase in ("physics", "state read", "rules and rewards", "observations", "resets", "inference"):
        assert report.ms_per_step[phase] > 0, phase
    assert sum(report.share.values()) == pytest.approx(1.0)
    out = tmp_path / "profile.json"
    main(["--stage", "1v1", "--envs", "2", "--seconds", "0.2", "--json", str(out)])
    assert json.loads(out.read_text())["team_size"] == 1


class DiesOnRun:
    """A meter service whose worker `doomed` dies without a word when it is asked to run."""

    def __init__(self, k: int, doomed: int):
        self.k, self.doomed = k, doomed

    def run(self, duration: float) -> tuple[int, float]:
        if self.k == self.doomed:
            import os

            os._exit(3)
        return 5, duration


def test_a_meter_runs_its_workers_together_and_a_dead_one_is_an_error_not_a_short_figure():
    from arena.engine.procs import WorkerError
    from training.measure.env import ProcessMeter

    meter = ProcessMeter(2, DiesOnRun, lambda k: (k, -1))
    try:
        assert meter.run(0.25) == (10, 0.25)
    finally:
        meter.close()
    meter = ProcessMeter(2, DiesOnRun, lambda k: (k, 1))
    try:
        with pytest.raises(WorkerError, match=r"Meter worker 1 \(pid \d+\) died without a traceback \(exit code 3\)"):
            meter.run(0.25)
    finally:
        meter.close()
