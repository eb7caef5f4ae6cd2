"""`league diagnose`: the figures to take before and after every optimisation, in one run.

Tests (each a function returning Figures; `diagnose` runs the chosen ones):

  env        game throughput at the configured stage, tick skip (the action repeat), workers and
             arenas: `arena.bench_env.bench_env` itself, so it cannot disagree with `league bench env`.
  inference  policy latency (p50/p95/p99) at batch sizes 1..4096 through the batched inference
             wrapper (agents.nn_policy.NetworkPolicy), on the CPU and on the GPU when there is
             one; and one batched forward over all of a training step's rows against one
             forward per row (the "batch inference" claim of the seed documents).
  train      PPO update time per minibatch at the configured minibatch size, with the configured
             AMP / compile / pinned-memory flags (their fallback notes included); then a short
             training run through `training.bench` (the code of `league bench train`): end-to-end
             agent steps/s, collection-only agent steps/s and the time split, while a sampler
             records CPU use per process (driver, each game worker) and peak memory.
  gpu        GPU utilisation and memory over that training run (NVML through torch); on a
             machine without CUDA one "no GPU: ..." note and empty figures.

Every figure has a key ("env.runner.env_steps_per_s"), so a JSON written by `--json` can serve
as the `--baseline` of a later run, which prints each figure as a ratio to it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

from league.config import Config
from league.errors import LeagueError
from training.accel import learner_threads
from training.diagnose_sys import MIB, ResourceSampler, gpu_status

TESTS = ("env", "inference", "train", "gpu")
FORMAT, VERSION = "league-diagnose", 1
BATCH_SIZES = (1, 4, 16, 64, 256, 1024, 4096)


@dataclass
class Figure:
    key: str
    label: str
    value: float | None  # None: not measurable here (e.g. GPU figures on a CPU machine)
    unit: str
    better: str = "higher"  # higher | lower | "" (a setting or a count, not a figure of merit)


@dataclass
class Budget:
    """How long each test measures; `quick()` is for CI and smoke checks."""

    env_seconds: float = 5.0
    env_warmup: float = 1.0
    inference_seconds: float = 0.8  # per batch size and device
    inference_reps: int = 400
    update_repeats: int = 3
    train_iterations: int = 2
    train_batch: int = 50_000
    collection_seconds: float = 4.0

    @classmethod
    def quick(cls) -> Budget:
        return cls(env_seconds=0.6, env_warmup=0.2, inference_seconds=0.1, inference_reps=20, update_repeats=1,
                   train_iterations=1, train_batch=1024, collection_seconds=0.5)


@dataclass
class Diagnosis:
    tests: list[str]
    settings: dict
    machine: dict
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "tests": self.tests, "seconds": round(self.seconds, 1), "settings": self.settings,
                "machine": self.machine, "notes": self.notes,
                "figures": {f.key: {"value": f.value, "unit": f.unit, "label": f.label, "better": f.better}
                            for f in self.figures}}


# --------------------------------------------------------------------------- helpers




def resolved_runner(cfg: Config) -> tuple[int, int]:
    from arena.vector import default_workers, envs_per_worker_of

    return cfg.runner.workers or default_workers(), envs_per_worker_of(cfg.runner)


def _percentiles(seconds: list[float]) -> tuple[float, float, float]:
    p50, p95, p99 = np.percentile(np.array(seconds) * 1e3, [50, 95, 99]).tolist()
    return p50, p95, p99


def _time_calls(call: Callable[[], object], reps: int, budget: float, sync: Callable[[], None]) -> list[float]:
    """Seconds per call of `call`, after 3 warm-up calls; at most `reps` calls or `budget` seconds."""
    for _ in range(3):
        call()
    sync()
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    while len(samples) < reps and (len(samples) < 5 or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        call()
        sync()
        samples.append(time.perf_counter() - t0)
    return samples


# --------------------------------------------------------------------------- env


def measure_env(cfg: Config, budget: Budget, notes: list[str]) -> list[Figure]:
    from arena.bench_env import bench_env

    workers, envs = resolved_runner(cfg)
    r = bench_env(team_size=cfg.game.team_size, workers=workers, envs_per_worker=envs, tick_skip=cfg.game.tick_skip,
                  seconds=budget.env_seconds, include_mlp=True, seed=cfg.seed, warmup_seconds=budget.env_warmup,
                  policy_config=cfg.policy if cfg.policy.kind == "mlp" else None)
    by_name = {m.name: m for m in r.measurements}
    ceiling = r.measurements[0]
    reference = next(m for m in r.measurements if m.name.startswith("RLGym"))
    runner, mlp = by_name["this runner, random actions"], by_name["this runner, MLP policy"]
    figures = [Figure("env.ceiling.ticks_per_s", f"bare RocketSim ceiling, {workers} process(es)", ceiling.ticks_per_s,
                      "ticks/s"),
               Figure("env.reference.ticks_per_s", f"RLGym v2 standard env x{r.reference_scale} cores",
                      reference.ticks_per_s, "ticks/s")]
    for key, label, m in (("runner", "runner, random actions", runner), ("runner_mlp", "runner, MLP policy", mlp)):
        figures += [Figure(f"env.{key}.env_steps_per_s", f"{label}: env steps/s", m.env_steps_per_s, "steps/s"),
                    Figure(f"env.{key}.agent_steps_per_s", f"{label}: agent steps/s", m.agent_steps_per_s, "steps/s"),
                    Figure(f"env.{key}.ticks_per_s", f"{label}: physics ticks/s", m.ticks_per_s, "ticks/s")]
    figures += [Figure("env.runner_vs_ceiling", "runner / ceiling", r.runner_vs_ceiling, "x"),
                Figure("env.runner_mlp_vs_ceiling", "runner with MLP / ceiling", r.mlp_runner_vs_ceiling, "x"),
                Figure("env.runner_vs_reference", "runner / reference", r.runner_vs_reference, "x"),
                Figure("env.parallel_scaling", f"{workers} bare process(es) / 1 (cores' worth)", r.parallel_scaling, "x")]
    return figures


# --------------------------------------------------------------------------- inference


def _policy(cfg: Config, device: torch.device):
    from agents.networks import build_network
    from agents.nn_policy import NetworkPolicy

    torch.manual_seed(cfg.seed)
    policy = NetworkPolicy(build_network(cfg.policy), device=device, name="diagnose")
    policy.seed(cfg.seed)
    return policy


def measure_inference(cfg: Config, budget: Budget, notes: list[str]) -> list[Figure]:
    from agents.obs import OBS_DIM

    workers, envs = resolved_runner(cfg)
    threads = learner_threads(cfg.training, workers)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    notes.append(f"inference: {cfg.policy.kind} policy, {threads} torch thread(s) on the CPU (as the trainer's driver).")
    rng = np.random.default_rng(cfg.seed)
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    figures: list[Figure] = []
    try:
        for device in devices:
            policy = _policy(cfg, device)
            sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
            for n in BATCH_SIZES:
                obs = rng.standard_normal((n, OBS_DIM), dtype=np.float32)
                state = policy.initial_state(n)
                samples = _time_calls(functools.partial(policy.act, obs, state), budget.inference_reps,
                                      budget.inference_seconds, sync)
                p50, p95, p99 = _percentiles(samples)
                base = f"inference.{device.type}.batch{n}"
                figures += [Figure(f"{base}.p50_ms", f"{device.type}, batch {n}: p50", p50, "ms", "lower"),
                            Figure(f"{base}.p95_ms", f"{device.type}, batch {n}: p95", p95, "ms", "lower"),
                            Figure(f"{base}.p99_ms", f"{device.type}, batch {n}: p99", p99, "ms", "lower"),
                            Figure(f"{base}.rows_per_s", f"{device.type}, batch {n}: rows/s at p50", n / p50 * 1e3,
                                   "rows/s")]
        figures += _batching(cfg, workers * envs * 2 * cfg.game.team_size, budget, rng)
    finally:
        torch.set_num_threads(before)
    return figures


def _batching(cfg: Config, rows: int, budget: Budget, rng: np.random.Generator) -> list[Figure]:
    """One batched forward over a training step's rows against one forward per row (batch 1)."""
    from agents.obs import OBS_DIM

    policy = _policy(cfg, torch.device("cpu"))
    obs = rng.standard_normal((rows, OBS_DIM), dtype=np.float32)
    batched_state = policy.initial_state(rows)
    one_state = policy.initial_state(1)

    def per_row() -> None:
        for i in range(rows):
            policy.act(obs[i:i + 1], one_state)

    reps = max(3, budget.inference_reps // 40)
    batched = statistics.median(_time_calls(lambda: policy.act(obs, batched_state), reps, budget.inference_seconds,
                                            lambda: None))
    looped = statistics.median(_time_calls(per_row, reps, budget.inference_seconds, lambda: None))
    return [Figure("inference.batching.rows", "rows per training step (workers x arenas x cars)", rows, "rows", ""),
            Figure("inference.batching.batched_ms", "one batched forward over all rows", batched * 1e3, "ms", "lower"),
            Figure("inference.batching.per_row_ms", "one forward per row (batch 1), all rows", looped * 1e3, "ms",
                   "lower"),
            Figure("inference.batching.speedup", "batched speed-up over per-row forwards", looped / batched, "x")]


# --------------------------------------------------------------------------- train


def measure_update(cfg: Config, budget: Budget, notes: list[str]) -> list[Figure]:
    """PPO update time per minibatch with the configured flags, on a buffer of random experience."""
    from agents.networks import build_network
    from agents.obs import OBS_DIM
    from training.accel import make_accel, maybe_compile, update_threads
    from training.ppo import PpoLearner
    from training.selfplay import pick_device

    workers, envs = resolved_runner(cfg)
    device = pick_device(cfg.training.device)
    before = torch.get_num_threads()
    torch.set_num_threads(update_threads(cfg.training))  # as the trainer's update: the workers wait then
    try:
        torch.manual_seed(cfg.seed)
        net = build_network(cfg.policy).to(device)
        accel = make_accel(device, cfg.training.amp, cfg.training.pin_memory)
        model = maybe_compile(net, cfg.training.compile, torch.zeros(2, OBS_DIM, device=device), accel.notes)
        notes.extend(accel.notes)
        slots = workers * envs * 2 * cfg.game.team_size
        ppo = dataclasses.replace(cfg.ppo, epochs=1)
        if budget.update_repeats < 2:  # quick: a buffer of a few minibatches only
            ppo = dataclasses.replace(ppo, steps_per_env=max(1, min(ppo.steps_per_env, 2 * ppo.minibatch_size // slots)))
        learner = PpoLearner(model, ppo, slots, OBS_DIM, device=device, seed=cfg.seed, accel=accel)
        gen = torch.Generator().manual_seed(cfg.seed)
        obs = torch.randn(ppo.steps_per_env + 1, slots, OBS_DIM, generator=gen)
        rewards = torch.randn(ppo.steps_per_env, slots, generator=gen)
        starts = torch.zeros(slots)
        per_minibatch: list[float] = []
        minibatches = 0
        for rep in range(budget.update_repeats + 1):  # the first update warms up (allocations, compile)
            for t in range(ppo.steps_per_env):
                learner.act(obs[t], starts)
                learner.observe_rewards(rewards[t])
            if device.type == "cuda":
                torch.cuda.synchronize()
            stats = learner.update(obs[-1], starts)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if rep and stats.minibatches:
                per_minibatch.append(stats.seconds / stats.minibatches)
                minibatches = stats.minibatches
        if not per_minibatch:  # one repeat only: report the warm-up update
            per_minibatch.append(stats.seconds / max(1, stats.minibatches))
            minibatches = stats.minibatches
    finally:
        torch.set_num_threads(before)
    seconds = statistics.median(per_minibatch)
    rows = min(ppo.minibatch_size, ppo.steps_per_env * slots)
    amp = "off" if accel.amp_dtype is None else str(accel.amp_dtype).removeprefix("torch.")
    notes.append(f"update: {device.type}, AMP {amp}, compile {cfg.training.compile if model is not net else 'off'}, "
                 f"{minibatches} minibatches of {rows} rows per update.")
    return [Figure("update.minibatch_rows", "rows per minibatch (ppo.minibatch_size)", rows, "rows", ""),
            Figure("update.ms_per_minibatch", "PPO update time per minibatch", seconds * 1e3, "ms", "lower"),
            Figure("update.rows_per_s", "PPO update rows/s", rows / seconds, "rows/s")]


def measure_train(cfg: Config, budget: Budget, notes: list[str], sets: list[str], user_file: Path | None,
               gpu: bool) -> tuple[list[Figure], ResourceSampler]:
    """A short `league bench train` run, sampled; then the collection-only rate on the same workers."""
    from training.bench import bench_config, collection_rate, training_rate

    workers, envs = resolved_runner(cfg)
    bcfg = bench_config(cfg.stage, budget.train_iterations, budget.train_batch, workers, envs, sets, user_file)
    run_notes: list[str] = []
    with ResourceSampler(gpu=gpu) as sampler:
        rate, share = training_rate(bcfg, run_notes)
    notes.extend(n for n in run_notes if n not in notes)
    collection = collection_rate(bcfg, budget.collection_seconds)
    batch = bcfg.ppo.minibatch_size
    figures = [Figure("train.batch", f"agent steps per iteration ({budget.train_iterations} measured)", batch, "steps",
                      ""),
               Figure("train.agent_steps_per_s", "end to end, updates included", rate, "steps/s"),
               Figure("train.collection_steps_per_s", "collection only, same workers", collection, "steps/s"),
               Figure("train.vs_collection", "end to end / collection only", rate / collection, "x")]
    figures += [Figure(f"train.share.{k}", f"time in {k}", v * 100, "%", "") for k, v in share.items()]
    return figures, sampler


def system_figures(sampler: ResourceSampler) -> list[Figure]:
    driver = sampler.cpu_by_role("driver")
    workers = sampler.cpu_by_role("worker")
    figures = [Figure("system.cpu.driver_percent", "driver process CPU (100 = one core)",
                      driver[0] if driver else None, "%", "")]
    figures += [Figure(f"system.cpu.worker{i}_percent", f"game worker {i} CPU", w, "%", "")
                for i, w in enumerate(workers)]
    figures += [Figure("system.cpu.total_percent", f"all processes CPU ({os.cpu_count()} cores = "
                       f"{100 * (os.cpu_count() or 1)}%)", sum(driver + workers), "%", ""),
                Figure("system.memory.driver_peak_mib", "driver peak RSS", sampler.peak_rss("driver") / MIB, "MiB",
                       "lower"),
                Figure("system.memory.worker_peak_mib", "largest game worker peak RSS",
                       sampler.peak_rss("worker") / MIB, "MiB", "lower"),
                Figure("system.memory.total_peak_mib", "all processes together, peak RSS",
                       sampler.peak_tree_rss / MIB, "MiB", "lower")]
    return figures


def gpu_figures(sampler: ResourceSampler | None) -> list[Figure]:
    util = sampler.gpu_util if sampler is not None else []
    used = sampler.gpu_used_peak if sampler is not None else None
    peak = sampler.torch_gpu_peak() if sampler is not None else None
    return [Figure("gpu.utilization_mean_percent", "GPU utilisation, mean (NVML)",
                   statistics.fmean(util) if util else None, "%"),
            Figure("gpu.utilization_max_percent", "GPU utilisation, max (NVML)", max(util) if util else None, "%"),
            Figure("gpu.memory_used_peak_mib", "GPU memory used, whole device, peak",
                   used / MIB if used is not None else None, "MiB", "lower"),
            Figure("gpu.torch_allocated_peak_mib", "GPU memory allocated by torch, peak",
                   peak / MIB if peak is not None else None, "MiB", "lower")]


# --------------------------------------------------------------------------- all of it


def diagnose(cfg: Config, tests: list[str], budget: Budget, sets: list[str] | None = None,
             user_file: Path | None = None, on_test: Callable[[str], None] | None = None) -> Diagnosis:
    """Run the chosen tests (a subset of TESTS, in that order) and gather their figures and notes."""
    on_test = on_test or (lambda name: None)
    has_gpu, gpu_line = gpu_status()
    workers, envs = resolved_runner(cfg)
    settings = {"stage": cfg.stage, "tick_skip": cfg.game.tick_skip, "workers": workers, "envs_per_worker": envs,
                "policy": cfg.policy.kind, "actor_sizes": cfg.policy.actor_sizes, "device": cfg.training.device,
                "amp": cfg.training.amp, "compile": cfg.training.compile, "pin_memory": cfg.training.pin_memory,
                "torch_threads": learner_threads(cfg.training, workers), "minibatch_size": cfg.ppo.minibatch_size,
                "sets": list(sets or []), "quick": budget == Budget.quick()}
    machine = {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
               "torch": torch.__version__, "gpu": gpu_line}
    report = Diagnosis(tests=[t for t in TESTS if t in tests], settings=settings, machine=machine)
    notes = report.notes
    start = time.perf_counter()
    if "gpu" in tests or "train" in tests:
        notes.append(gpu_line)
    with ResourceSampler(interval=0.5) as whole:
        if "env" in tests:
            on_test("env")
            report.figures += measure_env(cfg, budget, notes)
        if "inference" in tests:
            on_test("inference")
            report.figures += measure_inference(cfg, budget, notes)
        sampler = None
        if "train" in tests or ("gpu" in tests and has_gpu):
            on_test("train")
            report.figures += measure_update(cfg, budget, notes)
            train_figures, sampler = measure_train(cfg, budget, notes, list(sets or []), user_file, has_gpu)
            report.figures += train_figures
            report.figures += system_figures(sampler)
        if "gpu" in tests or "train" in tests:
            report.figures += gpu_figures(sampler if has_gpu else None)
    report.figures.append(Figure("system.memory.run_peak_mib", "peak RSS of all processes over the whole diagnosis",
                                 max(whole.peak_tree_rss, sampler.peak_tree_rss if sampler else 0) / MIB, "MiB",
                                 "lower"))
    notes.extend(whole.notes + (sampler.notes if sampler is not None else []))
    report.seconds = time.perf_counter() - start
    return report


# --------------------------------------------------------------------------- files


def write_json(report: Diagnosis, path: Path) -> None:
    """Write the report atomically: a temporary file next to `path`, then a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise LeagueError(f"Cannot write {path}: {exc.strerror}.") from None


def read_baseline(path: Path) -> dict[str, float | None]:
    """The figures of an earlier `--json` file, by key; one clear sentence when it is not one."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise LeagueError(f"Baseline file {path} does not exist.") from None
    except OSError as exc:
        raise LeagueError(f"Baseline file {path} cannot be read: {exc.strerror}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise LeagueError(f"Baseline file {path} is not JSON; pass a file written by `league diagnose --json`.") from None
    figures = data.get("figures") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(figures, dict):
        raise LeagueError(f"Baseline file {path} is not a `league diagnose --json` file (no {FORMAT!r} figures).")
    if data.get("version") != VERSION:
        raise LeagueError(f"Baseline file {path} has format version {data.get('version')!r}; "
                          f"this league reads version {VERSION}.")
    out: dict[str, float | None] = {}
    for key, entry in figures.items():
        value = entry.get("value") if isinstance(entry, dict) else None
        out[key] = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return out


def ratio(value: float | None, baseline: float | None) -> float | None:
    """value / baseline, or None where either is missing or the baseline is 0."""
    if value is None or baseline is None or baseline == 0:
        return None
    return value / baseline
