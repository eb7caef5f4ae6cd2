"""Issue 41's figures on a GPU machine in one command (`bash scripts/gpu_check.sh`), as one JSON.

    python -m training.measure.gpu_check figures   # about 3 minutes on 16 cores
    python -m training.measure.gpu_check learning  # the learning benchmark, 7 minutes and its games

`figures`, all in one run on the machine's cores and GPU, 1v1:

  machine     CPU model, cores, GPU, torch
  env         `league bench env` with one process per core and 128 arenas each (a rollout worker's
              share): bare RocketSim (the ceiling) and rollout workers with the MLP choosing every
              action, and their ratio (target >= 0.6x)
  update      the PPO update's agent steps a second on the GPU at several minibatch sizes (the
              default network, 2 epochs, the teacher's pull on), on a round of the default size
  scale_new   `league diagnose --test scale` on the learner's own GPU defaults (configs/gpu.yaml:
              rollout workers, pipelined, teacher and league opponents in the loop): end to end
              agent steps a second (target >= 250,000), every phase, every core, the GPU over time
  scale_old   the same with the GPU defaults this issue started from (the `central` runner,
              2,048-step minibatches, 1M-step snapshots), for the ratio
  scale_big   the seed documents' network ([1024, 512, 256]) on the GPU defaults: GPU busy (>= 40%)

`learning`: `python -m training.bench_learning --minutes 7 --games 50 --seed 0` with the learner on
the GPU (its defaults), the figure set against runs GPU-B and GPU-C of docs/learning.md.
Without CUDA either part says so in the JSON ("cuda": false) and measures nothing, unless `--cpu`
(a smoke check of the script itself at tiny sizes: `pytest tests/test_gpu_check.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import asdict

import numpy as np
import torch

from arena.engine.vector import default_workers
from training.measure.scale import ScaleReport, profile_scale

MINIBATCHES = (2048, 8192, 16384, 32768)
OLD_GPU_DEFAULTS = ["runner.backend=central", "ppo.minibatch_size=2048", "training.snapshot_every_steps=1000000"]
BIG_NETWORK = ["policy.actor_sizes=[1024, 512, 256]", "policy.critic_sizes=[1024, 512, 256]"]
# --cpu: every part at a size this 2-core machine runs in seconds (the script checked, not measured)
SMOKE = ["runner.workers=1", "runner.envs_per_worker=4", "ppo.steps_per_env=16", "ppo.minibatch_size=256",
         "training.snapshot_every_steps=1000"]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict:
    return {"cpu": cpu_model(), "cores": default_workers(), "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def scale_figures(report: ScaleReport) -> dict:
    """A scale profile, trimmed for the JSON: rate, the collectors' mean phases and the busiest, the learner's."""
    figures = asdict(report)
    figures["workers_mean"] = report.worker_mean()
    figures["workers"] = report.workers[:2] + report.workers[-1:]  # the JSON stays short; the mean covers all
    figures["cores_busy_mean"] = float(np.mean(report.core_busy_percent)) if report.core_busy_percent else None
    return figures


def update_rates(device: torch.device, minibatches: tuple[int, ...], sets: list[str], repeats: int = 3) -> dict:
    """Agent steps a second of the PPO update (ingest and epochs) on a round of the configured size."""
    from agents.networks import build_network
    from league.config import load_config
    from training.accel import cuda_available, make_accel
    from training.collection import collection_workers
    from training.guide import Guide, UpdatePlan
    from training.ppo import PpoLearner
    from training.rollout_worker import rollout_envs_per_worker
    from training.segment import Segment, Tally

    out = {}
    for size in minibatches:
        cfg = load_config("1v1", sets=sets + [f"ppo.minibatch_size={size}"], gpu=cuda_available)
        workers = collection_workers(cfg.runner.workers, "rollout", device)
        slots = workers * rollout_envs_per_worker(cfg.runner, 1) * 2
        steps = cfg.ppo.steps_per_env
        rng = np.random.default_rng(0)
        seg = Segment(obs=rng.standard_normal((steps, slots, 196), dtype=np.float32),
                      actions=rng.integers(0, 90, (steps, slots)), logprobs=np.full((steps, slots), -4.5, np.float32),
                      values=rng.standard_normal((steps, slots), dtype=np.float32),
                      rewards=rng.standard_normal((steps, slots), dtype=np.float32),
                      episode_starts=np.zeros((steps, slots), np.float32),
                      next_obs=rng.standard_normal((slots, 196), dtype=np.float32),
                      next_starts=np.zeros(slots, np.float32), version=0, tally=Tally(),
                      teacher_probs=rng.dirichlet(np.ones(90), (steps, slots)).astype(np.float32))
        net = build_network(cfg.policy).to(device)
        learner = PpoLearner(net, cfg.ppo, 1, obs_dim=196, device=device, seed=0,
                             accel=make_accel(device, cfg.training.amp, cfg.training.pin_memory), teacher=True)
        plan = UpdatePlan(guide=Guide(1.0))  # the kickstart term in the update, as early in a run
        times = []
        for k in range(repeats + 1):
            start = time.perf_counter()
            learner.ingest(seg)
            learner.update(torch.from_numpy(seg.next_obs), torch.from_numpy(seg.next_starts), plan)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if k:  # the first warms up
                times.append(time.perf_counter() - start)
        out[str(size)] = {"agent_steps_per_s": seg.steps / min(times), "round": seg.steps, "epochs": cfg.ppo.epochs}
    return out


def figures(cpu: bool = False, skip: tuple[str, ...] = ()) -> dict:
    """The `figures` part (see the module doc); `cpu`: the smoke sizes on this machine's CPU; `skip`: parts
    left out (env, update, scale_new, scale_old, scale_big)."""
    gpu = torch.cuda.is_available()
    if not gpu and not cpu:
        return {"cuda": False, "reason": "no CUDA device here; run this on a GPU machine"}
    device = torch.device("cuda" if gpu else "cpu")
    base = ["training.device=cuda"] if gpu else SMOKE
    seconds = (40.0, 20.0, 20.0) if gpu else (4.0, 4.0, 4.0)
    out: dict = {"cuda": gpu, "machine": machine()}
    started = time.perf_counter()
    if "env" not in skip:
        out["env"] = env_figures(gpu)
        print(json.dumps({"env": out["env"]}), flush=True)
    if "update" not in skip:
        out["update"] = update_rates(device, MINIBATCHES if gpu else (256,), base if gpu else SMOKE, 3 if gpu else 1)
        print(json.dumps({"update": out["update"]}), flush=True)
    for key, sets, secs in (("scale_new", [], seconds[0]), ("scale_old", OLD_GPU_DEFAULTS, seconds[1]),
                            ("scale_big", BIG_NETWORK, seconds[2])):
        if key in skip:
            continue
        report = profile_scale("1v1", secs, gpu, base + sets)
        out[key] = scale_figures(report)
        print(json.dumps({key: {"agent_steps_per_s": report.agent_steps_per_second, "gpu_busy": report.gpu_busy_mean,
                                "learner": report.learner, "workers_mean": report.worker_mean()}}), flush=True)
    if "scale_new" in out and "scale_old" in out:
        new, old = out["scale_new"]["agent_steps_per_second"], out["scale_old"]["agent_steps_per_second"]
        out["new_over_old"] = new / old if old else None
    out["targets"] = {"rollout_mlp_vs_bare": 0.6, "scale_new_agent_steps_per_s": 250_000, "scale_big_gpu_busy": 40}
    out["seconds"] = time.perf_counter() - started
    return out


def env_figures(gpu: bool) -> dict:
    """bench env with one process per core and a rollout worker's 128 arenas each (4 and one process on --cpu)."""
    from training.measure.env import bench_env

    env = bench_env(1, workers=default_workers() if gpu else 1, envs_per_worker=128 if gpu else 4,
                    seconds=5.0 if gpu else 1.0, warmup_seconds=1.0 if gpu else 0.2)
    return {"bare_agent_steps_per_s": env.bare_rocketsim.agent_steps_per_second,
            "rollout_random_agent_steps_per_s": env.rollout.agent_steps_per_second,
            "rollout_random_vs_bare": env.rollout_vs_ceiling,
            "rollout_mlp_agent_steps_per_s": env.rollout_mlp.agent_steps_per_second,
            "rollout_mlp_vs_bare": env.rollout_mlp_vs_ceiling,
            "central_random_vs_bare": env.runner_vs_ceiling, "central_mlp_vs_bare": env.mlp_runner_vs_ceiling,
            "workers": env.workers, "arenas_per_worker": env.envs_per_worker}


