"""The collection backends behind the self-play loop: a seed gives the same run without pipelining,
pipelining trains on rounds one update behind (and records it), and segments merge by slot."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest
import torch

from agents.checkpoint import load_checkpoint
from agents.networks import build_network
from arena.engine.transports import WorkerError
from arena.engine.vector import envs_per_worker_of
from league.config import load_config, team_size_of
from league.registry import Registry
from training.collection import Order, collection_backend, collection_workers, pipelining
from training.rollout_worker import rollout_envs_per_worker, worker_cores
from training.worker_collection import WorkerCollection
from training.segment import Segment, Tally, merge
from training.selfplay import SelfPlayTrainer

SMALL = ["runner.workers=1", "runner.envs_per_worker=2", "ppo.steps_per_env=32", "ppo.minibatch_size=128",
         "policy.actor_sizes=[32]", "policy.critic_sizes=[32]", "training.eval_games=0",
         "training.snapshot_every_steps=100000"]


def train(home, name: str, pipeline: str, steps: int = 800, extra: tuple[str, ...] = ()):
    cfg = load_config("1v1", sets=SMALL + [f"runner.pipeline={pipeline}", f"training.steps={steps}", *extra])
    reg = Registry.open(home.db_path)
    try:
        result = SelfPlayTrainer(cfg, home, reg, name=name).run()
        agent = reg.agent_store.get(result.versions[-1])
        ckpt = load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)
        return result, ckpt.net.state_dict()
    finally:
        reg.close()


def metrics(home, run: str) -> list[dict]:
    return [json.loads(line) for line in (home.runs / run / "metrics.jsonl").read_text().splitlines()]


def test_without_pipelining_a_seed_gives_the_same_weights(home):  # (processes: the test below)
    first, a = train(home, "same-a", "never", extra=("runner.backend=central",))
    second, b = train(home, "same-b", "never", extra=("runner.backend=central",))
    assert first.steps == second.steps >= 800
    assert all(torch.equal(a[k], b[k]) for k in a)
    rows = [r for r in metrics(home, "same-a") if "charts/policy_lag" in r]
    assert rows and {r["charts/policy_lag"] for r in rows} == {0.0}
    assert all(r["charts/start_abs_log_ratio"] < 1e-4 for r in rows)  # the learner's own weights collected it


@pytest.mark.parametrize("backend", ["rollout", "central"])
def test_pipelined_rounds_are_one_update_behind_and_the_budget_holds(home, backend):
    result, _ = train(home, "piped", "always", extra=(f"runner.backend={backend}",))
    assert 800 <= result.steps < 800 + 4 * 32  # the last round cut to the budget (4 learner slots here)
    rows = [r for r in metrics(home, "piped") if "charts/policy_lag" in r]
    assert [r["charts/policy_lag"] for r in rows] == [0.0] + [1.0] * (len(rows) - 1)
    assert all(r["charts/start_abs_log_ratio"] < 0.5 for r in rows)


PROCESSES = ("runner.backend=rollout", "runner.workers=2", "training.opponents.latest=0.5",
             "training.opponents.rule=0.5", "training.opponents.past=0", "training.opponents.pfsp=0",
             "training.opponents.random=0", "training.kickstart.teacher=rule",
             "game.episode_timeout_seconds=5")  # episodes end within the run, so results come back


def test_rollout_worker_processes_give_the_same_run_for_a_seed_and_train_like_the_others(home):
    first, a = train(home, "proc-a", "never", extra=PROCESSES)
    second, b = train(home, "proc-b", "never", extra=PROCESSES)
    assert first.steps == second.steps >= 800
    assert all(torch.equal(a[k], b[k]) for k in a)
    rows = [r for r in metrics(home, "proc-a") if "charts/policy_lag" in r]
    assert rows and {r["charts/policy_lag"] for r in rows} == {0.0}
    assert all(r["charts/start_abs_log_ratio"] < 1e-4 for r in rows)  # each worker acted with the learner's weights
    assert any(r.get("losses/kickstart", 0) > 0 for r in rows)  # the teacher's actions came back from the workers
    assert any("charts/win_rate/rule" in r for r in rows)  # and the league opponents' results


def test_rollout_worker_processes_train_a_recurrent_learner(home):
    result, weights = train(home, "proc-lstm", "never", steps=300, extra=(*PROCESSES, "policy.kind=lstm",
                                                                         "policy.lstm_hidden=16"))
    assert result.steps >= 300 and any(k.startswith("lstm.") for k in weights)
    rows = [r for r in metrics(home, "proc-lstm") if "charts/start_abs_log_ratio" in r]
    assert rows and all(r["charts/start_abs_log_ratio"] < 1e-4 for r in rows)  # hidden states came back in step


def test_auto_collects_in_rollout_worker_processes_and_leaves_a_gpu_learner_a_core(monkeypatch):
    assert collection_backend("auto") == "rollout" and collection_backend("auto").placement == "processes"
    assert collection_backend("ray").placement == "ray" and collection_backend("ray").rollout_workers
    assert collection_backend("central").placement == "processes" and not collection_backend("central").rollout_workers
    assert collection_backend("in-process").placement == "in-process"
    assert load_config("1v1").runner.backend == "auto"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert collection_workers(0, "rollout", torch.device("cpu")) == 16
    assert collection_workers(0, "rollout", torch.device("cuda")) == 15  # the learner updates beside them
    assert collection_workers(0, "central", torch.device("cuda")) == 16
    assert collection_workers(4, "rollout", torch.device("cuda")) == 4
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the affinity mask's 16 cores count, not the machine's 64
    assert pipelining("auto", "rollout", torch.device("cpu"), 15) and not pipelining("auto", "rollout", torch.device("cpu"), 16)
    # pinned one to a core where there are cores to spare, the first left to the learner
    assert worker_cores(15) == list(range(1, 16))
    assert worker_cores(16) == [None] * 16


def test_rollout_workers_take_256_cars_each_unless_the_config_names_the_arenas():
    for stage, arenas in (("1v1", 128), ("2v2", 64), ("3v3", 42)):
        assert rollout_envs_per_worker(load_config(stage).runner, team_size_of(stage)) == arenas
    assert rollout_envs_per_worker(load_config("3v3", sets=["runner.envs_per_worker=5"]).runner, 3) == 5
    assert envs_per_worker_of(load_config("1v1").runner) == 32  # game workers (multiprocessing) keep 32


def test_a_rollout_worker_process_that_dies_ends_the_run_with_one_clear_error():
    cfg = load_config("1v1", sets=SMALL + ["runner.workers=2", "training.kickstart.teacher="])
    weights = build_network(cfg.policy).state_dict()
    collection = WorkerCollection(cfg, cfg.policy, None, "rollout", workers=2, pipelined=False, on_progress=print)
    try:
        collection.submit(Order(weights, 0, 4))
        got = collection.result()
        assert got.workers == 2 and got.segment.actions.shape == (4, collection.slots)
        os.kill(collection.pids[1], signal.SIGKILL)
        collection.submit(Order(weights, 1, 4))
        with pytest.raises(WorkerError, match=r"Rollout worker 1 \(pid \d+\) died without a traceback \(signal 9\)"):
            collection.result()
    finally:
        collection.close()


def test_pipelining_auto_is_on_where_the_update_does_not_share_the_cores():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert pipelining("auto", "central", cuda, 64)
    assert pipelining("auto", "ray", cpu, 64)
    assert not pipelining("auto", "central", cpu, 4096)
    assert pipelining("always", "in-process", cpu, 4096) and not pipelining("never", "ray", cuda, 1)


def segment(width: int, version: int, wins: float) -> Segment:
    rng = np.random.default_rng(width)
    arr = lambda *shape: rng.random(shape).astype(np.float32)  # noqa: E731
    return Segment(obs=arr(4, width, 3), actions=np.arange(4 * width).reshape(4, width), logprobs=arr(4, width),
                   values=arr(4, width), rewards=arr(4, width), episode_starts=arr(4, width), next_obs=arr(width, 3),
                   next_starts=arr(width), version=version,
                   tally=Tally(goals_for=1, returns=[1.0], lengths=[2.0], envs=2, self_play_envs=1,
                               opponents={"rule": [1, wins, 0, 2]}),
                   hidden=arr(4, 2, width, 5), next_hidden=arr(2, width, 5))


def test_segments_of_several_workers_merge_along_the_slots():
    a, b = segment(2, version=3, wins=1), segment(3, version=2, wins=2)
    m = merge([a, b])
    assert m.obs.shape == (4, 5, 3) and m.hidden.shape == (4, 2, 5, 5) and m.next_hidden.shape == (2, 5, 5)
    np.testing.assert_array_equal(m.actions[:, 2:], b.actions)
    assert m.version == 2 and m.steps == 20 and m.teacher_probs is None
    assert m.tally.results() == {"rule": (3, 0, 4)}
    row = m.tally.row()
    assert row["charts/win_rate/rule"] == pytest.approx(0.75) and row["charts/opponent_share/self-play"] == 0.5
