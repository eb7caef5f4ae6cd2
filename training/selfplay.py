"""The self-play loop: `league train --stage 1v1`.

    collection (training.collection: games, one batched forward for the learner's rows and one
    per opponent policy) -> a rollout segment -> PPO update -> every `snapshot_every_steps` a checkpoint
    and a new registry version (parent = previous version) -> every K snapshots evaluation games
    that update the ratings (and, with promotion.during_training, an SPRT match against the
    champion that promotes the snapshot on H1: arena.promotion).

A fixed share of the envs (`training.opponents.latest`, see training.opponents.lay_out) is
pure self-play: the learner drives both teams there, and every car's experience is training
data. In the other ("league") envs one team is the learner (blue in even envs, orange in odd
ones, so it learns both sides) and the other an opponent drawn from the league at every
snapshot (training.opponents).

Collection runs in this process, in a thread beside the update (pipelined: the next round is
played while the learner updates on this one, a policy lag of one update), or in Ray rollout
workers (`runner.backend`, `runner.pipeline`); the loop submits rounds and trains on what comes
back, the same for each. `SelfPlayTrainer._train` is the loop, to be read top to bottom as
CleanRL's ppo.py is; what it carries from round to round is one `_Run`, so each helper takes
the run and nothing else. What a call spends, and against whom, is handed to `run` as typed
values (`run(budget, target=..., pool=...)`); the teacher's part in each update is one schedule
value (training.guide: a Kickstart, or the DistillPhase) asked once per round and once per update.
Progress goes to one callback as typed events (training.progress).
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel

from agents.checkpoint import check_trainable, load_checkpoint
from agents.networks import build_network
from arena.engine.game import GamePlugins
from arena.engine.vector import VecGame
from league.config import Config, OpponentMix, stage_of
from league.errors import LeagueError
from league.home import LeagueHome
from league.locks import claim
from league.names import check_name, check_run_name, split_version
from league.registry import PayoffRecord, Registry
from training.averaging import moving_average
from training.accel import learner_threads, make_accel, maybe_compile, torch_threads, update_threads
from training.budget import Budget, Clock, clock_round
from training.collection import (
    Collection,
    LocalCollection,
    Order,
    Round,
    collection_backend,
    collection_workers,
    pipelining,
)
from training.collector import Collector, training_spec
from training.guide import NO_GUIDE, Guide, UpdatePlan
from training.episode_stats import headline
from training.judge import SnapshotJudge, cpu_minutes
from training.metrics import CPU_MINUTES, MetricsLog, logged_cpu_minutes, set_aside_stopped
from training.opponents import LATEST, draw_picks, pool_specs
from training.panel import panel_members
from training.ppo import PpoLearner, TrainingDiverged
from training.worker_collection import WorkerCollection
from training.profile import Profile
from training.progress import Note, OnProgress, UpdateDone, ignore
from training.rewards import build_reward, shaping_scale
from training.seeds import derived_seed
from training.snapshots import next_version, write_checkpoint
from training.teacher import Student, Teacher, build_teacher

TIMED_PARTS = ("collection", "inference", "update", "snapshot", "evaluation")  # the time split of a run


@dataclass
class TrainResult:
    run: str
    versions: list[str]  # the run's, oldest first: a resumed run's earlier versions too
    steps: int  # agent steps trained in total (including resumed ones)
    seconds: float
    interrupted: bool
    skipped_updates: int
    timing: dict[str, float]  # seconds spent in each of TIMED_PARTS
    lost_steps: int = 0  # agent steps played by Ray rollout workers that died before handing them over
    profile: Profile | None = None  # where the learner's and each collector's time went (the scale profile)
    champion: str | None = None  # the stage's champion when the run ended (promotion.during_training may name one of its own)
    made: int = 0  # how many of `versions`, the last ones, this call made

    def versions_said(self) -> str:
        """The versions this call made, as a user reads them: each one, or the first and last of many."""
        made = self.versions[len(self.versions) - self.made:] if self.made else []
        if len(made) > 6:
            return f"{made[0]} .. {made[-1]} ({len(made)} versions)"
        return ", ".join(made) or "none"


def best_response_config(cfg: Config, registry: Registry, target: str | None = None) -> Config:
    """`cfg` for a best response to `target` (default training.best_response_to): that agent (it must exist
    and play the stage's team size) in every env, so the mix has no self-play share and no other source."""
    target = registry.agent_store.get(target or cfg.training.best_response_to)  # one sentence if there is none
    if not target.plays(cfg.game.team_size):
        raise LeagueError(f"{target.name!r} does not play {cfg.stage}; a best response trains against an agent at its "
                          "own team size.")
    # Every env a league env; a community target's share is "community", so the games publish the state it reads.
    bot = target.kind == "community"
    mix = OpponentMix(latest=0.0, past=0.0, pfsp=0.0, rule=float(not bot), random=0.0, community=float(bot))
    return dataclasses.replace(cfg, training=dataclasses.replace(cfg.training, opponents=mix,
                                                                 best_response_to=target.name))


def pick_device(choice: str) -> torch.device:
    if choice == "cuda" and not torch.cuda.is_available():
        raise LeagueError("training.device is cuda, but no CUDA device is available.")
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


@dataclass
class _Run:
    """What one training call carries from round to round (CleanRL keeps it in the locals of one
    function; here the loop's helpers share it)."""

    collection: Collection
    learner: PpoLearner
    log: MetricsLog
    rng: np.random.Generator  # draws the opponents at every refresh
    clock: Clock  # this call's budget, started with the call
    teaching: bool  # whether the teacher's labels are still collected (kickstarting, distilling, guiding)
    teacher: Teacher | None = None  # its part in each update (a Kickstart or the DistillPhase), asked each round
    payoff: dict[str, PayoffRecord] = field(default_factory=dict)  # opponent -> results since the snapshot
    steps: int = 0  # agent steps trained in this call (a resumed run's earlier ones: start_steps)
    since_snapshot: int = 0
    snapshots: int = 0  # snapshots taken in this call
    lost_steps: int = 0  # agent steps dead rollout workers took with them
    timing: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TIMED_PARTS, 0.0))
    profile: Profile = field(default_factory=Profile)
    paced_from: tuple[float, int] | None = None  # (time, steps) when the first round was trained on
    average: AveragedModel | None = None  # the weights' moving average snapshots are taken from (training.ema_decay)

    @contextmanager
    def timed(self, part: str, phase: str | None = None) -> Iterator[None]:
        """Add the block's seconds to timing[part], the time split `league train` prints (and to the
        learner's `phase` in the profile)."""
        t = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - t
            self.timing[part] += seconds
            if phase is not None:
                self.profile.learner[phase] += seconds

    @contextmanager
    def phase(self, phase: str) -> Iterator[None]:
        """Add the block's seconds to the learner's `phase` in the profile only."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.profile.learner[phase] += time.perf_counter() - t

    def guide(self, steps: int) -> Guide:
        """The teacher's part after `steps` of the network's training: the one answer to whether it still teaches."""
        return self.teacher.guide(steps) if self.teacher is not None else NO_GUIDE

    def going_on(self, steps_ahead: int = 0) -> bool:
        """Whether to train on: the budget not spent (counting `steps_ahead` already under way)."""
        return not self.clock.done(self.steps + steps_ahead)

    def pace(self) -> float | None:
        """Agent steps trained a second since the first round was trained on (None before a second one is): the
        start (workers starting, the first games built) is left out, or a short budget would read it as slowness."""
        if self.paced_from is None or self.steps == self.paced_from[1]:
            return None
        since, steps = self.paced_from
        return (self.steps - steps) / max(time.perf_counter() - since, 1e-6)


class SelfPlayTrainer:
    def __init__(self, cfg: Config, home: LeagueHome, registry: Registry, name: str | None = None,
                 resume: str | None = None, on_progress: OnProgress | None = None,
                 init_from: str | None = None, snapshot_status: str = "active"):
        """`resume`: continue a run from one of its snapshots, optimizer included. `init_from`: a new
        run whose first weights are another agent's (any stage: the observation layout is the same
        for every team size); that agent becomes its first version's parent, the optimizer starts fresh.
        `cfg.seed` seeds this process's torch (a learner owns its process: training.roles).
        `snapshot_status`: retired registers every snapshot retired in the row that adds it, so no mix
        or tournament ever picks one up, however the process ends (a probe's)."""
        if resume and init_from:
            raise LeagueError("Give either a snapshot to resume or an agent to start from, not both.")
        for given, what in ((resume, "Agent name"), (init_from, "Agent name")):
            if given is not None:
                check_name(given, what)
        if name is not None:
            check_run_name(name)
        if cfg.training.best_response_to:
            cfg = best_response_config(cfg, registry)
        self.cfg, self.home, self.registry = cfg, home, registry
        self.on_progress = on_progress or ignore
        self.pool: Callable[[], list[str]] | None = None
        self.snapshot_status = snapshot_status
        self.team_size = cfg.game.team_size
        self.device = pick_device(cfg.training.device)
        torch.manual_seed(cfg.seed)
        self.start_steps = 0
        optimizer_state = None
        self.learner_stats: dict[str, float] = {}  # the learner's running statistics, from a resumed checkpoint
        if resume:
            agent = registry.agent_store.get(resume)
            if agent.kind not in ("mlp", "lstm") or not split_version(agent.name):
                raise LeagueError(f"{resume!r} is not a training snapshot (expected a name like mlp-1v1-v3).")
            if agent.team_size is not None and agent.team_size != self.team_size:
                own = stage_of(agent.team_size)
                raise LeagueError(f"{resume!r} is a {own} snapshot and --resume goes on with its run at {own}; to train "
                                  f"it at {cfg.stage}, start a new run from it: --stage {cfg.stage} --from {resume} "
                                  "--name NEW.")
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
                source = registry.agent_store.get(init_from)
                if (problem := source.not_a_start()) is not None:
                    raise LeagueError(problem)
                ckpt = load_checkpoint(home.root / source.checkpoint_path, expected_sha256=source.checkpoint_sha256)
                self.start_steps, self.parent = source.steps_trained, source.name
            self.prefix = name or f"{ckpt.net.config.kind if init_from else cfg.policy.kind}-{cfg.stage}"
            self._own(self.prefix)
            existing = registry.agent_store.run_versions(self.prefix)
            if existing:
                raise LeagueError(f"Run {self.prefix!r} already has versions (latest {existing[-1]!r}); "
                                  f"resume {existing[-1]!r} to continue it, or give the new run another name.")
            if self.prefix in registry.agent_store.names():
                raise LeagueError(f"An agent named {self.prefix!r} exists; give the run another name.")
            aside = set_aside_stopped(home.runs / self.prefix)  # a run killed before its first snapshot
            if aside is not None:
                self.on_progress(Note(f"run {self.prefix} was stopped before its first snapshot, so nothing of it can "
                                      f"be resumed; it starts again, its earlier log kept in {aside}"))
            if not init_from:
                check_trainable(cfg.policy)
            self.net = ckpt.net.train() if init_from else build_network(cfg.policy)
        self.versions = registry.agent_store.run_versions(self.prefix)
        self.earlier_versions = len(self.versions)  # a resumed run's, before this call
        self.earlier_cpu_minutes = logged_cpu_minutes(home.runs / self.prefix)  # a resumed run's earlier calls
        self.net.to(self.device)
        self.backend = collection_backend(cfg.runner.backend)
        self.workers = collection_workers(cfg.runner.workers, self.backend, self.device)
        self.pipelined = pipelining(cfg.runner.pipeline, self.backend, self.device, self.workers)
        # Leave the cores to the game workers while they step (2 threads here made inference and
        # collection slower); the update takes every core when they wait, the cores they leave when
        # they play beside it (pipelined; training.update_threads).
        torch.set_num_threads(learner_threads(cfg.training, self.workers))
        self.optimizer_state = optimizer_state
        self.judge = SnapshotJudge(cfg, registry, home, self.device, self.workers, self.prefix,
                                   earlier_cpu_minutes=self.earlier_cpu_minutes)
        # Built once, checked now: a teacher that cannot teach is refused before anything is trained.
        self.teacher = build_teacher(cfg, registry, home, Student(self.net.space, self.start_steps, self.parent),
                                     self.learner_stats, lambda text: self.on_progress(Note(text)))

    def _own(self, run: str) -> None:
        """Own the run's name until this trainer is done (or the process ends, however it ends):
        a second command on the same run fails now, before it trains, naming the holder."""
        self.ownership = claim(self.home.root, "run", run, f"Run {run!r}")

    # ------------------------------------------------------------------ the loop

    def run(self, budget: Budget | None = None, *, target: str | None = None,
            pool: Callable[[], list[str]] | None = None) -> TrainResult:
        """Train to `budget` (or Ctrl-C); the run's name is released when it returns or fails.

        `budget`: what this call spends (None: the config's training.steps and training.minutes, for a caller
        whose config holds its budget). `target`: train a best response to this agent, every env playing it
        (default training.best_response_to). `pool`: read at every draw of opponents, other agents that join
        the run's earlier versions as candidates of the mix's past and PFSP shares (league roles: the
        exploiters' snapshots). The config recorded with the run and its snapshots holds the call's budget
        and target."""
        try:
            budget = Budget.from_config(self.cfg.training) if budget is None else budget
            self.cfg = self._call_config(budget, target)
            self.pool = pool
            log = MetricsLog(self.home.runs / self.prefix, {"run": self.prefix, "stage": self.cfg.stage,
                                                             "seed": self.cfg.seed, "resumed_from": self.parent,
                                                             "config": self.cfg.to_dict()})
            try:
                return self._train(log, budget)
            finally:
                log.close()
        finally:
            self.ownership.release()

    def _call_config(self, budget: Budget, target: str | None) -> Config:
        """The config of this call, as recorded with the run and its snapshots: the call's budget (and target)
        in place of the config's."""
        cfg = self.cfg
        if target:
            cfg = best_response_config(cfg, self.registry, target)
        return dataclasses.replace(cfg, training=dataclasses.replace(cfg.training, steps=budget.steps,
                                                                     minutes=budget.minutes))

    def _train(self, log: MetricsLog, budget: Budget) -> TrainResult:
        tcfg = self.cfg.training
        clock = budget.start()
        interrupted = False
        with self._collection() as collection:
            run = self._start(collection, log, clock)
            try:
                under_way: deque[int] = deque()  # agent steps of the rounds submitted and not yet trained on

                def fits() -> bool:  # the budget not spent, and on a clock a round fits the time it leaves
                    return run.going_on(sum(under_way)) and self._round_length(run, sum(under_way)) > 0

                def send() -> None:
                    if run.profile.started is None:
                        run.profile.started = time.perf_counter()
                    with run.phase("sending"):
                        order = self._order(run, ahead=sum(under_way))
                        collection.submit(order)
                    under_way.append(order.steps * collection.slots)

                send()
                # Pipelined: a second round under way, so the next plays while one trains (with the
                # weights of one update earlier: a policy lag of one) and no worker waits between rounds.
                while len(under_way) < collection.depth and fits():
                    send()
                while under_way:
                    with run.timed("collection", "receiving"):
                        got = collection.result()
                    under_way.popleft()
                    self._learn(run, got)
                    if run.paced_from is None:
                        run.paced_from = (time.perf_counter(), run.steps)
                    if run.since_snapshot >= tcfg.snapshot_every_steps:
                        self._after_snapshot(run)
                    if fits():
                        send()
                run.profile.ended = time.perf_counter()
            except KeyboardInterrupt:
                interrupted = True  # Ctrl-C: the final snapshot below keeps what was trained
            if run.since_snapshot or not self.versions:
                run.snapshots += 1
                with run.timed("snapshot"):
                    self._record_payoff(run)
                    self._snapshot(run, self.start_steps + run.steps)
            if not interrupted:
                try:
                    self._closing_test(run)
                except KeyboardInterrupt:
                    interrupted = True  # the snapshot is kept; only its test is cut short
        champion = self.registry.agent_store.champion(self.team_size)
        return TrainResult(self.prefix, self.versions, self.start_steps + run.steps, clock.elapsed(),
                           interrupted, run.learner.skipped_updates, run.timing, run.lost_steps, run.profile,
                           champion.name if champion else None, len(self.versions) - self.earlier_versions)

    @contextmanager
    def _collection(self) -> Iterator[Collection]:
        """The configured collection backend (runner.backend, runner.pipeline), closed on leaving."""
        cfg = self.cfg
        backend, pipelined = self.backend, self.pipelined
        teacher = self.teacher.spec if self.teacher is not None else None
        for note in self.teacher.start_notes(cfg, self.net.space) if self.teacher is not None else ():
            self.on_progress(Note(note))
        if backend in ("rollout", "ray"):
            collection = WorkerCollection(cfg, self.net.config, teacher, backend, self.workers, pipelined,
                                          self.on_progress)
        else:
            games = VecGame(training_spec(cfg.game, cfg.training.opponents, teacher), cfg.runner, seed=cfg.seed,
                            workers=self.workers,
                            plugins=GamePlugins(reward_fn=build_reward(cfg.rewards)))
            try:
                collector = Collector(games, cfg.training.opponents, self.team_size, self.net.config, cfg.seed,
                                      cfg.rewards.weights.goal, self.device,
                                      make_accel(self.device, cfg.training.amp, cfg.training.pin_memory), teacher,
                                      cfg.ppo.temperature)
            except BaseException:
                games.close()
                raise
            collection = LocalCollection(collector, pipelined)
        try:
            yield collection
        finally:
            collection.close()

    def _start(self, collection: Collection, log: MetricsLog, clock: Clock) -> _Run:
        """Build the learner, draw the first opponents; collection has reset its games."""
        cfg, tcfg = self.cfg, self.cfg.training
        accel = make_accel(self.device, tcfg.amp, tcfg.pin_memory)
        model = maybe_compile(self.net, tcfg.compile, torch.zeros(2, self.net.obs_dim, device=self.device), accel.notes)
        for note in accel.notes:
            self.on_progress(Note(note))
        if cfg.promotion.during_training and not (tcfg.eval_every_snapshots and tcfg.eval_games):
            self.on_progress(Note("promotion.during_training is on but evaluation is off (training.eval_games or "
                                  "eval_every_snapshots is 0): the promotion test follows an evaluation, so no "
                                  "snapshot will be tested"))
        teaching = self.teacher is not None
        learner = PpoLearner(model, cfg.ppo, 1, obs_dim=self.net.obs_dim, device=self.device, seed=cfg.seed,
                             accel=accel, teacher=teaching)
        if self.teacher is not None:
            learner.extra_stats.update(self.teacher.stats())
        if self.optimizer_state is not None:
            learner.optimizer.load_state_dict(self.optimizer_state)
        if learner.return_scale is not None and self.learner_stats:
            learner.return_scale.load(self.learner_stats)
        run = _Run(collection, learner, log, np.random.default_rng(cfg.seed), clock, teaching, self.teacher,
                   average=moving_average(self.net, tcfg.ema_decay))
        self._draw_pool(run, refresh=0)
        return run

    def _order(self, run: _Run, ahead: int = 0) -> Order:
        """The next round: the learner's current weights, the shaping scale and whether the teacher still
        teaches (`ahead`: steps collected but not yet trained on, when pipelined)."""
        steps = self.start_steps + run.steps + ahead
        rcfg = self.cfg.rewards
        scale = shaping_scale(steps, rcfg.shaping_anneal_steps, rcfg.shaping_floor) if rcfg.mode == "dense" else 1.0
        run.teaching = run.teaching and run.guide(steps).teaches  # once it stops, its labels are never wanted again
        weights = {k: v.detach().clone() for k, v in self.net.state_dict().items()}
        length = max(1, self._round_length(run, ahead))  # the first round is always sent
        return Order(weights, run.learner.updates_done, length, scale, run.teaching)

    def _round_length(self, run: _Run, ahead: int) -> int:
        """Decision steps per env slot of the next round (`ahead`: steps under way): ppo.steps_per_env, the last
        round cut to the steps the budget leaves; on a clock, cut to the time it leaves at the pace so far
        (training.budget.clock_round: a short first round; 0 when not even a short one fits)."""
        full, slots = self.cfg.ppo.steps_per_env, run.collection.slots
        length = full
        left = run.clock.budget.steps_left(run.steps + ahead)
        if left is not None:
            length = max(1, min(length, -(-left // slots)))
        if run.clock.budget.seconds:
            seconds_left = run.clock.budget.seconds - run.clock.elapsed()
            length = min(length, clock_round(full, slots, seconds_left, run.pace(), ahead))
        return length

    def _learn(self, run: _Run, got: Round) -> None:
        """A PPO update on a collected round, then its metrics row: logged, kept, reported."""
        seg, learner = got.segment, run.learner
        if not run.collection.pipelined:  # played while the loop waited: split the wait into its parts
            run.timing["inference"] += seg.inference_seconds
            run.timing["collection"] -= min(seg.inference_seconds, run.timing["collection"])
        lag = learner.updates_done - seg.version
        guide = run.guide(self.start_steps + run.steps)
        if seg.teacher_probs is None:  # the round came without labels: nothing to pull towards
            guide = dataclasses.replace(guide, weight=0.0)
        distill_row: dict[str, float] = {}
        if self.teacher is not None and self.teacher.distill is not None:
            distill_row = {"distill/phase": float(guide.distilling), "charts/guide_weight": guide.weight}
        plan = UpdatePlan(run.clock.spent(run.steps), guide)  # the learning-rate schedule decays over the budget
        run.profile.add_round(seg.phases)
        threads = update_threads(self.cfg.training, self.workers if self.pipelined else 0)
        with run.timed("update"), torch_threads(threads):
            with run.phase("batching"):
                learner.ingest(seg)
            if guide.distilling:  # the new batch is unseen: the student's agreement on its own play
                agreement, cross_entropy = learner.held_out()
                distill_row.update({"distill/held_out_agreement": agreement,
                                    "distill/held_out_cross_entropy": cross_entropy})
                self._held_out(run, agreement)
            try:
                with run.phase("updating"):
                    update = learner.update(torch.from_numpy(seg.next_obs), torch.from_numpy(seg.next_starts), plan)
            except TrainingDiverged as exc:  # the run stops here: no snapshot of these weights is ever taken
                kept = (f"the last good snapshot {self.versions[-1]} is kept" if self.versions
                        else "no snapshot was taken")
                raise LeagueError(f"Training stopped: the PPO update made the network's {exc.what} at step "
                                  f"{self.start_steps + run.steps + seg.steps:,}; the learning rate "
                                  f"({self._lr_key(guide)}={exc.learning_rate:g}) is the usual cause; {kept}.") from None
        if run.average is not None:
            run.average.update_parameters(self.net)
        run.steps += seg.steps
        run.since_snapshot += seg.steps
        run.lost_steps += got.lost_steps
        for name, record in seg.tally.results().items():
            run.payoff[name] = run.payoff.get(name, PayoffRecord()).plus(record)
        elapsed = run.clock.elapsed()
        row = {**update.as_log(), **seg.tally.row(), "charts/steps_per_second": run.steps / elapsed,
               "charts/skipped_updates_total": learner.skipped_updates, "charts/policy_lag": float(lag),
               "charts/rollout_workers": float(got.workers), "charts/lost_steps_total": float(run.lost_steps),
               CPU_MINUTES: self.earlier_cpu_minutes + cpu_minutes(elapsed),
               **distill_row}
        rcfg = self.cfg.rewards
        if rcfg.mode == "dense" and rcfg.shaping_anneal_steps:
            row["charts/shaping_scale"] = shaping_scale(self.start_steps + run.steps, rcfg.shaping_anneal_steps,
                                                        rcfg.shaping_floor)
        self._record_metrics(run, row, kept=headline(row))
        self.on_progress(UpdateDone(run.steps, run.clock.budget.steps or None, elapsed, row))

    @staticmethod
    def _lr_key(guide: Guide) -> str:
        """The config key of the learning rate an update with `guide` used."""
        return "training.distill.learning_rate" if guide.learning_rate is not None else "ppo.learning_rate"

    def _held_out(self, run: _Run, agreement: float) -> None:
        """Count a held-out agreement (the next snapshot keeps what the phase has spent); say so when it ends the
        distillation phase."""
        ended = self.teacher.after_held_out(agreement, self.start_steps + run.steps)
        run.learner.extra_stats.update(self.teacher.stats())
        if ended is not None:
            self.on_progress(Note(ended))

    def _after_snapshot(self, run: _Run) -> None:
        """Every snapshot_every_steps: payoff, snapshot, every K snapshots an evaluation, new opponents."""
        run.since_snapshot = 0
        run.snapshots += 1
        with run.timed("snapshot"):
            self._record_payoff(run)
            name = self._snapshot(run, self.start_steps + run.steps)
        if self.judge.due(run.snapshots):
            self._judge(run, name)
        self._draw_pool(run, refresh=run.snapshots)

    def _judge(self, run: _Run, name: str, closing: bool = False) -> None:
        """Snapshot `name` (the snapshot network's weights) before the judge: evaluation games, the promotion test."""
        with run.timed("evaluation"):  # the promotion test, when on, is part of the evaluation step
            steps = self.start_steps + run.steps
            judged = self.judge.judge(name, self._net_of(run), run.snapshots, steps=steps, elapsed=run.clock.elapsed(),
                                      copying=run.guide(steps).distilling, closing=closing)
        for row in judged.rows:
            self._record_metrics(run, row, kept=row)
        for note in judged.notes:
            self.on_progress(Note(note))

    def _closing_test(self, run: _Run) -> None:
        """The run's last snapshot, unless just judged, meets the judge after the clock (panel.closing_test), when
        training promotes: the run's pick does not lag its last weights; then the title round robin
        (panel.title_games)."""
        cfg, t = self.cfg, self.cfg.training
        if (cfg.promotion.during_training and cfg.panel.closing_test and t.eval_every_snapshots and t.eval_games
                and run.snapshots and self.judge.owes(self.versions[-1])):
            self._judge(run, self.versions[-1], closing=True)
        if cfg.promotion.during_training and cfg.panel.title_games and cfg.panel.games and run.snapshots:
            with run.timed("evaluation"):
                finished = self.judge.title(self.versions[-1], lambda line: self.on_progress(Note(line)))
            if not finished:
                raise KeyboardInterrupt  # the run ends as interrupted, its snapshots kept

    def _record_metrics(self, run: _Run, row: dict[str, float], kept: dict[str, float]) -> None:
        """`row` into the run's metrics log, `kept` of it into the registry (the league's view of runs)."""
        step = self.start_steps + run.steps
        run.log.write(step, row)
        self.registry.run_store.record(self.prefix, self.team_size, step, kept)

    # ------------------------------------------------------------------ teacher and opponents

    def _draw_pool(self, run: _Run, refresh: int) -> None:
        """The opponents of the league envs until the next snapshot (`refresh`: snapshots taken so far);
        a best response (training.best_response_to) plays its target in every env."""
        collection, target = run.collection, self.cfg.training.best_response_to
        if target:
            picks = [target] * collection.league_envs
        else:
            picks = draw_picks(self.registry, self.cfg.training, self.prefix, self.team_size, self.versions,
                               collection.league_envs, run.rng, self.pool() if self.pool else (), self._panel())
        if self.teacher is not None:
            picks = self.teacher.picks(picks, self.registry.payoff_store.get(self.prefix, self.team_size).get(
                self.teacher.name, PayoffRecord()))
        specs = pool_specs(picks, self.registry, self.home.root, self.net, self.cfg.ppo.temperature)
        collection.set_pool(picks, specs, derived_seed(self.cfg.seed, "opponents", refresh))

    def _panel(self) -> list[str]:
        """The evaluation panel's members, the candidates of the opponent mix's `panel` share (none without it)."""
        if not self.cfg.training.opponents.panel:
            return []
        return panel_members(self.registry, self.team_size, LATEST, run=self.prefix,
                             teacher=self.cfg.training.distill.teacher or None, cfg=self.cfg.panel)

    def _record_payoff(self, run: _Run) -> None:
        """The learner's results against each opponent since the last snapshot, into the payoff table (PFSP)."""
        results: dict[str, PayoffRecord] = {}
        for name, record in run.payoff.items():
            if name == LATEST:
                if not self.versions:
                    continue  # the frozen latest weights have no name before the first snapshot
                name = self.versions[-1]
            if record.games > 0:
                results[name] = results.get(name, PayoffRecord()).plus(record)
        if results:
            self.registry.payoff_store.record(self.prefix, self.team_size, results,
                                              decay=self.cfg.training.payoff_decay)
        run.payoff.clear()

    # ------------------------------------------------------------------ snapshots

    def _net_of(self, run: _Run) -> torch.nn.Module:
        """The network a snapshot of `run` is taken of: the weights' moving average (training.ema_decay), else the
        learner's own."""
        return run.average.module if run.average is not None else self.net

    def _snapshot(self, run: _Run, steps: int) -> str:
        """Checkpoint + registry version of the snapshot network (_net_of). A snapshot that cannot be written
        (weights gone NaN, disk full) stops the run with the reason; the previous snapshots are kept as they are."""
        learner = run.learner
        name = next_version(self.prefix, self.versions)
        config = self.cfg.to_dict()
        if self.teacher is not None and self.teacher.provenance is not None:
            config["distilled_from"] = self.teacher.provenance.to_dict()
        try:
            rel, sha = write_checkpoint(self.home, name, self._net_of(run), learner, steps, config)
        except (LeagueError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            kept = f"the last snapshot, {self.versions[-1]}, is kept" if self.versions else "no snapshot was kept"
            raise LeagueError(f"Snapshot {name} was not written ({why.rstrip('.')}); training stopped and "
                              f"{kept}.") from None
        self.registry.agent_store.add(name, self.net.config.kind, self.team_size, parent=self.parent,
                                checkpoint_path=str(rel), checkpoint_sha256=sha, config=config,
                                steps_trained=steps, status=self.snapshot_status)
        self.parent = name
        self.versions.append(name)
        return name