def learning(minutes: float, cpu: bool = False) -> dict:
    """The `learning` part: the learning benchmark with the learner on the GPU, on its defaults."""
    from training.measure.learning import bench_learning

    gpu = torch.cuda.is_available()
    if not gpu and not cpu:
        return {"cuda": False, "reason": "no CUDA device here; run this on a GPU machine"}
    bench = bench_learning(minutes, games=50 if gpu else 2, seed=0,
                           sets=["training.device=cuda"] if gpu else SMOKE)
    return {"cuda": gpu, "machine": machine(), "minutes": minutes, "steps": bench.steps,
            "seconds": bench.train_seconds, "steps_per_s": bench.steps / bench.train_seconds, "timing": bench.timing,
            "results": [asdict(r) for r in bench.results], "ratings": [asdict(r) for r in bench.ratings]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("figures", "learning"))
    parser.add_argument("--minutes", type=float, default=7.0, help="learning: the training budget")
    parser.add_argument("--cpu", action="store_true", help="smoke-check the script on a CPU at tiny sizes")
    parser.add_argument("--out", help="also write the JSON here")
    parser.add_argument("--skip", default="", help="figures: parts to leave out, comma-separated "
                                                   "(env, update, scale_new, scale_old, scale_big)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    skip = tuple(p for p in args.skip.split(",") if p)
    result = figures(args.cpu, skip) if args.part == "figures" else learning(args.minutes, args.cpu)
    text = json.dumps(result, indent=1, default=str)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
