"""`league diagnose`: the figures to take before and after every optimisation, in one run.

Tests (each a function returning a typed report; `diagnose` runs the chosen ones):

  env        game throughput at the configured stage, tick skip (the action repeat), workers and
             arenas: `training.measure.env.bench_env` itself, so it cannot disagree with
             `league bench env`.
  inference  policy latency (p50/p95/p99) at batch sizes 1..4096 through the batched inference
             wrapper (agents.nn_policy.NetworkPolicy), on the CPU and on the GPU when there is
             one; and one batched forward over all of a training step's rows against one
             forward per row (the "batch inference" claim of the seed documents).
  train      PPO update time per minibatch at the configured minibatch size, with the configured
             AMP / compile / pinned-memory flags (their fallback notes included); then a short
             training run through `training.measure.train` (the code of `league bench train`):
             end-to-end agent steps/s, collection-only agent steps/s and the time split, while a
             sampler records CPU use per process (driver, each game worker) and peak memory.
  gpu        GPU utilisation and memory over that training run (NVML through torch); on a
             machine without CUDA one "no GPU: ..." note and empty figures.
  scale      where a many-core training run loses its time (training.measure.scale): a short run
             of the configured training, each collector's and the learner's phases, every core's
             busy share and the GPU's over time. Not part of `all`; the first thing to run on a
             new machine: `league diagnose --test scale`.

The command (league.cli.diagnose) names every figure with a key ("env.runner.env_steps_per_s")
and writes them with `write_json`, so a JSON written by `--json` can serve as the `--baseline`
of a later run (`read_baseline`), which prints each figure as a ratio to it.

(About 420 lines, kept whole on purpose: four independent measurements, each next to the typed
report it returns, read in the order `diagnose` runs them.)
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
from pathlib import Path

import numpy as np
import torch

from league.config import Config
from league.errors import LeagueError
from league.files import printable, read_regular
from training.accel import learner_threads
from training.measure.env import EnvBench
from training.measure.scale import ScaleReport, profile_scale
from training.measure.system import MIB, GpuReport, ResourceSampler, SystemReport, gpu_report, gpu_status, system_report
from training.measure.train import TrainBench

TESTS = ("env", "inference", "train", "gpu", "scale")
ALL_TESTS = TESTS[:4]  # what `--test all` runs: the scale profile is a training run of its own, asked for by name
FORMAT, VERSION = "league-diagnose", 1
BATCH_SIZES = (1, 4, 16, 64, 256, 1024, 4096)


@dataclass
class MeasureTimes:
    """How long each test measures (not a training budget: training.budget.Budget); `quick()` is for CI and
    smoke checks."""

    env_seconds: float = 5.0
    env_warmup: float = 1.0
    inference_seconds: float = 0.8  # per batch size and device
    inference_reps: int = 400
    update_repeats: int = 3
    train_iterations: int = 2
    train_batch: int = 50_000
    collection_seconds: float = 4.0
    scale_seconds: float = 60.0

    @classmethod
    def quick(cls) -> MeasureTimes:
        return cls(env_seconds=0.6, env_warmup=0.2, inference_seconds=0.1, inference_reps=20, update_repeats=1,
                   train_iterations=1, train_batch=1024, collection_seconds=0.5, scale_seconds=6.0)


@dataclass(frozen=True)
class Settings:
    """What the diagnosis measured with (the resolved configuration)."""

    stage: str
    tick_skip: int
    workers: int
    envs_per_worker: int
    policy: str
    actor_sizes: list[int]
    device: str
    amp: str
    compile: str
    pin_memory: bool
    torch_threads: int
    minibatch_size: int
    sets: list[str]
    quick: bool


@dataclass(frozen=True)
class Machine:
    cpu_count: int | None
    platform: str
    python: str
    torch: str
    gpu: str  # which GPU, or why there is none


@dataclass(frozen=True)
class Latency:
    """`NetworkPolicy.act` at one batch size on one device."""

    device: str  # cpu | cuda
    batch: int
    p50_ms: float
    p95_ms: float
    p99_ms: float

    @property
    def rows_per_second(self) -> float:
        """Rows per second at the median latency."""
        return self.batch / self.p50_ms * 1e3


@dataclass(frozen=True)
class Batching:
    """One batched forward over a training step's rows against one batch-1 forward per row."""

    rows: int  # workers x arenas x cars
    batched_ms: float
    per_row_ms: float  # all rows, one forward each

    @property
    def speedup(self) -> float:
        return self.per_row_ms / self.batched_ms


