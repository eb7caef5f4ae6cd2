"""The self-play loop: `league train --stage 1v1`.

    games (VecGame, shared memory) -> one batched forward for the learner's rows and one per
    opponent policy -> rollout buffer -> PPO update -> every `snapshot_every_steps` a checkpoint
    and a new registry version (parent = previous version) -> every K snapshots evaluation games
    that update the ratings.

A fixed share of the envs (`training.opponents.latest`) is pure self-play: the learner drives
both teams there, and every car's experience is training data. In the other ("league") envs
one team is the learner (blue in even envs, orange in odd ones, so it learns both sides) and
the other an opponent drawn from the league at every snapshot (training.opponents).
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint import check_trainable, load_checkpoint, save_checkpoint
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
from league.names import check_name, check_run_name
from league.registry import Registry
from training.accel import learner_threads, make_accel, maybe_compile, torch_threads, update_threads
from training.evaluation import evaluate_snapshot
from training.metrics import MetricsLog
from training.opponents import OpponentPool, draw_pool
from training.ppo import PpoLearner
from training.rewards import build_reward

VERSION_RE = re.compile(r"^(?P<prefix>.+)-v(?P<k>\d+)$")


@dataclass
class TrainResult:
    run: str
    versions: list[str]
    steps: int  # agent steps trained in total (including resumed ones)
    seconds: float
    interrupted: bool
    skipped_updates: int
    timing: dict[str, float]


def obs_dim_of(games: VecGame) -> int:
    return games.single_observation_space.shape[0]


def pick_device(choice: str) -> torch.device:
    if choice == "cuda" and not torch.cuda.is_available():
        raise LeagueError("--device cuda was asked for but no CUDA device is available.")
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


def run_versions(registry: Registry, prefix: str) -> list[str]:
    """The run's snapshot names, oldest first."""
    found = []
    for name in registry.names():
        m = VERSION_RE.match(name)
        if m and m.group("prefix") == prefix:
            found.append((int(m.group("k")), name))
    return [n for _, n in sorted(found)]


