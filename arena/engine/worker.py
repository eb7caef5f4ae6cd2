"""One game worker: M RocketSim arenas stepped together, writing into the runner's shared arrays.

The hot path (ArenaWorker.step) per step:
  1. set every car's controls from the action table (prebuilt CarControls per action),
  2. `arena.step(tick_skip)` per arena: RocketSim runs the ticks in C++, no per-tick Python,
  3. read every arena with `get_gym_state()` into arrays in one concatenate (arena.engine.gym_state),
  4. goals, touches, clock, done rules and rewards as array operations over all M arenas,
  5. all observations with one `agents.obs.build_obs` call,
  6. automatic resets of finished arenas (rare: the only per-arena Python work besides the
     RocketSim calls themselves), followed by one more build_obs for just those arenas.
"""

from __future__ import annotations

import json

import traceback
from dataclasses import dataclass

import numpy as np
import RocketSim as rsim

from agents.actions import ACTION_TABLE
from agents.game_state import CAR_HAS_FLIP
from agents.obs import CAR_RAW_DIM, OBS_DIM, build_obs
from arena.engine.batch import StepBatch, as_batch_condition, as_batch_reward
from arena.engine.game import (
    GamePlugins,
    GameSpec,
    default_terminations,
    default_truncations,
    kickoff_mutator,
    start_mutator,
)
from arena.engine.gym_state import ArenaArrays, GymStateReader, check_car_order, fill_demolished, read_has_flip
from arena.engine.mutators import RNG_KEY
from arena.engine.phases import PhaseClock
from arena.engine.procs import detach_worker_signals
from arena.engine.rewards import GoalReward
from arena.engine.rlgym_state import agent_ids, base_state, read_state, write_state
from arena.engine.shared import runner_layout, views
from arena.engine.sim import apply_actions, apply_controls, controls_table, new_arena, team_layout
from league.game_values import TICKS_PER_SECOND

# Messages between the runner and a worker process.
MSG_STEP = b"step"
MSG_RESET = b"reset"  # followed by JSON: null (no seed), one seed, or a list of per-arena seeds
MSG_CLOSE = b"close"
REPLY_OK = b"ok"
REPLY_ERROR = b"error:"  # followed by the traceback text

# The phases of ArenaWorker.step its clock counts, in the order they run (arena.engine.phases).
STEP_PHASES = ("physics", "state read", "rules and rewards", "observations", "resets")


@dataclass(frozen=True)
class WorkerPlan:
    """Which arenas a worker plays: global arena indices [first_env, first_env + n_envs)."""

    spec: GameSpec
    plugins: GamePlugins
    first_env: int
    n_envs: int
    total_envs: int
    seed: int


def arena_rng(seed: int, env: int) -> np.random.Generator:
    """Each arena's generator depends only on the seed and its global index, not on the worker split."""
    return np.random.default_rng([seed, env])


