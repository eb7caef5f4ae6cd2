"""End-to-end training throughput (`league bench train`) and where the time goes, from one run.

Trains in a throwaway league home with the settings the issue names (1v1, tick skip 8, actor
and critic [256, 256, 256], 50,000 agent steps per iteration, one epoch, one minibatch, pure
self-play so every car's step is training data, as rlgym-ppo counts it, and no kickstarting
teacher, so it times PPO alone), once per collection backend asked for (BACKENDS: game worker
processes with the forwards in the learner's process (`central`), pipelining off, the same
pipelined, rollout worker processes with their own forwards (`rollout`, pipelining off), Ray
rollout workers on a local instance with as many workers as game workers), and, in the same run on the same workers, measures the
collection-only rate (random actions, no learner) as the reference the learner should hide
behind.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena.engine.placement import Backend, Placement
from arena.engine.cores import workers_or_default
from arena.engine.vector import VecGame, envs_per_worker_of
from league.config import BACKEND_RENAMED, load_config
from league.config_tree import renamed_note
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry
from training.progress import Note, TrainerEvent
from training.selfplay import SelfPlayTrainer

# Each backend `league bench train` compares: a runner.backend (arena.engine.placement.Backend) and
# whether it pipelines; a pipelined one is named for its backend and `-pipelined`, except Ray's,
# which always pipelines.
BACKENDS = {
    "central": (Backend.CENTRAL, "never"),
    "central-pipelined": (Backend.CENTRAL, "always"),
    "rollout": (Backend.ROLLOUT, "never"),
    "ray": (Backend.RAY, "always"),
}


def backend_settings(name: str) -> list[str]:
    """The config keys that choose bench backend `name`."""
    backend, pipeline = BACKENDS[name]
    return [f"runner.backend={backend}", f"runner.pipeline={pipeline}"]
# runner.backend's old names (league.config's one table), and the bench's own old name of its pipelined variant.
RENAMED = {**BACKEND_RENAMED, "pipelined": "central-pipelined"}

BENCH_SETTINGS = [
    "policy.actor_sizes=[256, 256, 256]", "policy.critic_sizes=[256, 256, 256]", "ppo.epochs=1",
    "training.eval_games=0", "training.snapshot_every_steps=100000000",
    "training.opponents.latest=1", "training.opponents.past=0", "training.opponents.pfsp=0",
    "training.opponents.rule=0", "training.opponents.random=0", "training.kickstart.teacher=",
]


@dataclass(frozen=True)
class TimeSplit:
    """Where a training run's time went, as fractions of collection + inference + update."""

    collection: float
    inference: float
    update: float

    def parts(self) -> dict[str, float]:
        """{part: fraction}, in the order above."""
        return {"collection": self.collection, "inference": self.inference, "update": self.update}


@dataclass(frozen=True)
class TrainBench:
    agent_steps_per_second: float  # end to end, updates included, after the first (warm-up) iteration
    collection_only_steps_per_second: float  # the same runner, random actions, no learner
    share: TimeSplit
    iterations: int
    batch: int  # agent steps per iteration
    backends: dict[str, tuple[float, TimeSplit]] | None = None  # each backend's rate and split; the first is above
    update_rows_per_second: float | None = None  # the PPO update alone: samples a second through one epoch
    epochs: int = 1

    @property
    def limit_steps_per_second(self) -> float | None:
        """The first backend's limit on these cores, its parts measured alone in this run and done in sequence: the
        collection alone (random actions), the run's own inference per step, and the update alone over its epochs.
        Overlap (pipelining, rollout workers' own forwards) can pass it; a loop that adds waits falls short."""
        if not self.update_rows_per_second:
            return None
        inference = self.share.inference / self.agent_steps_per_second
        return 1.0 / (1.0 / self.collection_only_steps_per_second + inference
                      + self.epochs / self.update_rows_per_second)

    @property
    def ratio_to_limit(self) -> float | None:
        """The first backend's end-to-end rate over its limit (issue 59's target: at least 0.8)."""
        limit = self.limit_steps_per_second
        return None if limit is None else self.agent_steps_per_second / limit

    @property
    def ratio(self) -> float:
        """End to end / collection only."""
        return self.agent_steps_per_second / self.collection_only_steps_per_second

    def against(self, backend: str, reference: str = "central") -> float | None:
        """One backend's end-to-end rate over another's, both measured here (None if either was not)."""
        rates = self.backends or {}
        if backend not in rates or reference not in rates:
            return None
        return rates[backend][0] / rates[reference][0]


def collection_rate(cfg, seconds: float) -> float:
    """Agent steps/s of the same runner with random actions and no learner."""
    rng = np.random.default_rng(0)
    with VecGame(cfg.game, cfg.runner, mode="training", seed=cfg.seed, placement=Placement.PROCESSES) as games:
        games.reset()
        actions = rng.integers(0, 90, size=(64, games.num_agents))
        for k in range(20):
            games.step(actions[k % 64])
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            games.step(actions[steps % 64])
            steps += 1
        return steps * games.num_agents / (time.perf_counter() - start)