class SelfPlayTrainer:
    def __init__(self, cfg: Config, home: LeagueHome, registry: Registry, name: str | None = None,
                 resume: str | None = None, on_progress: Callable[[dict], None] | None = None,
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
        self.on_progress = on_progress or (lambda info: None)
        self.team_size = cfg.game.team_size
        self.device = pick_device(cfg.training.device)
        torch.manual_seed(cfg.seed)
        self.start_steps = 0
        optimizer_state = None
        self.learner_stats: dict[str, float] = {}  # the learner's running statistics, from a resumed checkpoint
        if resume:
            agent = registry.agent(resume)
            m = VERSION_RE.match(agent.name)
            if agent.kind not in ("mlp", "lstm") or not m:
                raise LeagueError(f"{resume!r} is not a training snapshot (expected a name like mlp-1v1-v3).")
            ckpt = load_checkpoint(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)
            self.net = ckpt.net.train()
            optimizer_state = ckpt.optimizer_state
            self.learner_stats = (ckpt.meta.optimizer or {}).get("learner_stats") or {}
            self.start_steps = agent.steps_trained
            self.prefix = m.group("prefix")
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
                                  f"continue it with --resume {existing[-1]} or choose another --name.")
            if self.prefix in registry.names():
                raise LeagueError(f"An agent named {self.prefix!r} exists; choose another --name.")
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

    # ------------------------------------------------------------------ setup

    def _layout(self, games: VecGame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Learner rows [S], their envs [S], the league envs [E_l] and their opponent rows [E_l, team_size]."""
        mix = vars(self.cfg.training.opponents)
        share = mix["latest"] / sum(mix.values()) if sum(mix.values()) > 0 else 1.0
        n_self = int(round(games.num_envs * share))
        self_play = np.arange(games.num_envs) < n_self
        side = np.arange(games.num_envs) % 2  # learner team in league envs: blue in even envs
        learner_mask = self_play[games.env_of_row] | (games.teams == side[games.env_of_row])
        learner_rows = np.flatnonzero(learner_mask)
        league_envs = np.flatnonzero(~self_play)
        opp_rows = np.flatnonzero(~learner_mask).reshape(len(league_envs), self.team_size)
        return learner_rows, games.env_of_row[learner_rows], league_envs, opp_rows

    def _snapshot(self, learner: PpoLearner, steps: int) -> str:
        """Checkpoint + registry version. A snapshot that cannot be written (weights gone NaN, disk
        full) stops the run with the reason; the previous snapshots are kept as they are."""
        k = 1 + max([int(VERSION_RE.match(v).group("k")) for v in self.versions], default=0)
        name = f"{self.prefix}-v{k}"
        try:
            rel, sha = self._write_snapshot(name, learner, steps)
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

    def _write_snapshot(self, name: str, learner: PpoLearner, steps: int) -> tuple[Path, str]:
        """Write the checkpoint under a file name nobody else has: created exclusively, so two
        writers can never replace each other's file. A file left by a run killed between writing
        and registering its snapshot keeps its name; this one then gets a unique suffix."""
        stem = f"{name}.safetensors"
        if (self.home.checkpoints / stem).exists():
            stem = f"{name}-{secrets.token_hex(4)}.safetensors"
        rel = Path("checkpoints") / stem
        stats = learner.return_scale.stats() if learner.return_scale else None
        sha = save_checkpoint(self.home.root / rel, self.net, steps=steps, training_config=self.cfg.to_dict(),
                              optimizer=learner.optimizer, learner_stats=stats, exclusive=True)
        return rel, sha

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
        rng = np.random.default_rng(cfg.seed)
        timing = {"collection": 0.0, "inference": 0.0, "update": 0.0, "snapshot": 0.0, "evaluation": 0.0}
        start_time = time.perf_counter()
        deadline = start_time + tcfg.minutes * 60 if tcfg.minutes else None
        interrupted = False
        with VecGame(cfg.game, cfg.runner, mode="training", seed=cfg.seed, workers=self.workers,
                     plugins=plugins) as games:
            learner_rows, slot_env, league_envs, opp_rows = self._layout(games)
            slots = len(learner_rows)
            steps_per_update = slots * cfg.ppo.steps_per_env
            budget = tcfg.steps if tcfg.steps else None
            total_updates = max(1, budget // steps_per_update) if budget else None
            accel = make_accel(self.device, tcfg.amp, tcfg.pin_memory)
            model = maybe_compile(self.net, tcfg.compile, torch.zeros(2, obs_dim_of(games), device=self.device),
                                  accel.notes)
            for note in accel.notes:
                self.on_progress({"note": note})
            teacher = self._teacher()
            teacher_state = teacher.initial_state(slots) if teacher else None
            if teacher is not None:
                self.on_progress({"note": f"kickstarting from {tcfg.kickstart.teacher} until the network has trained "
                                          f"{tcfg.kickstart.steps:,} steps (training.kickstart.teacher= to turn off)"})
            learner = PpoLearner(model, cfg.ppo, slots, obs_dim=obs_dim_of(games), device=self.device,
                                 total_updates=total_updates, seed=cfg.seed, accel=accel, teacher=teacher is not None)
            if self.optimizer_state is not None:
                learner.optimizer.load_state_dict(self.optimizer_state)
            if learner.return_scale is not None and self.learner_stats:
                learner.return_scale.load(self.learner_stats)
            pool = self._refresh(games, opp_rows, rng, 0)
            obs = games.reset(seed=cfg.seed)
            starts = games.info.episode_start.copy()
            actions = np.zeros(games.num_agents, dtype=np.int64)
            steps, since_snapshot, snapshots = 0, 0, 0
            stats = _EpisodeStats(games.num_envs, slots, league_envs)
            stats.set_pool(pool)
            try:
                while (budget is None or steps < budget) and (deadline is None or time.perf_counter() < deadline):
                    t0 = time.perf_counter()
                    teacher_actions = None
                    if teacher is not None:
                        # Over the network's first kickstart.steps of training: a resumed run goes on
                        # where it stopped, and a run --from a trained agent starts past the anneal.
                        done = (self.start_steps + steps) / tcfg.kickstart.steps
                        learner.kickstart_weight = tcfg.kickstart.weight * max(0.0, 1 - done)
                        if learner.kickstart_weight == 0:
                            teacher = None  # annealed away: PPO alone from here on
                        else:
                            teacher_actions, teacher_state = teacher.act(obs[learner_rows], teacher_state,
                                                                         starts[learner_rows], deterministic=True)
                            teacher_actions = torch.from_numpy(teacher_actions)
                    actions[learner_rows] = learner.act(torch.from_numpy(obs[learner_rows]),
                                                        torch.from_numpy(starts[learner_rows].astype(np.float32)),
                                                        teacher_actions).cpu().numpy()
                    for g in pool.groups:
                        actions[g.rows], g.state = g.policy.act(obs[g.rows], g.state, starts[g.rows])
                    t1 = time.perf_counter()
                    obs, rewards, _, _, info = games.step(actions)
                    t2 = time.perf_counter()
                    learner.observe_rewards(torch.from_numpy(rewards[learner_rows]))
                    starts = info.episode_start.copy()
                    stats.step(rewards[learner_rows], info, slot_env, pool, games)
                    steps += slots
                    since_snapshot += slots
                    timing["inference"] += t1 - t0
                    timing["collection"] += t2 - t1
                    if learner.buffer.full:
                        t3 = time.perf_counter()
                        with torch_threads(update_threads(tcfg)):
                            upd = learner.update(torch.from_numpy(obs[learner_rows]),
                                                 torch.from_numpy(starts[learner_rows].astype(np.float32)))
                        timing["update"] += time.perf_counter() - t3
                        elapsed = time.perf_counter() - start_time
                        row = {**upd.as_log(), **stats.flush(pool), "charts/steps_per_second": steps / elapsed,
                               "charts/skipped_updates_total": learner.skipped_updates}
                        log.write(self.start_steps + steps, row)
                        self.registry.record_run_metrics(self.prefix, self.team_size, self.start_steps + steps,
                                                         _headline(row))
                        self.on_progress({"steps": steps, "budget": budget, "elapsed": elapsed, **row})
                    if since_snapshot >= tcfg.snapshot_every_steps and not learner.buffer.t:
                        since_snapshot = 0
                        snapshots += 1
                        pool = self._after_snapshot(learner, games, opp_rows, rng, snapshots, steps, stats, pool,
                                                    timing, log)
            except KeyboardInterrupt:
                interrupted = True
            if since_snapshot or not self.versions:
                t = time.perf_counter()
                self._record_payoff(stats, pool)
                self._snapshot(learner, self.start_steps + steps)
                timing["snapshot"] += time.perf_counter() - t
        return TrainResult(self.prefix, self.versions, self.start_steps + steps, time.perf_counter() - start_time,
                           interrupted, learner.skipped_updates, timing)

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

    def _refresh(self, games: VecGame, opp_rows: np.ndarray, rng: np.random.Generator, k: int) -> OpponentPool:
        return draw_pool(self.registry, self.cfg.training, self.prefix, self.team_size, self.net, self.versions,
                         opp_rows, rng, self.home.root, self.cfg.seed + 7919 * (k + 1))

    def _record_payoff(self, stats: "_EpisodeStats", pool: OpponentPool) -> None:
        results = {}
        for g, (w, d, n) in zip(pool.groups, stats.payoff_counts()):
            name = self.versions[-1] if g.name.startswith("<") and self.versions else g.name
            if n > 0 and not name.startswith("<"):
                prev = results.get(name, (0, 0, 0))
                results[name] = (prev[0] + w, prev[1] + d, prev[2] + n)
        if results:
            self.registry.record_payoff(self.prefix, self.team_size, results, decay=self.cfg.training.payoff_decay)
        stats.reset_payoff(len(pool.groups))

    def _after_snapshot(self, learner, games, opp_rows, rng, snapshots, steps, stats, pool, timing, log):
        tcfg = self.cfg.training
        t = time.perf_counter()
        self._record_payoff(stats, pool)
        name = self._snapshot(learner, self.start_steps + steps)
        timing["snapshot"] += time.perf_counter() - t
        if tcfg.eval_every_snapshots and tcfg.eval_games and snapshots % tcfg.eval_every_snapshots == 0:
            t = time.perf_counter()
            policy = NetworkPolicy(self.net, device=self.device, name=name)
            rates = evaluate_snapshot(self.registry, name, policy, self.team_size, tcfg.eval_games,
                                      tcfg.eval_game_seconds, self.cfg.seed + snapshots, self.home.root,
                                      self.cfg.game.tick_skip, workers=self.workers)
            self.net.train()
            timing["evaluation"] += time.perf_counter() - t
            row = {f"eval/win_rate/{k}": v for k, v in rates.items()}
            row["eval/elo"] = self.registry.rating(name, self.team_size)["elo"]
            log.write(self.start_steps + steps, row)
            self.registry.record_run_metrics(self.prefix, self.team_size, self.start_steps + steps, row)
        new_pool = self._refresh(games, opp_rows, rng, snapshots)
        stats.set_pool(new_pool)
        return new_pool


HEADLINE = ("charts/steps_per_second", "charts/episode_reward", "charts/episode_length", "charts/goals_for",
            "charts/goals_against", "losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
            "losses/clip_fraction", "losses/explained_variance", "charts/skipped_updates_total")


def _headline(row: dict) -> dict:
    """The metrics kept in the registry: the headline ones and every win rate."""
    return {k: v for k, v in row.items() if k in HEADLINE or k.startswith("charts/win_rate/")}


class _EpisodeStats:
    """Episode returns, goals and results per opponent, accumulated with array operations."""

    def __init__(self, n_envs: int, slots: int, league_envs: np.ndarray):
        self.returns = np.zeros(slots)
        self.done_returns: list[float] = []
        self.lengths: list[float] = []
        self.goals_for = self.goals_against = self.touches = 0.0
        self.side = np.arange(n_envs) % 2
        self.league_envs = league_envs
        self.env_group = np.full(n_envs, -1)  # opponent group of each env; -1: pure self-play

    def set_pool(self, pool: OpponentPool) -> None:
        self.env_group[:] = -1
        self.env_group[self.league_envs] = pool.env_opponent
        self.reset_payoff(len(pool.groups))

    def reset_payoff(self, n_groups: int) -> None:
        self.wins = np.zeros(n_groups)
        self.draws = np.zeros(n_groups)
        self.games = np.zeros(n_groups)

    def payoff_counts(self):
        return list(zip(self.wins.tolist(), self.draws.tolist(), self.games.tolist()))

    def step(self, rewards: np.ndarray, info, slot_env: np.ndarray, pool: OpponentPool, games: VecGame) -> None:
        self.returns += rewards
        envs = np.arange(len(self.side))
        self.goals_for += float(info.goals[envs, self.side].sum())
        self.goals_against += float(info.goals[envs, 1 - self.side].sum())
        learner_cars = games.teams.reshape(len(envs), -1) == self.side[:, None]
        self.touches += float((info.touches.reshape(len(envs), -1) > 0)[learner_cars].sum())
        done = info.done
        if done.any():
            done_slots = done[slot_env]
            self.done_returns.extend(self.returns[done_slots].tolist())
            self.returns[done_slots] = 0.0
            finished = np.flatnonzero(done)
            self.lengths.extend(info.episode_seconds[finished].tolist())
            finished = finished[self.env_group[finished] >= 0]  # results against league opponents
            ours = info.episode_score[finished, self.side[finished]]
            theirs = info.episode_score[finished, 1 - self.side[finished]]
            groups = self.env_group[finished]
            np.add.at(self.wins, groups, (ours > theirs).astype(float))
            np.add.at(self.draws, groups, (ours == theirs).astype(float))
            np.add.at(self.games, groups, 1.0)

    def flush(self, pool: OpponentPool) -> dict[str, float]:
        row: dict[str, float] = {"charts/goals_for": self.goals_for, "charts/goals_against": self.goals_against,
                                 "charts/touches": self.touches}
        if self.done_returns:
            row["charts/episode_reward"] = float(np.mean(self.done_returns))
            row["charts/episode_length"] = float(np.mean(self.lengths))
            row["charts/episodes"] = float(len(self.done_returns))
        row["charts/opponent_share/self-play"] = float(np.mean(self.env_group < 0))
        for g, w, d, n in zip(pool.groups, self.wins, self.draws, self.games):
            label = "latest-frozen" if g.name.startswith("<") else g.name
            row[f"charts/opponent_share/{label}"] = len(np.unique(g.envs)) / len(self.side)
            if n:
                row[f"charts/win_rate/{label}"] = (w + 0.5 * d) / n
        self.done_returns, self.lengths = [], []
        self.goals_for = self.goals_against = self.touches = 0.0
        return row
