"""`league diagnose` runs each test for real at tiny budgets (--quick, 1 worker x 2 arenas).

The figures are benchmark output and never asserted beyond being measured and consistent:
these machines are too noisy for timed unit tests.
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from league.cli import app

runner = CliRunner()
TINY = ["--quick", "--set", "runner.workers=1", "--set", "runner.envs_per_worker=2"]


def diagnose(*args):
    return runner.invoke(app, ["diagnose", *[str(a) for a in args]])


def figures(path) -> dict:
    data = json.loads(path.read_text())
    assert data["format"] == "league-diagnose" and data["version"] == 1
    return {k: v["value"] for k, v in data["figures"].items()}


@pytest.mark.slow  # three runners started and timed; tests/test_bench_env.py runs the same bench by default
def test_env_figures_come_from_the_env_bench(tmp_path):
    out = tmp_path / "env.json"
    result = diagnose("--test", "env", *TINY, "--json", out)
    assert result.exit_code == 0, result.output
    assert "Environment speed" in result.output and f"Wrote {out}" in result.output
    f = figures(out)
    assert json.loads(out.read_text())["tests"] == ["env"]
    for key in ("runner", "runner_mlp"):
        assert f[f"env.{key}.env_steps_per_s"] > 0
        assert f[f"env.{key}.agent_steps_per_s"] == pytest.approx(2 * f[f"env.{key}.env_steps_per_s"])  # 1v1
        assert f[f"env.{key}.ticks_per_s"] == pytest.approx(8 * f[f"env.{key}.env_steps_per_s"])  # tick skip 8
    assert f["env.ceiling.ticks_per_s"] > 0 and f["env.runner_vs_ceiling"] > 0
    assert not any(k.startswith(("inference.", "train.", "gpu.")) for k in f)


def test_inference_latencies_and_baseline_ratios(tmp_path):
    first = tmp_path / "before.json"
    result = diagnose("--test", "inference", *TINY, "--json", first)
    assert result.exit_code == 0, result.output
    f = figures(first)
    for n in (1, 4, 16, 64, 256, 1024, 4096):
        p50, p95, p99 = (f[f"inference.cpu.batch{n}.{p}_ms"] for p in ("p50", "p95", "p99"))
        assert 0 < p50 <= p95 <= p99
    assert f["inference.batching.rows"] == 4  # 1 worker x 2 arenas x 2 cars
    assert f["inference.batching.speedup"] == pytest.approx(
        f["inference.batching.per_row_ms"] / f["inference.batching.batched_ms"])

    again = diagnose("--test", "inference", *TINY, "--baseline", first)
    assert again.exit_code == 0, again.output
    assert "now / baseline" in again.output
    assert again.output.count("x │") >= 7 * 4  # a ratio on every latency row


def diagnose_train(tmp_path, *sets: str):
    out = tmp_path / "train.json"
    result = diagnose("--test", "train", *TINY, *sets, "--set", "policy.actor_sizes=[32]",
                      "--set", "policy.critic_sizes=[32]", "--json", out)
    assert result.exit_code == 0, result.output
    return result.output.splitlines(), figures(out)


@pytest.mark.slow  # torch.compile on a CPU takes most of a minute
def test_train_with_compile_reports_it_or_falls_back_to_the_eager_model(tmp_path):
    lines, _ = diagnose_train(tmp_path, "--set", "training.compile=default")
    # torch.compile either works here or falls back to the eager model, saying so in one line.
    assert any("compile default" in line for line in lines if line.startswith("update:")) or \
        any("running the eager model" in line for line in lines)


@pytest.mark.slow  # 10 s of training: the slow set
def test_train_reports_update_run_cpu_memory_and_flag_fallbacks(tmp_path):
    lines, f = diagnose_train(tmp_path, "--set", "training.amp=fp16")
    # fp16 AMP cannot work on a CPU: one line says so, and the learner runs in float32.
    assert sum("AMP fp16 needs a CUDA device" in line for line in lines) == 1
    assert any(line.startswith("no GPU:") for line in lines)
    assert f["update.ms_per_minibatch"] > 0 and f["update.rows_per_s"] > 0
    assert f["train.agent_steps_per_s"] > 0 and f["train.collection_steps_per_s"] > 0
    assert sum(f[f"train.share.{k}"] for k in ("collection", "inference", "update")) == pytest.approx(100)
    assert f["system.cpu.driver_percent"] > 0 and f["system.cpu.worker0_percent"] > 0
    assert "system.cpu.worker1_percent" not in f  # one game worker
    assert f["system.memory.total_peak_mib"] >= f["system.memory.driver_peak_mib"] > 0
    assert f["gpu.utilization_mean_percent"] is None and f["gpu.memory_used_peak_mib"] is None


def test_gpu_on_a_cpu_machine_says_no_gpu_and_leaves_figures_empty(tmp_path):
    out = tmp_path / "gpu.json"
    result = diagnose("--test", "gpu", *TINY, "--json", out)
    assert result.exit_code == 0, result.output
    no_gpu = [line for line in result.output.splitlines() if line.startswith("no GPU:")]
    assert len(no_gpu) == 1 and "CPU build" in no_gpu[0]
    f = figures(out)
    assert all(f[k] is None for k in f if k.startswith("gpu."))
    assert not any(k.startswith(("train.", "update.")) for k in f)  # no training run without a GPU to watch


@pytest.mark.parametrize("content, message", [
    (None, "does not exist"),
    ("{not json", "is not JSON"),
    ('{"figures": [1, 2]}', "is not a `league diagnose --json` file"),
    ("[" * 100_000, "is not JSON"),  # issue 37, item 6: a RecursionError traceback before
    ("fifo", "is a named pipe (FIFO), not a file"),
    ("/dev/zero", "is a device, not a file"),  # issue 37, item 6: grew the process to 23 GB before
    ("big", "more than a baseline file can be"),
])
@pytest.mark.timeout(60)
def test_a_bad_baseline_is_one_sentence_and_exit_2(tmp_path, content, message):
    path = tmp_path / "baseline.json"
    if content == "fifo":
        os.mkfifo(path)
    elif content == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif content == "big":
        path.write_text(" " * (2 << 20) + "{}")
    elif content is not None:
        path.write_text(content)
    result = diagnose("--test", "env", "--baseline", path)
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_an_unknown_test_is_refused():
    result = diagnose("--test", "disk")
    assert result.exit_code == 2 and "Unknown test 'disk'" in result.output


def test_json_round_trip_and_ratios(tmp_path):
    from league.cli.diagnose import json_document
    from training.measure.diagnose import Diagnosis, Machine, Settings, UpdateReport, ratio, read_baseline, write_json
    from training.measure.system import GpuReport

    settings = Settings("1v1", 8, 1, 2, "mlp", [32], "auto", "auto", "off", True, 1, 4, [], True)
    report = Diagnosis(["train"], settings, Machine(2, "linux", "3.11", "2.13.0", "no GPU: ..."),
                       update=UpdateReport(4, 2.0), gpu=GpuReport(), run_peak_mib=100.0)
    path = tmp_path / "d.json"
    write_json(json_document(report), path)
    assert read_baseline(path) == {"update.minibatch_rows": 4.0, "update.ms_per_minibatch": 2.0,
                                   "update.rows_per_s": 2000.0, "gpu.utilization_mean_percent": None,
                                   "gpu.utilization_max_percent": None, "gpu.utilization_collection_percent": None,
                                   "gpu.utilization_update_percent": None, "gpu.memory_used_peak_mib": None,
                                   "gpu.torch_allocated_peak_mib": None, "system.memory.run_peak_mib": 100.0}
    assert json.loads(path.read_text())["settings"]["actor_sizes"] == [32]
    assert [p.name for p in tmp_path.iterdir()] == ["d.json"]  # no temporary file left behind
    assert ratio(3.0, 2.0) == 1.5 and ratio(None, 2.0) is None and ratio(1.0, None) is None and ratio(1.0, 0) is None


def test_envs_per_worker_zero_means_auto():
    from arena.engine.vector import VecGame, envs_per_worker_of
    from league.config import GameConfig, RunnerConfig, load_config

    assert load_config().runner.envs_per_worker == 0
    assert envs_per_worker_of(load_config().runner) == 32
    with VecGame(GameConfig(), RunnerConfig(workers=1, envs_per_worker=0, backend="in-process")) as games:
        assert games.envs_per_worker == 32 and games.num_envs == 32


def test_gpu_utilisation_is_split_between_updates_and_collection():
    from training.measure.system import ResourceSampler, gpu_report

    sampler = ResourceSampler(gpu=False)
    sampler.gpu_util, sampler.gpu_times = [10.0, 90.0, 80.0, 20.0], [1.0, 2.0, 3.0, 4.0]
    sampler.update_spans = [(1.5, 3.5)]
    report = gpu_report(sampler)
    assert report.utilization_update_percent == 85.0 and report.utilization_collection_percent == 15.0
    assert report.utilization_mean_percent == 50.0