@dataclass(frozen=True)
class InferenceReport:
    latencies: list[Latency]  # by device, then batch size (BATCH_SIZES)
    batching: Batching


@dataclass(frozen=True)
class UpdateReport:
    """PPO update time per minibatch (median over the measured updates)."""

    minibatch_rows: int
    ms_per_minibatch: float

    @property
    def rows_per_second(self) -> float:
        return self.minibatch_rows / (self.ms_per_minibatch / 1e3)


@dataclass
class Diagnosis:
    """What the chosen tests measured; a part is None where its test did not run."""

    tests: list[str]
    settings: Settings
    machine: Machine
    env: EnvBench | None = None
    inference: InferenceReport | None = None
    update: UpdateReport | None = None
    train: TrainBench | None = None
    system: SystemReport | None = None  # over the training run
    gpu: GpuReport | None = None  # over the training run; empty figures without a GPU
    scale: ScaleReport | None = None  # the scale profile (training.measure.scale)
    run_peak_mib: float = 0.0  # peak RSS of all processes over the whole diagnosis
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


# --------------------------------------------------------------------------- helpers


def resolved_runner(cfg: Config) -> tuple[int, int]:
    from arena.engine.cores import workers_or_default
    from arena.engine.vector import envs_per_worker_of

    return workers_or_default(cfg.runner.workers), envs_per_worker_of(cfg.runner)


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


def measure_env(cfg: Config, budget: MeasureTimes) -> EnvBench:
    from training.measure.env import bench_env

    workers, envs = resolved_runner(cfg)
    return bench_env(team_size=cfg.game.team_size, workers=workers, envs_per_worker=envs, tick_skip=cfg.game.tick_skip,
                     seconds=budget.env_seconds, include_mlp=True, seed=cfg.seed, warmup_seconds=budget.env_warmup,
                     policy_config=cfg.policy if cfg.policy.kind == "mlp" else None)


# --------------------------------------------------------------------------- inference


def _policy(cfg: Config, device: torch.device):
    from agents.networks import build_network
    from agents.nn_policy import NetworkPolicy

    torch.manual_seed(cfg.seed)
    policy = NetworkPolicy(build_network(cfg.policy), device=device, name="diagnose")
    policy.seed(cfg.seed)
    return policy


def measure_inference(cfg: Config, budget: MeasureTimes, notes: list[str]) -> InferenceReport:
    from agents.obs import OBS_DIM

    workers, envs = resolved_runner(cfg)
    threads = learner_threads(cfg.training, workers)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    notes.append(f"inference: {cfg.policy.kind} policy, {threads} torch thread(s) on the CPU (as the trainer's driver).")
    rng = np.random.default_rng(cfg.seed)
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    latencies: list[Latency] = []
    try:
        for device in devices:
            policy = _policy(cfg, device)
            sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
            for n in BATCH_SIZES:
                obs = rng.standard_normal((n, OBS_DIM), dtype=np.float32)
                state = policy.initial_state(n)
                samples = _time_calls(functools.partial(policy.act, obs, state), budget.inference_reps,
                                      budget.inference_seconds, sync)
                latencies.append(Latency(device.type, n, *_percentiles(samples)))
        batching = _batching(cfg, workers * envs * 2 * cfg.game.team_size, budget, rng)
    finally:
        torch.set_num_threads(before)
    return InferenceReport(latencies, batching)


def _batching(cfg: Config, rows: int, budget: MeasureTimes, rng: np.random.Generator) -> Batching:
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
    return Batching(rows, batched * 1e3, looped * 1e3)


# --------------------------------------------------------------------------- train


def measure_update(cfg: Config, budget: MeasureTimes, notes: list[str]) -> UpdateReport:
    """PPO update time per minibatch with the configured flags, on a buffer of random experience."""
    from agents.networks import build_network
    from agents.obs import OBS_DIM
    from training.accel import make_accel, maybe_compile, update_threads
    from training.measure.stepwise import act, observe_rewards
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
                act(learner, obs[t], starts)
                observe_rewards(learner, rewards[t])
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
    return UpdateReport(rows, seconds * 1e3)