def bench_config(stage: str = "1v1", iterations: int = 4, batch: int = 50_000, workers: int | None = None,
                 envs_per_worker: int | None = None, extra: list[str] | None = None, user_file: Path | None = None):
    """The benchmark's config: BENCH_SETTINGS, then `extra`, sized to about `batch` agent steps per iteration."""
    sets = list(BENCH_SETTINGS) + (extra or [])
    if workers is not None:
        sets.append(f"runner.workers={workers}")
    if envs_per_worker is not None:
        sets.append(f"runner.envs_per_worker={envs_per_worker}")
    cfg = load_config(stage=stage, user_file=user_file, sets=sets)
    n_workers, envs = workers_or_default(cfg.runner.workers), envs_per_worker_of(cfg.runner)
    n_agents = n_workers * envs * 2 * cfg.game.team_size
    steps_per_env = max(1, round(batch / n_agents))
    return load_config(stage=stage, user_file=user_file,
                       sets=sets + [f"runner.envs_per_worker={envs}",  # every backend the same arenas
                                    f"ppo.steps_per_env={steps_per_env}",
                                    f"ppo.minibatch_size={steps_per_env * n_agents}",
                                    f"training.steps={(iterations + 1) * steps_per_env * n_agents}"])


def training_rate(cfg, notes: list[str] | None = None,
                  update_spans: list[tuple[float, float]] | None = None) -> tuple[float, TimeSplit]:
    """Train `cfg` in a throwaway league home; (agent steps/s after the first iteration, time split).

    The fallback notes the trainer gives (no CUDA for AMP, compile failed, ...) go to `notes`;
    each PPO update's (start, end) in time.perf_counter() goes to `update_spans`.
    """
    with tempfile.TemporaryDirectory() as tmp:
        home = LeagueHome(Path(tmp))
        home.create_dirs()
        registry = Registry.create(home.db_path)
        warm = {"t": None, "steps": 0}

        def on_progress(event: TrainerEvent) -> None:
            if isinstance(event, Note):  # a fallback taken
                if notes is not None:
                    notes.append(event.text)
                return
            if update_spans is not None and "charts/update_seconds" in event.metrics:
                now = time.perf_counter()
                update_spans.append((now - event.metrics["charts/update_seconds"], now))
            if warm["t"] is None:  # the first iteration warms up (process start, allocations)
                warm["t"], warm["steps"] = time.perf_counter(), event.steps
            warm["last_t"], warm["last_steps"] = time.perf_counter(), event.steps

        result = SelfPlayTrainer(cfg, home, registry, name="bench", on_progress=on_progress).run()
        registry.close()
    rate = (warm["last_steps"] - warm["steps"]) / (warm["last_t"] - warm["t"])
    parts = ("collection", "inference", "update")
    total = sum(result.timing[k] for k in parts) or 1.0
    return rate, TimeSplit(*(result.timing[k] / total for k in parts))


def bench_train(stage: str = "1v1", iterations: int = 4, batch: int = 50_000, workers: int | None = None,
                envs_per_worker: int | None = None, extra: list[str] | None = None,
                backends: tuple[str, ...] = ("central",)) -> TrainBench:
    """Each backend's end-to-end rate and time split, then the collection-only reference, in one run."""
    for old in [b for b in backends if b in RENAMED]:
        renamed_note("--backends", "backend", old, RENAMED[old])
    backends = tuple(RENAMED.get(b, b) for b in backends)
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown or not backends:
        raise LeagueError(f"Unknown backend {unknown[0] if unknown else ''!r}; expected some of {', '.join(BACKENDS)}.")
    measured: dict[str, tuple[float, TimeSplit]] = {}
    first = None
    for backend in backends:
        cfg = bench_config(stage, iterations, batch, workers, envs_per_worker, (extra or []) + backend_settings(backend))
        if BACKENDS[backend][0] is Backend.RAY:  # as many one-core rollout workers as game workers, each with as many arenas
            cfg = bench_config(stage, iterations, batch, workers, envs_per_worker, (extra or []) + backend_settings(backend)
                               + [f"runner.rollout_workers={resolved_workers(cfg)}"])
        measured[backend] = training_rate(cfg)
        first = first or cfg
    reference = collection_rate(cfg, seconds=8.0)
    rate, share = measured[backends[0]]
    update = update_rate(first)
    return TrainBench(rate, reference, share, iterations, cfg.ppo.minibatch_size, measured, update,
                      first.ppo.epochs)


def update_rate(cfg) -> float:
    """The PPO update alone (training.measure.diagnose.measure_update: the config's network, minibatch, AMP and
    threads, on a buffer of random experience): samples a second through one epoch."""
    from training.measure.diagnose import MeasureTimes, measure_update

    return measure_update(cfg, MeasureTimes(update_repeats=2), []).rows_per_second


def resolved_workers(cfg) -> int:
    return workers_or_default(cfg.runner.workers)
