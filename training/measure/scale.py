"""`league diagnose --test scale`: where a many-core training run loses its time.

A short run of the configured training (the learner's own defaults unless `--set` says other:
teacher, league opponents, backend, device) in a throwaway league home, with every phase clock
read (arena.engine.phases, training.profile) and the machine sampled:

  per collector  physics, state read, rules and rewards, observations, resets and the runner's
                 rest; the learner's forward, the teacher's and the opponents'; segment writes;
                 and waiting (the run's wall time not spent in any of these: for a rollout worker,
                 the time between rounds, waiting for the learner's next order)
  learner        receiving (waiting for a round), batching (the segment onto its device),
                 updating (the PPO epochs), sending (weights and the next order out)
  machine        each core's busy share over the run; the GPU's busy share (NVML) in time windows

With the `central` backend the game workers' own phases stay in their processes: its one
collector shows them as "waiting for game workers".
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.engine.worker import STEP_PHASES
from league.config import load_config
from training.accel import cuda_available
from league.home import LeagueHome
from league.registry import Registry
from training.measure.system import ResourceSampler
from training.profile import LEARNER_PHASES
from training.progress import Note, TrainerEvent

# The collector's phases in print order; "waiting" is what is left of the wall time.
WORKER_PHASES = (*STEP_PHASES, "runner other", "waiting for game workers", "learner forward", "teacher", "opponents", "segment writes", "waiting")
GPU_WINDOWS = 10


@dataclass(frozen=True)
class ScaleReport:
    """Shares (percent of the measured wall time) per phase, and the machine's use over it."""

    backend: str
    pipelined: bool
    collectors: int
    agent_steps: int
    device: str
    seconds: float  # the measured wall time: from the first round's order (workers built) to the last update
    agent_steps_per_second: float
    workers: list[dict[str, float]]  # each collector's phase -> percent
    learner: dict[str, float]  # phase -> percent
    core_busy_percent: list[float]
    gpu_busy_windows: list[float | None]  # GPU_WINDOWS equal windows of the run, mean NVML busy percent each
    gpu_busy_mean: float | None
    notes: list[str]

    def worker_mean(self) -> dict[str, float]:
        """The collectors' mean share per phase."""
        phases = {p for w in self.workers for p in w}
        return {p: statistics.fmean(w.get(p, 0.0) for w in self.workers) for p in ordered(phases)}


def ordered(phases) -> list[str]:
    """Phases in WORKER_PHASES order, unknown ones after."""
    known = [p for p in WORKER_PHASES if p in phases]
    return known + sorted(set(phases) - set(known))


# `--quick`: a smoke check of the whole path in seconds (one worker, few arenas, short rounds), not figures.
SMALL = ["runner.workers=1", "runner.envs_per_worker=4", "ppo.steps_per_env=16", "ppo.minibatch_size=256",
         "policy.actor_sizes=[32]", "policy.critic_sizes=[32]"]


def profile_scale(stage: str | None, seconds: float, gpu: bool, sets: list[str] | None = None,
                  user_file: Path | None = None, small: bool = False) -> ScaleReport:
    """Train the configured stage for about `seconds` in a throwaway home and read every clock (see the
    module doc); `sets` and `user_file` as `league train` takes them; `small`: SMALL first."""
    from training.collection import collection_backend, pipelining
    from training.selfplay import SelfPlayTrainer, pick_device

    cfg = load_config(stage=stage, user_file=user_file,
                      sets=(SMALL if small else []) + list(sets or []) + [f"training.minutes={seconds / 60:.4f}", "training.steps=0",
                                               "training.eval_games=0"], gpu=cuda_available)
    device = pick_device(cfg.training.device)
    backend = collection_backend(cfg.runner.backend)
    marks: dict[str, float] = {}
    notes: list[str] = []

    def on_progress(event: TrainerEvent) -> None:
        if isinstance(event, Note):
            notes.append(event.text)
            return
        now = time.perf_counter()
        marks.setdefault("first", now)
        marks.setdefault("first_steps", event.steps)
        marks["last"], marks["last_steps"] = now, event.steps

    with tempfile.TemporaryDirectory() as tmp, ResourceSampler(interval=0.5, gpu=gpu) as sampler:
        home = LeagueHome(Path(tmp))
        home.create_dirs()
        registry = Registry.create(home.db_path)
        try:
            trainer = SelfPlayTrainer(cfg, home, registry, name="scale", on_progress=on_progress)
            started = time.perf_counter()
            result = trainer.run()
        finally:
            registry.close()
    profile = result.profile
    # From the first order to the last update: the workers' start (processes, arenas, networks) is left out.
    begun = profile.started or started
    wall = (profile.ended or time.perf_counter()) - begun
    rate = ((marks["last_steps"] - marks["first_steps"]) / (marks["last"] - marks["first"])
            if marks.get("last", 0) > marks.get("first", 0) else result.steps / wall)
    workers = []
    for phases in profile.workers:
        shares = {p: 100.0 * s / wall for p, s in phases.items()}
        shares["waiting"] = max(0.0, 100.0 - sum(shares.values()))
        workers.append({p: shares[p] for p in ordered(shares)})
    learner = {p: 100.0 * profile.learner.get(p, 0.0) / wall for p in LEARNER_PHASES}
    learner["other (snapshots, metrics)"] = max(0.0, 100.0 - sum(learner.values()))
    windows = gpu_windows(sampler.gpu_times, sampler.gpu_util, begun, begun + wall)
    return ScaleReport(backend=backend, pipelined=pipelining(cfg.runner.pipeline, backend, device, trainer.workers),
                       collectors=len(workers), agent_steps=result.steps, device=str(device), seconds=wall,
                       agent_steps_per_second=rate, workers=workers, learner=learner,
                       core_busy_percent=sampler.core_busy_percent, gpu_busy_windows=windows,
                       gpu_busy_mean=statistics.fmean(sampler.gpu_util) if sampler.gpu_util else None,
                       notes=notes + sampler.notes)


def gpu_windows(times: list[float], util: list[float], start: float, end: float,
                windows: int = GPU_WINDOWS) -> list[float | None]:
    """The mean of the samples in each of `windows` equal stretches of [start, end] (None: no sample there)."""
    width = (end - start) / windows if end > start else 0.0
    buckets: list[list[float]] = [[] for _ in range(windows)]
    for t, u in zip(times, util):
        if width and start <= t <= end:
            buckets[min(int((t - start) / width), windows - 1)].append(u)
    return [statistics.fmean(b) if b else None for b in buckets]
