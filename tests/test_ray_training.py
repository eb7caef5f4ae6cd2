"""`league train --backend ray`: rollout workers as Ray actors on a real local instance, and (slow)
on a real two-node cluster on this machine whose second node is killed mid-run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from agents.checkpoint import load_checkpoint
from league.cli import app
from league.registry import Registry

pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[1]
SMALL = ["--set", "runner.envs_per_worker=2", "--set", "ppo.steps_per_env=64", "--set", "ppo.minibatch_size=256",
         "--set", "policy.actor_sizes=[32]", "--set", "policy.critic_sizes=[32]",
         "--set", "training.snapshot_every_steps=1000", "--set", "training.eval_game_seconds=5"]


def league(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "league.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "RAY_AUTH_MODE": "disabled", **(env or {})})


def metrics(home, run: str) -> list[dict]:
    return [json.loads(line) for line in (home.runs / run / "metrics.jsonl").read_text().splitlines()]


def assert_consistent(home, run: str) -> list[str]:
    """Every version of the run has its checkpoint (sha256 checked) and ratings; returns the versions."""
    reg = Registry.open(home.db_path)
    try:
        versions = [a for a in reg.agent_store.all() if a.name.startswith(f"{run}-v")]
        for agent in versions:
            load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)
            reg.game_store.rating(agent.name, 1)
        return [a.name for a in versions]
    finally:
        reg.close()


@pytest.mark.slow  # a local Ray instance and a training run through it: CI runs it after the default suite
def test_training_on_a_local_ray_instance_makes_snapshots_ratings_and_metrics(home):
    done = league("train", "--home", str(home.root), "--stage", "1v1", "--backend", "ray", "--rollout-workers", "2",
                  "--steps", "3000", "--name", "onray", "--set", "training.eval_games=2",
                  "--set", "training.eval_every_snapshots=1", *SMALL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Ray: 2 rollout workers" in done.stdout
    versions = assert_consistent(home, "onray")
    assert len(versions) >= 3
    reg = Registry.open(home.db_path)
    try:
        assert reg.agent_store.get(versions[-1]).steps_trained >= 3000
        assert any(reg.game_store.rating_history(v, 1) for v in versions)  # evaluation games rated the snapshots
    finally:
        reg.close()
    rows = [r for r in metrics(home, "onray") if "charts/policy_lag" in r]
    assert rows and all(r["charts/rollout_workers"] == 2 and r["charts/lost_steps_total"] == 0 for r in rows)
    assert [r["charts/policy_lag"] for r in rows][1:] == [1.0] * (len(rows) - 1)  # pipelined on Ray by default
    assert all(abs(r["charts/start_abs_log_ratio"]) < 0.5 for r in rows)  # one update of lag stays small


def test_ray_flags_need_the_ray_backend(home):
    done = CliRunner().invoke(app, ["train", "--home", str(home.root), "--stage", "1v1", "--rollout-workers", "2",
                                    "--steps", "100"])
    assert done.exit_code == 2 and "--address and --rollout-workers go with --backend ray." in done.output


def ray_cli(*args: str) -> subprocess.CompletedProcess:
    ray = Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})


@pytest.mark.slow
def test_a_killed_worker_node_loses_its_round_and_the_run_finishes(home):
    """Two Ray nodes on this machine; the second's raylet is killed (-9) mid-run."""
    port = "6391"
    head = ray_cli("start", "--head", "--port", port, "--node-ip-address", "127.0.0.1", "--num-cpus", "2",
                   "--include-dashboard", "false", "--disable-usage-stats")
    assert head.returncode == 0, head.stderr
    try:
        second = ray_cli("start", "--address", f"127.0.0.1:{port}", "--node-ip-address", "127.0.0.1", "--num-cpus",
                         "2", "--resources", '{"second_node": 1}', "--disable-usage-stats")
        assert second.returncode == 0, second.stderr
        run = subprocess.Popen(
            [sys.executable, "-m", "league.cli", "train", "--home", str(home.root), "--stage", "1v1", "--backend",
             "ray", "--address", f"127.0.0.1:{port}", "--rollout-workers", "2", "--steps", "40000", "--name", "killed",
             "--set", "training.eval_games=0", *SMALL], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**os.environ, "RAY_AUTH_MODE": "disabled"})
        metrics_file = home.runs / "killed" / "metrics.jsonl"
        deadline = time.monotonic() + 300
        while not (metrics_file.exists() and metrics_file.read_text().count("\n") >= 3):
            assert run.poll() is None and time.monotonic() < deadline, run.stdout.read() if run.stdout else ""
            time.sleep(0.5)
        raylets = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and
                   p.info["cmdline"][0].endswith("raylet") and any("second_node" in a for a in p.info["cmdline"])]
        assert len(raylets) == 1
        os.kill(raylets[0].pid, signal.SIGKILL)
        out, _ = run.communicate(timeout=600)
        assert run.returncode == 0, out
        died = re.search(r"Ray: 1 rollout worker\(s\) died and their round was dropped; [01] replaced.*", out)
        assert died, out
        rows = [r for r in metrics(home, "killed") if "charts/lost_steps_total" in r]
        assert rows[-1]["charts/lost_steps_total"] > 0  # the lost round is counted, not trained on
        assert rows[-1]["step"] >= 40000
        print(f"{died.group(0)}; lost {rows[-1]['charts/lost_steps_total']:.0f} of {rows[-1]['step']} steps")
        versions = assert_consistent(home, "killed")
        reg = Registry.open(home.db_path)
        try:
            assert reg.agent_store.get(versions[-1]).steps_trained == rows[-1]["step"]
        finally:
            reg.close()
    finally:
        ray_cli("stop", "--force")