def measure_train(cfg: Config, budget: MeasureTimes, notes: list[str], sets: list[str], user_file: Path | None,
                  gpu: bool) -> tuple[TrainBench, ResourceSampler]:
    """A short `league bench train` run, sampled; then the collection-only rate on the same workers."""
    from training.measure.train import bench_config, collection_rate, training_rate

    workers, envs = resolved_runner(cfg)
    bcfg = bench_config(cfg.stage, budget.train_iterations, budget.train_batch, workers, envs, sets, user_file)
    run_notes: list[str] = []
    with ResourceSampler(gpu=gpu) as sampler:
        rate, share = training_rate(bcfg, run_notes, sampler.update_spans)
    notes.extend(n for n in run_notes if n not in notes)
    collection = collection_rate(bcfg, budget.collection_seconds)
    return TrainBench(rate, collection, share, budget.train_iterations, bcfg.ppo.minibatch_size), sampler


# --------------------------------------------------------------------------- all of it


def diagnose(cfg: Config, tests: list[str], budget: MeasureTimes, sets: list[str] | None = None,
             user_file: Path | None = None, on_test: Callable[[str], None] | None = None) -> Diagnosis:
    """Run the chosen tests (a subset of TESTS, in that order) and gather their reports and notes."""
    on_test = on_test or (lambda name: None)
    has_gpu, gpu_line = gpu_status()
    workers, envs = resolved_runner(cfg)
    settings = Settings(stage=cfg.stage, tick_skip=cfg.game.tick_skip, workers=workers, envs_per_worker=envs,
                        policy=cfg.policy.kind, actor_sizes=cfg.policy.actor_sizes, device=cfg.training.device,
                        amp=cfg.training.amp, compile=cfg.training.compile, pin_memory=cfg.training.pin_memory,
                        torch_threads=learner_threads(cfg.training, workers), minibatch_size=cfg.ppo.minibatch_size,
                        sets=list(sets or []), quick=budget == MeasureTimes.quick())
    machine = Machine(cpu_count=os.cpu_count(), platform=platform.platform(), python=platform.python_version(),
                      torch=torch.__version__, gpu=gpu_line)
    report = Diagnosis(tests=[t for t in TESTS if t in tests], settings=settings, machine=machine)
    notes = report.notes
    start = time.perf_counter()
    if "gpu" in tests or "train" in tests:
        notes.append(gpu_line)
    sampler = None
    with ResourceSampler(interval=0.5) as whole:
        if "env" in tests:
            on_test("env")
            report.env = measure_env(cfg, budget)
        if "inference" in tests:
            on_test("inference")
            report.inference = measure_inference(cfg, budget, notes)
        if "train" in tests or ("gpu" in tests and has_gpu):
            on_test("train")
            report.update = measure_update(cfg, budget, notes)
            report.train, sampler = measure_train(cfg, budget, notes, list(sets or []), user_file, has_gpu)
            report.system = system_report(sampler)
        if "gpu" in tests or "train" in tests:
            report.gpu = gpu_report(sampler if has_gpu else None)
        if "scale" in tests:
            on_test("scale")
            report.scale = profile_scale(cfg.stage, budget.scale_seconds, has_gpu, sets, user_file,
                                         small=budget == MeasureTimes.quick())
            notes.extend(n for n in report.scale.notes if n not in notes)
    report.run_peak_mib = max(whole.peak_tree_rss, sampler.peak_tree_rss if sampler else 0) / MIB
    notes.extend(whole.notes + (sampler.notes if sampler is not None else []))
    report.seconds = time.perf_counter() - start
    return report


# --------------------------------------------------------------------------- files


def write_json(document: dict, path: Path) -> None:
    """Write a `--json` document (league.cli.diagnose builds it) atomically: a temporary file next to `path`, then a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(document, indent=2) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise LeagueError(f"Cannot write {path}: {exc.strerror}.") from None


MAX_BASELINE_BYTES = 1 << 20  # a --json file is a few KiB of figures


def read_baseline(path: Path) -> dict[str, float | None]:
    """The figures of an earlier `--json` file, by key; one clear sentence when it is not one.

    Read by the file rule (a regular file of at most 1 MiB: never a FIFO or /dev/zero), and
    parsed with nesting bounded (a file of 100k nested brackets is refused, not a RecursionError).
    """
    try:
        raw = read_regular(path, MAX_BASELINE_BYTES, "baseline file")
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise LeagueError(f"Baseline file {printable(str(path))} is not JSON; pass a file written by "
                          "`league diagnose --json`.") from None
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
