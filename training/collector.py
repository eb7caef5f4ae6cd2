"""One set of vectorized games played for the learner: rollout segments out, weights in.

A Collector owns a VecGame and everything that acts in it: a behaviour copy of the learner's
network (sampling with its own generator), the league opponents of its envs (built from
PolicySpecs, training.opponents), the kickstarting teacher and the recurrent states, and it
counts the episodes (training.episode_stats). Each `collect` plays T steps of every game and
returns them as one Segment (training.segment):

    collector.set_weights(weights, version)       # the learner's weights after update `version`
    collector.set_pool(picks, specs, seed)        # at every snapshot: the opponent of each league env
    segment = collector.collect(T, shaping_scale, teach=True)

The collection backends (training.collection) run collectors in this process, in a thread
beside the update (pipelined), or in Ray actors on a cluster; the self-play loop sees segments
only.
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace

import numpy as np
import torch

from agents.game_state import N_CONTROLS
from agents.networks import build_network
from agents.teaching import label_dtype, teacher_labels
from arena.engine.game import GameSpec
from arena.engine.phases import PhaseClock
from arena.engine.vector import VecGame
from league.config import GameConfig, OpponentMix, PolicyConfig
from training.accel import Accel, cpu_has_bf16_units
from training.episode_stats import EpisodeStats
from training.opponents import OpponentPool, PolicySpec, build_pool, lay_out
from training.rewards import rescale_shaping
from training.segment import Segment


class Collector:
    def __init__(self, games: VecGame, mix: OpponentMix, team_size: int, net_config: PolicyConfig, seed: int,
                 goal_weight: float, device: torch.device | str = "cpu", accel: Accel | None = None,
                 teacher: PolicySpec | None = None, temperature: float = 1.0):
        """`goal_weight`: the reward's goal weight (the shaping scale fades everything else);
        `teacher`: the kickstarting teacher, whose actions ride along while `collect(teach=True)`;
        `temperature`: the learner samples softmax(logits / temperature) (ppo.temperature)."""
        self.games = games
        self.layout = lay_out(games, mix, team_size)
        self.device = torch.device(device)
        self.accel = accel or Accel(self.device)
        self.net = build_network(net_config).to(self.device).eval()
        self.space = self.net.space
        self.recurrent = bool(self.net.recurrent)
        self.version = 0
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.goal_weight = goal_weight
        self.temperature = float(temperature)
        self.teacher = teacher.policy() if teacher is not None else None
        rows = self.layout.learner_rows
        self.teacher_state = self.teacher.initial_state(len(rows)) if self.teacher else None
        self.state = self.net.initial_state(len(rows), self.device) if self.recurrent else None
        self.pool = OpponentPool(env_opponent=np.zeros(0, dtype=np.int64))
        self.stats = EpisodeStats(games.num_envs, self.layout.learner_envs, self.layout.league_envs, games.teams)
        self.actions = np.zeros(games.num_agents, dtype=np.int64)
        self.controls = np.zeros((games.num_agents, N_CONTROLS), dtype=np.float32)  # rows of agents speaking controls
        self.use_controls = np.zeros(games.num_agents, dtype=bool)
        self.use_controls[rows] = self.space.factorised  # a learner with heads speaks controls
        self.obs = games.reset(seed=seed).copy()
        self.starts = games.info.episode_start.copy()
        # The learner's previous controls, for a network that reads them (policy.prev_controls).
        self.prev = np.zeros((len(rows), N_CONTROLS), np.float32) if net_config.prev_controls else None

    @property
    def slots(self) -> int:
        """Learner rows: the width of every segment."""
        return len(self.layout.learner_rows)

    @property
    def league_envs(self) -> int:
        """Envs whose other team is a league opponent (how many picks `set_pool` takes)."""
        return len(self.layout.league_envs)

    def set_weights(self, weights: dict[str, torch.Tensor] | dict[str, np.ndarray], version: int) -> None:
        """Act with the learner's weights after update `version` from now on."""
        self.net.load_state_dict({k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in weights.items()})
        self.version = version

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None:
        """League env i plays `picks[i]` from the next step on."""
        self.pool = build_pool(picks, specs, self.layout.opponent_rows, seed, self.device)
        self.stats.set_pool(self.pool)
        self.use_controls[:] = False
        self.use_controls[self.layout.learner_rows] = self.space.factorised
        for actor in self.pool.actors:
            self.use_controls[actor.rows] = actor.policy.speaks_controls

    def _inputs(self, obs: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The learner rows' network input: their observations, then (policy.prev_controls) their previous
        controls, zeros where an episode starts."""
        if self.prev is None:
            return obs
        self.prev[starts.astype(bool)] = 0.0
        return np.concatenate([obs, self.prev], axis=1)

    @torch.no_grad()
    def _learner_act(self, obs: np.ndarray, starts: np.ndarray):
        """Sampled actions of the learner rows, with their log-probabilities and values."""
        x = torch.from_numpy(obs)
        s = torch.from_numpy(starts.astype(np.float32))
        if self.accel.pin_memory:
            x, s = x.pin_memory(), s.pin_memory()
        x, s = x.to(self.device, non_blocking=True), s.to(self.device, non_blocking=True)
        with self.accel.inference_autocast():
            logits, value, self.state = self.net.step(x, self.state, s)
        actions, logprob = self.space.sample(logits, self.generator, self.temperature)
        # One copy to the host per step, the only synchronisation on a GPU (indices are exact in float32).
        out = torch.stack([actions.float(), logprob, value.float()]).cpu().numpy()
        return out[0].astype(np.int64), out[1], out[2]

    def _teacher_labels(self, obs: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The teacher's action distribution for the learner rows, in the learner's action space
        (agents.teaching), in the type it was measured to agree in where the CPU has bf16 units."""
        game = self.games.game_state() if self.teacher.reads_game else None
        labels, self.teacher_state = teacher_labels(self.teacher, game, obs, self.layout.learner_rows,
                                                    self.teacher_state, starts, self.space, self._label_dtype)
        return labels

    @functools.cached_property
    def _label_dtype(self) -> torch.dtype | None:
        """The teacher's labels' reduced type (agents.teaching.label_dtype; None: float32), decided once: Necto's
        in bf16 label 4-5.6x faster than its float32 labels before issue 59 on an AMD EPYC with AVX-512 BF16, argmax
        the same on 99.4% of states or more in every head (python -m training.measure.teacher_labels)."""
        return label_dtype(self.teacher, cpu_has_bf16_units())

    def _opponent_act(self, a) -> None:
        """One league opponent's step: its actions, or raw controls for a bot speaking them."""
        if a.policy.reads_game:
            out, a.state = a.policy.act_game(self.games.game_state(), a.rows, a.state, self.starts[a.rows])
        else:
            out, a.state = a.policy.act(self.obs[a.rows], a.state, self.starts[a.rows])
        if a.policy.speaks_controls:
            self.controls[a.rows] = out
        else:
            self.actions[a.rows] = out

    def collect(self, steps: int, shaping_scale: float = 1.0, teach: bool = False) -> Segment:
        """Play `steps` steps of every game; the learner rows' experience as one Segment."""
        started = time.perf_counter()
        inference = 0.0
        rows, layout, games = self.layout.learner_rows, self.layout, self.games
        S, D = self.slots, self.net.obs_dim
        seg = Segment(obs=np.empty((steps, S, D), np.float32), actions=np.empty((steps, S), np.int64),
                      logprobs=np.empty((steps, S), np.float32), values=np.empty((steps, S), np.float32),
                      rewards=np.empty((steps, S), np.float32), episode_starts=np.empty((steps, S), np.float32),
                      next_obs=np.empty((S, D), np.float32), next_starts=np.empty(S, np.float32),
                      version=self.version, tally=None,  # type: ignore[arg-type]  # set below
                      teacher_probs=(np.empty((steps, S, self.space.logits), np.float32) if teach and self.teacher
                                     else None),
                      hidden=np.empty((steps, 2, S, self.net.hidden_size), np.float32) if self.recurrent else None)
        clock = PhaseClock()
        games.take_phases()  # the runner's clocks count from here
        for t in range(steps):
            t0 = time.perf_counter()
            obs, starts = self.obs[rows], self.starts[rows]
            seg.obs[t], seg.episode_starts[t] = self._inputs(obs, starts), starts
            if seg.hidden is not None:
                seg.hidden[t, 0], seg.hidden[t, 1] = self.state.h[0].cpu().numpy(), self.state.c[0].cpu().numpy()
            clock.mark("segment writes")
            if seg.teacher_probs is not None:
                seg.teacher_probs[t] = self._teacher_labels(obs, starts)
                clock.mark("teacher")
            seg.actions[t], seg.logprobs[t], seg.values[t] = self._learner_act(seg.obs[t], starts)
            if self.prev is not None:
                self.prev[:] = self.space.controls[seg.actions[t]]
            if self.space.factorised:
                self.controls[rows] = self.space.controls[seg.actions[t]]
            else:
                self.actions[rows] = seg.actions[t]
            clock.mark("learner forward")
            for a in self.pool.actors:
                self._opponent_act(a)
            clock.mark("opponents")
            inference += time.perf_counter() - t0
            speaking = self.use_controls if self.use_controls.any() else None
            next_obs, rewards, _, _, info = games.step(self.actions, self.controls, speaking)
            clock.mark("game step")
            learner_rewards = rewards[rows]
            seg.rewards[t] = rescale_shaping(learner_rewards, info.goals[layout.learner_envs],
                                             self.games.teams[rows], self.goal_weight, shaping_scale)
            self.stats.step(learner_rewards, info)
            self.obs[:] = next_obs
            self.starts[:] = info.episode_start
            clock.mark("segment writes")
        seg.next_obs[:], seg.next_starts[:] = self._inputs(self.obs[rows], self.starts[rows]), self.starts[rows]
        if self.recurrent:
            seg.next_hidden = torch.stack([self.state.h[0], self.state.c[0]]).cpu().numpy()
        seg.phases = [round_phases(clock.take(), games.take_phases())]
        seg.tally = self.stats.take()
        seg.inference_seconds, seg.collection_seconds = inference, time.perf_counter() - started
        return seg

    def close(self) -> None:
        self.games.close()


def round_phases(collector: dict[str, float], runner: dict[str, float]) -> dict[str, float]:
    """A round's phases: the collector's own, its "game step" broken into the in-process runner's
    phases (physics, state read, rules and rewards, observations, resets, and the rest as "runner
    other"), or, with game worker processes, named as what it is from here: waiting for them."""
    out = dict(collector)
    step = out.pop("game step", 0.0)
    if runner:
        out.update(runner)
        out["runner other"] = max(step - sum(runner.values()), 0.0)
    else:
        out["waiting for game workers"] = step
    return out


def training_spec(game: GameConfig, mix: OpponentMix, teacher: PolicySpec | None) -> GameSpec:
    """The training games' spec: the game state published (agents.game_state) when a community bot
    may play in them, as an opponent (the mix's community share) or as the kickstart teacher."""
    reads = mix.community > 0 or (teacher is not None and teacher.reads_game)
    return replace(GameSpec.from_config(game, "training"), game_state=reads)