class ArenaWorker:
    def __init__(self, plan: WorkerPlan, buffer):
        spec = plan.spec
        self.spec = spec
        self.plan = plan
        self.n_envs = plan.n_envs
        self.n_cars = spec.n_cars
        self.ids = agent_ids(spec.team_size)
        self.teams = team_layout(spec.team_size)
        self._teams_grid = np.broadcast_to(self.teams, (self.n_envs, self.n_cars))
        self._no_overtime = np.zeros(self.n_envs, dtype=bool)

        arrays = views(buffer, runner_layout(plan.total_envs, self.n_cars, spec.game_state))
        envs = slice(plan.first_env, plan.first_env + plan.n_envs)
        rows = slice(plan.first_env * self.n_cars, (plan.first_env + plan.n_envs) * self.n_cars)
        self.out = {name: (a[envs] if a.shape[0] == plan.total_envs else a[rows]) for name, a in arrays.items()}

        self.arenas: list[rsim.Arena] = []
        self.cars: list[list[rsim.Car]] = []
        self._build_arenas()
        self._controls = controls_table()
        self._reader = GymStateReader(self.n_cars)
        check_car_order(self._reader, self.arenas)

        self._start = start_mutator(spec, tuple(plan.plugins.mutators))
        self._kickoff = kickoff_mutator(spec)
        self._terminations = [as_batch_condition(c, self.ids)
                              for c in (*default_terminations(spec), *plan.plugins.terminations)]
        self._truncations = [as_batch_condition(c, self.ids)
                             for c in (*default_truncations(spec), *plan.plugins.truncations)]
        self._reward = as_batch_reward(plan.plugins.reward_fn or GoalReward(), self.ids)

        self._rngs = [arena_rng(plan.seed, plan.first_env + e) for e in range(self.n_envs)]
        # Per-arena bookkeeping, in ticks so timeouts match RLGym's integer tick arithmetic.
        self._touches = np.zeros((self.n_envs, self.n_cars), dtype=np.int32)
        self._episode_ticks = np.zeros(self.n_envs, dtype=np.int64)
        self._ticks_since_touch = np.zeros(self.n_envs, dtype=np.int64)
        self._score = np.zeros((self.n_envs, 2), dtype=np.int32)
        self._arena_score = np.zeros((self.n_envs, 2), dtype=np.int64)
        self.clock = PhaseClock()

    def _build_arenas(self) -> None:
        """Fresh arenas: identical RocketSim objects, so what happens in them depends on seed and actions only."""
        self.arenas, self.cars = [], []
        for env in range(self.n_envs):
            arena, cars = new_arena(self.spec.team_size)
            if [car.id for car in cars] != list(range(1, self.n_cars + 1)):
                raise RuntimeError(f"RocketSim numbered the cars {[car.id for car in cars]}; expected 1..{self.n_cars}")
            arena.set_ball_touch_callback(self._on_touch, env)
            self.arenas.append(arena)
            self.cars.append(cars)
        self._all_cars = [car for cars in self.cars for car in cars]
        self._stepped = False

    # ------------------------------------------------------------------ callbacks

    def _on_touch(self, arena, car, data) -> None:
        # RocketSim calls this for every tick a car is in contact with the ball.
        self._touches[data, car.id - 1] += 1

    # ------------------------------------------------------------------ clock

    def _seconds_left(self, envs=slice(None)) -> np.ndarray:
        elapsed = self._episode_ticks[envs] / TICKS_PER_SECOND
        return np.maximum(self.spec.clock_seconds - elapsed, 0.0).astype(np.float32)

    # ------------------------------------------------------------------ resets

    def _apply_start(self, envs: list[int], kickoff_only: bool) -> list:
        """Set each listed arena to a fresh start state (or a kickoff) drawn with its own generator."""
        mutator = self._kickoff if kickoff_only else self._start
        states = []
        for env in envs:
            arena = self.arenas[env]
            state = base_state(arena.tick_count)
            mutator.apply(state, {RNG_KEY: self._rngs[env]})
            write_state(arena, self.cars[env], self.ids, state)
            self._arena_score[env] = (arena.blue_score, arena.orange_score)
            states.append(state)
        return states

    def _begin_episodes(self, envs: np.ndarray) -> None:
        states = self._apply_start(envs.tolist(), kickoff_only=False)
        if self.spec.game_state:  # a new episode starts from no controls
            self.out["prev_controls"].reshape(self.n_envs, self.n_cars, -1)[envs] = 0.0
        self._episode_ticks[envs] = 0
        self._ticks_since_touch[envs] = 0
        self._score[envs] = 0
        for rule in (*self._terminations, *self._truncations, self._reward):
            rule.reset_batch(envs, states)

    def _kickoffs(self, envs: np.ndarray) -> None:
        self._apply_start(envs.tolist(), kickoff_only=True)
        self._ticks_since_touch[envs] = 0

    def _write_obs(self, envs: np.ndarray) -> None:
        """Rebuild the observations of the listed arenas (after they were reset)."""
        arrays = self._reader.read([self.arenas[e] for e in envs.tolist()])
        fill_demolished(arrays.cars, [self.cars[e] for e in envs.tolist()])
        obs = build_obs(arrays.ball, arrays.cars, self._teams_grid[: len(envs)], arrays.pads,
                        self._score[envs], self._seconds_left(envs), self._no_overtime[: len(envs)])
        self.out["obs"].reshape(self.n_envs, self.n_cars, OBS_DIM)[envs] = obs.reshape(len(envs), self.n_cars, OBS_DIM)
        if self.spec.game_state:
            self._write_state(envs, arrays.ball, arrays.cars, arrays.pads)

    def _write_state(self, envs, ball: np.ndarray, cars: np.ndarray, pads: np.ndarray) -> None:
        """The game state agents.game_state describes, for the listed arenas (has_flip read car by car)."""
        out = self.out
        out["state_ball"][envs] = ball
        out["state_cars"][envs, :, :CAR_RAW_DIM] = cars
        out["state_cars"][envs, :, CAR_HAS_FLIP] = read_has_flip([self.cars[e] for e in np.arange(self.n_envs)[envs]])
        out["state_pads"][envs] = pads

    def reset_games(self, seeds: list[int]) -> None:
        """Start one game per arena, arena e's start state drawn from seeds[e] alone.

        Stepped arenas are rebuilt (see `reset`), so each game replays bit for bit whatever
        else ran in this worker before or beside it: tournaments rely on this.
        """
        if len(seeds) != self.n_envs:
            raise ValueError(f"need one seed per arena ({self.n_envs}), got {len(seeds)}")
        self._rngs = [np.random.default_rng([int(s)]) for s in seeds]
        self._start_all()

    def read_arrays(self):
        """Every arena's current state as agents.obs raw arrays (ball [E, 9], cars [E, C, 18])."""
        arrays = self._reader.read(self.arenas)
        fill_demolished(arrays.cars, self.cars)
        return arrays

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode in every arena; with a seed, reseed them and replay exactly.

        A start state is written over an arena in place, and RocketSim keeps some per-tick
        state that a state write does not cover (wheel forces, contact points), so after play
        the same start state can unfold a hair differently. A seeded reset therefore rebuilds
        arenas that have been stepped (~15 ms each) so that it replays bit for bit; automatic
        resets do not (they would cost that per episode), which keeps a whole run reproducible
        from its seed and actions, but not each episode on its own.
        """
        if seed is not None:
            self._rngs = [arena_rng(seed, self.plan.first_env + e) for e in range(self.n_envs)]
        self._start_all(rebuild=seed is not None)

    def _start_all(self, rebuild: bool = True) -> None:
        if rebuild and self._stepped:
            self._build_arenas()
        everything = np.arange(self.n_envs)
        self._begin_episodes(everything)
        self._write_obs(everything)
        out = self.out
        out["episode_start"][:] = True
        for name in ("rewards", "terminated", "truncated", "done", "goals", "touches", "episode_score", "episode_seconds"):
            out[name][:] = 0
        out["score"][:] = self._score
        out["seconds_left"][:] = self._seconds_left()

    # ------------------------------------------------------------------ the hot path

    def step(self) -> None:
        """One step of every arena: act, simulate, judge, publish, and restart finished arenas.

        `self.clock` counts each phase's seconds (arena.engine.phases; read by the scale profile)."""
        clock = self.clock
        clock.start()
        arrays = self._simulate()
        self.last_arrays = arrays  # the state at the end of this step, before any restart (replays)
        batch = self._bookkeep(arrays)
        terminated = _any_done(self._terminations, batch)
        truncated = _any_done(self._truncations, batch) & ~terminated
        rewards = self._reward.get_rewards_batch(batch, terminated, truncated)
        done = terminated | truncated
        clock.mark("rules and rewards")
        self._publish(batch, rewards, terminated, truncated, done)
        clock.mark("observations")

        seconds_left = batch.seconds_left
        restart = (batch.goals.sum(axis=1) > 0) & ~done if self.spec.kickoff_after_goal else None
        if done.any() or (restart is not None and restart.any()):
            self._restart(done, restart)
            seconds_left = self._seconds_left()
        self.out["score"][:] = self._score
        self.out["seconds_left"][:] = seconds_left
        clock.mark("resets")

    def _simulate(self) -> ArenaArrays:
        """Apply the actions, run `tick_skip` ticks in every arena, and read them all back."""
        self._stepped = True
        out = self.out
        apply_actions(self._all_cars, out["actions"].tolist(), self._controls)
        raw = out["use_controls"]
        if raw.any():  # agents speaking raw controls (community bots): their rows replace the table's
            rows = np.flatnonzero(raw)
            apply_controls(self._all_cars, rows, out["controls"][rows])
        if self.spec.game_state:  # what each car ran this step: its agent's next "previous controls"
            out["prev_controls"][:] = np.where(raw[:, None], out["controls"], ACTION_TABLE[out["actions"]])
        self._touches[:] = 0
        for arena in self.arenas:
            arena.step(self.spec.tick_skip)
        self.clock.mark("physics")
        arrays = self.read_arrays()
        self.clock.mark("state read")
        return arrays

    def _bookkeep(self, arrays: ArenaArrays) -> StepBatch:
        """Goals, score, clocks and touch timers after a step, as the batch the rules read."""
        spec = self.spec
        goals = (arrays.arena_score - self._arena_score).astype(np.int32)
        self._arena_score = arrays.arena_score
        self._score += goals
        self._episode_ticks += spec.tick_skip
        touched = self._touches.any(axis=1)
        self._ticks_since_touch = np.where(touched, 0, self._ticks_since_touch + spec.tick_skip)
        return StepBatch(
            team_size=spec.team_size, tick_skip=spec.tick_skip, teams=self.teams, agent_ids=self.ids,
            ball=arrays.ball, cars=arrays.cars, pads=arrays.pads, goals=goals, touches=self._touches,
            score=self._score, seconds_left=self._seconds_left(),
            episode_seconds=(self._episode_ticks / TICKS_PER_SECOND).astype(np.float32),
            seconds_since_touch=self._ticks_since_touch / TICKS_PER_SECOND,
            game_states=self._game_states,
        )

    def _publish(self, batch: StepBatch, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                 done: np.ndarray) -> None:
        """Write this step's results and every arena's observation (one build_obs) to the shared arrays."""
        out, n_cars = self.out, self.n_cars
        out["rewards"][:] = rewards.reshape(-1)
        out["terminated"][:] = np.repeat(terminated, n_cars)
        out["truncated"][:] = np.repeat(truncated, n_cars)
        out["done"][:] = done
        out["goals"][:] = batch.goals
        out["touches"][:] = batch.touches
        out["episode_score"][:] = batch.score
        out["episode_seconds"][:] = batch.episode_seconds
        build_obs(batch.ball, batch.cars, self._teams_grid, batch.pads, batch.score, batch.seconds_left,
                  self._no_overtime, out=out["obs"])
        if self.spec.game_state:
            self._write_state(slice(None), batch.ball, batch.cars, batch.pads)
        out["episode_start"][:] = False

    def _restart(self, done: np.ndarray, restart: np.ndarray | None) -> None:
        out, n_cars = self.out, self.n_cars
        finished = np.flatnonzero(done)
        if len(finished):
            rows = (finished[:, None] * n_cars + np.arange(n_cars)).ravel()
            out["final_obs"][rows] = out["obs"][rows]
            out["episode_start"][rows] = True
            self._begin_episodes(finished)
        kickoffs = np.flatnonzero(restart) if restart is not None else np.zeros(0, dtype=np.int64)
        if len(kickoffs):
            self._kickoffs(kickoffs)
        self._write_obs(np.concatenate([finished, kickoffs]))

    def _game_states(self) -> list:
        """Every arena as an RLGym GameState (slow; only adapters of plain RLGym objects ask)."""
        return [read_state(arena, cars, self.ids, arena.tick_count, touches)
                for arena, cars, touches in zip(self.arenas, self.cars, self._touches)]


