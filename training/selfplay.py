"""The self-play loop: `league train --stage 1v1`.

    games (VecGame, shared memory) -> one batched forward for the learner's rows and one per
    opponent policy -> rollout buffer -> PPO update -> every `snapshot_every_steps` a checkpoint
    and a new registry version (parent = previous version) -> every K snapshots evaluation games
    that update the ratings (and, with promotion.during_training, an SPRT match against the
    champion that promotes the snapshot on H1: training.promotion).

A fixed share of the envs (`training.opponents.latest`, see training.opponents.lay_out) is
pure self-play: the learner drives both teams there, and every car's experience is training
data. In the other ("league") envs one team is the learner (blue in even envs, orange in odd
ones, so it learns both sides) and the other an opponent drawn from the league at every
snapshot (training.opponents).

`SelfPlayTrainer._train` is the loop, to be read top to bottom as CleanRL's ppo.py is; what
it carries from step to step is one `_Run`, so each helper takes the run and nothing else.
Progress goes to one callback as typed events (training.progress).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.checkpoint import check_trainable, load_checkpoint
from agents.loading import load_policy
from agents.networks import build_network
from agents.nn_policy import NetworkPolicy
from agents.policy import Policy
from arena.game import GamePlugins
from arena.vector import VecGame, default_workers
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.locks import claim
from league.names import check_name, check_run_name, split_version
from league.registry import Registry
from training.accel import learner_threads, make_accel, maybe_compile, torch_threads, update_threads
from training.episode_stats import EpisodeStats, headline
from training.evaluation import evaluate_snapshot
from training.metrics import MetricsLog
from training.opponents import LATEST, Layout, OpponentPool, draw_pool, lay_out
from training.ppo import PpoLearner
from training.progress import Note, OnProgress, UpdateDone, ignore
from training.promotion import promote_after_evaluation
from training.rewards import build_reward, rescale_shaping, shaping_scale
from training.seeds import derived_seed
from training.snapshots import next_version, run_versions, write_checkpoint

TIMED_PARTS = ("collection", "inference", "update", "snapshot", "evaluation")  # the time split of a run


@dataclass
class TrainResult:
    run: str
    versions: list[str]
    steps: int  # agent steps trained in total (including resumed ones)
    seconds: float
    interrupted: bool
    skipped_updates: int
    timing: dict[str, float]  # seconds spent in each of TIMED_PARTS


def obs_dim_of(games: VecGame) -> int:
    return games.single_observation_space.shape[0]


def pick_device(choice: str) -> torch.device:
    if choice == "cuda" and not torch.cuda.is_available():
        raise LeagueError("training.device is cuda, but no CUDA device is available.")
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


@dataclass
class _Run:
    """What one training call carries from step to step (CleanRL keeps it in the locals of one
    function; here the loop's helpers share it)."""

    games: VecGame
    layout: Layout
    learner: PpoLearner
    log: MetricsLog
    rng: np.random.Generator  # draws the opponents at every refresh
    budget: int | None  # agent steps to train in this call; None: the clock or Ctrl-C ends it
    started: float  # time.perf_counter() when the call started
    pool: OpponentPool
    stats: EpisodeStats
    obs: np.ndarray  # [N, obs_dim] the observation every row acts on next
    starts: np.ndarray  # [N] whether that observation begins an episode
    actions: np.ndarray  # [N] the step's actions, written in place
    teacher: Policy | None = None  # the kickstarting teacher until it has annealed away
    teacher_state: Any = None
    steps: int = 0  # agent steps trained in this call (a resumed run's earlier ones: start_steps)
    since_snapshot: int = 0
    snapshots: int = 0  # snapshots taken in this call
    timing: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TIMED_PARTS, 0.0))

    @contextmanager
    def timed(self, part: str) -> Iterator[None]:
        """Add the block's seconds to timing[part], the time split `league train` prints."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timing[part] += time.perf_counter() - t


class SelfPlayTrainer:
    def __init__(self, cfg: Config, home: LeagueHome, registry: Registry, name: str | None = None,
                 resume: str | None = None, on_progress: OnProgress | None = None,
                 init_from: str | None = None):
        """`resume`: continue a run from one of its snapshots, optimizer included. `init_from`: a new
        run whose first weights are another agent's (any stage: the observation layout is the same
        for every team size); that agent becomes its first version's parent, the optimizer starts fresh."""
        if resume and init_from:
            raise LeagueError("Give either a snapshot to resume or an agent to start from, not both.")
        for given, what in ((resume, "Agent name"), (init_from, "Agent name")):
            if given is not None:
                check_name(given, what)
        if name is not None:
            check_run_name(name)
        self.cfg, self.home, self.registry = cfg, home, registry
        self.on_progress = on_progress or ignore
        self.team_size = cfg.game.team_size
        self.device = pick_device(cfg.training.device)
        torch.manual_seed(cfg.seed)
        self.start_steps = 0
        optimizer_state = None
        self.learner_stats: dict[str, float] = {}  # the learner's running statistics, from a resumed checkpoint
        if resume:
            agent = registry.agent(resume)
            if agent.kind not in ("mlp", "lstm") or not split_version(agent.name):
                raise LeagueError(f"{resume!r} is not a training snapshot (expected a name like mlp-1v1-v3).")
            ckpt = load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)
            self.net = ckpt.net.train()
            optimizer_state = ckpt.optimizer_state
            self.learner_stats = (ckpt.meta.optimizer or {}).get("learner_stats") or {}
            self.start_steps = agent.steps_trained
            self.prefix = split_version(agent.name)[0]
            self._own(self.prefix)
            self.parent: str | None = agent.name
        else:
            self.parent = None
            if init_from:
                source = registry.agent(init_from)
                if source.kind not in ("mlp", "lstm") or not source.checkpoint_path:
                    raise LeagueError(f"{init_from!r} is a {source.kind} agent without trained weights; "
                                      "--from needs a trained agent (an mlp or lstm version).")
                ckpt = load_checkpoint(home.root / source.checkpoint_path, expected_sha256=source.checkpoint_sha256)
                self.start_steps, self.parent = source.steps_trained, source.name
            self.prefix = name or f"{ckpt.net.config.kind if init_from else cfg.policy.kind}-{cfg.stage}"
            self._own(self.prefix)
            existing = run_versions(registry, self.prefix)
            if existing:
                raise LeagueError(f"Run {self.prefix!r} already has versions (latest {existing[-1]!r}); "
                                  f"resume {existing[-1]!r} to continue it, or give the new run another name.")
            if self.prefix in registry.names():
                raise LeagueError(f"An agent named {self.prefix!r} exists; give the run another name.")
            if not init_from:
                check_trainable(cfg.policy)
            self.net = ckpt.net.train() if init_from else build_network(cfg.policy)
        self.versions = run_versions(registry, self.prefix)
        self.net.to(self.device)
        self.workers = cfg.runner.workers or default_workers()
        # Leave the cores to the game workers while they step (2 threads here made inference and
        # collection slower); the update, when they wait, takes every core (training.update_threads).
        torch.set_num_threads(learner_threads(cfg.training, self.workers))
        self.optimizer_state = optimizer_state

    def _own(self, run: str) -> None:
        """Own the run's name until this trainer is done (or the process ends, however it ends):
        a second command on the same run fails now, before it trains, naming the holder."""
        self.ownership = claim(self.home.root, "run", run, f"Run {run!r}")

    # ------------------------------------------------------------------ the loop

    def run(self) -> TrainResult:
        """Train to the budget (or Ctrl-C); the run's name is released when it returns or fails."""
        try:
            log = MetricsLog(self.home.runs / self.prefix, {"run": self.prefix, "stage": self.cfg.stage,
                                                             "seed": self.cfg.seed, "resumed_from": self.parent,
                                                             "config": self.cfg.to_dict()})
            try:
                return self._train(log)
            finally:
                log.close()
        finally:
            self.ownership.release()

    def _train(self, log: MetricsLog) -> TrainResult:
        cfg, tcfg = self.cfg, self.cfg.training
        plugins = GamePlugins(reward_fn=build_reward(cfg.rewards))
        started = time.perf_counter()
        deadline = started + tcfg.minutes * 60 if tcfg.minutes else None
        interrupted = False
        with VecGame(cfg.game, cfg.runner, mode="training", seed=cfg.seed, workers=self.workers,
                     plugins=plugins) as games:
            run = self._start(games, log, started)
            try:
                while (run.budget is None or run.steps < run.budget) and (
                        deadline is None or time.perf_counter() < deadline):
                    self._step(run)
                    if run.learner.buffer.full:
                        self._update(run)
                    if run.since_snapshot >= tcfg.snapshot_every_steps and not run.learner.buffer.t:
                        self._after_snapshot(run)
            except KeyboardInterrupt:
                interrupted = True  # Ctrl-C: the final snapshot below keeps what was trained
            if run.since_snapshot or not self.versions:
                with run.timed("snapshot"):
                    self._record_payoff(run)
                    self._snapshot(run.learner, self.start_steps + run.steps)
        return TrainResult(self.prefix, self.versions, self.start_steps + run.steps, time.perf_counter() - started,
                           interrupted, run.learner.skipped_updates, run.timing)

    def _start(self, games: VecGame, log: MetricsLog, started: float) -> _Run:
        """Lay the envs out, build the learner (and the kickstarting teacher), draw the first
        opponents and reset the games."""
        cfg, tcfg = self.cfg, self.cfg.training
        layout = lay_out(games, tcfg.opponents, self.team_size)
        slots = len(layout.learner_rows)
        budget = tcfg.steps or None
        total_updates = max(1, budget // (slots * cfg.ppo.steps_per_env)) if budget else None
        accel = make_accel(self.device, tcfg.amp, tcfg.pin_memory)
        model = maybe_compile(self.net, tcfg.compile, torch.zeros(2, obs_dim_of(games), device=self.device),
                              accel.notes)
        for note in accel.notes:
            self.on_progress(Note(note))
        if cfg.promotion.during_training and not (tcfg.eval_every_snapshots and tcfg.eval_games):
            self.on_progress(Note("promotion.during_training is on but evaluation is off (training.eval_games or "
                                  "eval_every_snapshots is 0): the promotion test follows an evaluation, so no "
                                  "snapshot will be tested"))
        teacher = self._teacher()
        teacher_state = teacher.initial_state(slots) if teacher else None
        if teacher is not None:
            self.on_progress(Note(f"kickstarting from {tcfg.kickstart.teacher} until the network has trained "
                                  f"{tcfg.kickstart.steps:,} steps (training.kickstart.teacher= to turn off)"))
        learner = PpoLearner(model, cfg.ppo, slots, obs_dim=obs_dim_of(games), device=self.device,
                             total_updates=total_updates, seed=cfg.seed, accel=accel, teacher=teacher is not None)
        if self.optimizer_state is not None:
            learner.optimizer.load_state_dict(self.optimizer_state)
        if learner.return_scale is not None and self.learner_stats:
            learner.return_scale.load(self.learner_stats)
        rng = np.random.default_rng(cfg.seed)
        pool = self._draw_pool(layout, rng, refresh=0)
        obs = games.reset(seed=cfg.seed)
        stats = EpisodeStats(games.num_envs, layout.learner_envs, layout.league_envs, games.teams)
        stats.set_pool(pool)
        return _Run(games, layout, learner, log, rng, budget, started, pool, stats, obs=obs,
                    starts=games.info.episode_start.copy(), actions=np.zeros(games.num_agents, dtype=np.int64),
                    teacher=teacher, teacher_state=teacher_state)

    def _step(self, run: _Run) -> None:
        """One step of every game: the learner's batched actions and each opponent's, then the runner's step."""
        rows = run.layout.learner_rows
        with run.timed("inference"):
            teacher_actions = self._teacher_actions(run)
            run.actions[rows] = run.learner.act(torch.from_numpy(run.obs[rows]),
                                                torch.from_numpy(run.starts[rows].astype(np.float32)),
                                                teacher_actions).cpu().numpy()
            for g in run.pool.groups:
                run.actions[g.rows], g.state = g.policy.act(run.obs[g.rows], g.state, run.starts[g.rows])
        with run.timed("collection"):
            run.obs, rewards, _, _, info = run.games.step(run.actions)
        run.learner.observe_rewards(torch.from_numpy(self._learner_rewards(run, rewards[rows], info)))
        run.starts = info.episode_start.copy()
        run.stats.step(rewards[rows], info)
        run.steps += len(rows)
        run.since_snapshot += len(rows)

    def _learner_rewards(self, run: _Run, rewards: np.ndarray, info) -> np.ndarray:
        """The learner rows' rewards, the dense terms faded by rewards.shaping_anneal_steps."""
        rcfg = self.cfg.rewards
        scale = shaping_scale(self.start_steps + run.steps, rcfg.shaping_anneal_steps, rcfg.shaping_floor)
        if rcfg.mode != "dense" or scale == 1.0:
            return rewards
        rows = run.layout.learner_rows
        return rescale_shaping(rewards, info.goals[run.layout.learner_envs], run.games.teams[rows],
                               rcfg.weights.goal, scale)

    def _teacher_actions(self, run: _Run) -> torch.Tensor | None:
        """The kickstarting teacher's actions for the learner rows, while its weight has not annealed to 0."""
        if run.teacher is None:
            return None
        kickstart = self.cfg.training.kickstart
        # Over the network's first kickstart.steps of training: a resumed run goes on where it
        # stopped, and a run --from a trained agent starts past the anneal.
        done = (self.start_steps + run.steps) / kickstart.steps
        run.learner.kickstart_weight = kickstart.weight * max(0.0, 1 - done)
        if run.learner.kickstart_weight == 0:
            run.teacher = None  # annealed away: PPO alone from here on
            return None
        rows = run.layout.learner_rows
        actions, run.teacher_state = run.teacher.act(run.obs[rows], run.teacher_state, run.starts[rows],
                                                     deterministic=True)
        return torch.from_numpy(actions)

    def _update(self, run: _Run) -> None:
        """A PPO update on the full rollout buffer, then its metrics row: logged, kept, reported."""
        rows = run.layout.learner_rows
        with run.timed("update"), torch_threads(update_threads(self.cfg.training)):
            update = run.learner.update(torch.from_numpy(run.obs[rows]),
                                        torch.from_numpy(run.starts[rows].astype(np.float32)))
        elapsed = time.perf_counter() - run.started
        row = {**update.as_log(), **run.stats.flush(), "charts/steps_per_second": run.steps / elapsed,
               "charts/skipped_updates_total": run.learner.skipped_updates}
        rcfg = self.cfg.rewards
        if rcfg.mode == "dense" and rcfg.shaping_anneal_steps:
            row["charts/shaping_scale"] = shaping_scale(self.start_steps + run.steps, rcfg.shaping_anneal_steps,
                                                        rcfg.shaping_floor)
        self._record_metrics(run, row, kept=headline(row))
        self.on_progress(UpdateDone(run.steps, run.budget, elapsed, row))

    def _after_snapshot(self, run: _Run) -> None:
        """Every snapshot_every_steps: payoff, snapshot, every K snapshots an evaluation, new opponents."""
        tcfg = self.cfg.training
        run.since_snapshot = 0
        run.snapshots += 1
        with run.timed("snapshot"):
            self._record_payoff(run)
            name = self._snapshot(run.learner, self.start_steps + run.steps)
        if tcfg.eval_every_snapshots and tcfg.eval_games and run.snapshots % tcfg.eval_every_snapshots == 0:
            with run.timed("evaluation"):
                rates = self._evaluate(name, derived_seed(self.cfg.seed, "evaluation", run.snapshots))
            row = {f"eval/win_rate/{k}": v for k, v in rates.items()}
            row["eval/elo"] = self.registry.rating(name, self.team_size).elo
            self._record_metrics(run, row, kept=row)
            if self.cfg.promotion.during_training:
                with run.timed("evaluation"):  # the promotion test is part of the evaluation step
                    self._promote(run, name, rates)
        run.pool = self._draw_pool(run.layout, run.rng, refresh=run.snapshots)
        run.stats.set_pool(run.pool)

    def _evaluate(self, name: str, seed: int) -> dict[str, float]:
        """Snapshot `name` (the current weights) plays the evaluation games; its score rate per opponent."""
        tcfg = self.cfg.training
        policy = NetworkPolicy(self.net, device=self.device, name=name)
        rates = evaluate_snapshot(self.registry, name, policy, self.team_size, tcfg.eval_games, tcfg.eval_game_seconds,
                                  seed, self.home.root, self.cfg.game.tick_skip, workers=self.workers)
        self.net.train()  # NetworkPolicy put the shared network in eval mode
        return rates

    def _promote(self, run: _Run, name: str, rates: dict[str, float]) -> None:
        """promotion.during_training: snapshot `name` just evaluated plays an SPRT match against the
        stage's champion when its evaluation was promising, and is promoted on H1 (training.promotion)."""
        attempt = promote_after_evaluation(self.home, self.registry, self.cfg, name, rates,
                                           derived_seed(self.cfg.seed, "promotion", run.snapshots), self.workers)
        self.on_progress(Note(attempt.note))
        if attempt.metrics():
            self._record_metrics(run, attempt.metrics(), kept=attempt.metrics())

    def _record_metrics(self, run: _Run, row: dict[str, float], kept: dict[str, float]) -> None:
        """`row` into the run's metrics log, `kept` of it into the registry (the league's view of runs)."""
        step = self.start_steps + run.steps
        run.log.write(step, row)
        self.registry.record_run_metrics(self.prefix, self.team_size, step, kept)

    # ------------------------------------------------------------------ teacher and opponents

    def _teacher(self) -> Policy | None:
        """The kickstarting teacher (training.kickstart.teacher), or None."""
        name = self.cfg.training.kickstart.teacher
        if not name or self.start_steps >= self.cfg.training.kickstart.steps:
            return None  # off, or the network has trained past the anneal (resumed, or --from a trained agent)
        agent = self.registry.agent(name)
        if agent.status == "retired":
            raise LeagueError(f"Kickstart teacher {name!r} is retired; choose an active agent, or train without "
                              "one: --set training.kickstart.teacher=")
        return load_policy(agent, home_root=self.home.root)

    def _draw_pool(self, layout: Layout, rng: np.random.Generator, refresh: int) -> OpponentPool:
        """The opponents of the league envs until the next snapshot (`refresh`: snapshots taken so far)."""
        return draw_pool(self.registry, self.cfg.training, self.prefix, self.team_size, self.net, self.versions,
                         layout.opponent_rows, rng, self.home.root, derived_seed(self.cfg.seed, "opponents", refresh))

    def _record_payoff(self, run: _Run) -> None:
        """The learner's results against each opponent since the last snapshot, into the payoff table (PFSP)."""
        results: dict[str, tuple[float, float, float]] = {}
        for name, w, d, n in run.stats.results():
            if name == LATEST:
                if not self.versions:
                    continue  # the frozen latest weights have no name before the first snapshot
                name = self.versions[-1]
            if n > 0:
                prev = results.get(name, (0, 0, 0))
                results[name] = (prev[0] + w, prev[1] + d, prev[2] + n)
        if results:
            self.registry.record_payoff(self.prefix, self.team_size, results, decay=self.cfg.training.payoff_decay)
        run.stats.reset_payoff()

    # ------------------------------------------------------------------ snapshots

    def _snapshot(self, learner: PpoLearner, steps: int) -> str:
        """Checkpoint + registry version. A snapshot that cannot be written (weights gone NaN, disk
        full) stops the run with the reason; the previous snapshots are kept as they are."""
        name = next_version(self.prefix, self.versions)
        try:
            rel, sha = write_checkpoint(self.home, name, self.net, learner, steps, self.cfg.to_dict())
        except (LeagueError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            kept = f"the last snapshot, {self.versions[-1]}, is kept" if self.versions else "no snapshot was kept"
            raise LeagueError(f"Snapshot {name} was not written ({why.rstrip('.')}); training stopped and "
                              f"{kept}.") from None
        self.registry.add_agent(name, self.net.config.kind, self.team_size, parent=self.parent,
                                checkpoint_path=str(rel), checkpoint_sha256=sha, config=self.cfg.to_dict(),
                                steps_trained=steps)
        self.parent = name
        self.versions.append(name)
        return name