def _any_done(conditions: list, batch: StepBatch) -> np.ndarray:
    done = np.zeros(batch.n_envs, dtype=bool)
    for condition in conditions:
        done |= np.asarray(condition.is_done_batch(batch), dtype=bool)
    return done


# --------------------------------------------------------------------------- process entry


def apply_reset(worker: ArenaWorker, arg: bytes) -> None:
    """Carry out a reset message's JSON argument: null, one seed, or a list of per-arena game seeds."""
    seeds = json.loads(arg)
    if isinstance(seeds, list):
        worker.reset_games(seeds)
    else:
        worker.reset(None if seeds is None else int(seeds))


def run_worker(conn, buffer, plan: WorkerPlan) -> None:
    """Worker process main loop: answer each command with REPLY_OK, or the traceback on failure.

    A closed pipe (the runner went away) ends the loop quietly, so a worker never outlives
    its runner.
    """
    detach_worker_signals()
    try:
        worker = ArenaWorker(plan, buffer)
        conn.send_bytes(REPLY_OK)
        while True:
            msg = conn.recv_bytes()
            if msg == MSG_STEP:
                worker.step()
            elif msg.startswith(MSG_RESET):
                apply_reset(worker, msg[len(MSG_RESET):])
            elif msg == MSG_CLOSE:
                conn.send_bytes(REPLY_OK)
                return
            else:
                raise ValueError(f"unknown runner command {msg!r}")
            conn.send_bytes(REPLY_OK)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return
    except BaseException:
        try:
            conn.send_bytes(REPLY_ERROR + traceback.format_exc().encode())
        except (BrokenPipeError, OSError):
            pass
