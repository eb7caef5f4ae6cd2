"""The vectorized game runner: W workers x M RocketSim arenas behind one batched interface.

    with VecGame(cfg.game, cfg.runner, seed=cfg.seed) as games:
        obs = games.reset()                         # [N, 196] float32, N = envs * cars
        while ...:
            obs, rewards, terminated, truncated, info = games.step(actions)   # actions [N] int
            games.step(actions, controls, use_controls)   # rows of agents speaking raw controls [N, 8]
        games.game_state()                          # GameArrays, when the GameSpec asks for game_state

Row `e * C + c` is car c (car-id order: blue cars, then orange) of arena e; `games.teams`,
`games.env_of_row` and `games.car_of_row` say which, so callers group rows by policy with
index arrays. Finished arenas reset automatically: the returned obs already starts the next
episode (`info.episode_start`), and `info.final_obs` keeps the last observation of the one that
ended. Returned arrays are views of the runner's shared memory, overwritten by the next step:
copy what you keep.

The main process does no per-arena work: it writes actions and waits. Workers run one after
another in this process (Placement.IN_PROCESS) or as processes (Placement.PROCESSES; from a
config, arena.engine.placement.Backend.games_of its `runner.backend`), PufferLib style, with
identical results for a seed, since each arena's randomness depends only on the seed and its
global index.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from agents.actions import N_ACTIONS
from agents.game_state import GameArrays
from agents.obs import OBS_DIM
from arena.engine.transports import WorkerError, make_transport, reset_games_message, reset_message
from arena.engine.cores import default_workers, workers_or_default
from arena.engine.phases import add_phases
from arena.engine.game import GamePlugins, GameSpec, Mode
from arena.engine.placement import Backend, Placement, as_placement
from arena.engine.sim import team_layout
from arena.engine.worker import MSG_STEP, WorkerPlan

# default_workers stays importable from here, where it lived before arena.engine.cores.
__all__ = ["VecGame", "StepInfo", "WorkerError", "observation_space", "action_space", "default_workers"]


def observation_space() -> gym.spaces.Box:
    """One agent's observation: agents.obs layout, float32 [196]."""
    return gym.spaces.Box(-np.inf, np.inf, shape=(OBS_DIM,), dtype=np.float32)


def action_space() -> gym.spaces.Discrete:
    """One agent's action: an index into agents.actions.ACTION_TABLE."""
    return gym.spaces.Discrete(N_ACTIONS)


@dataclass
class StepInfo:
    """Per-step arrays beyond (obs, rewards, terminated, truncated); views, like everything returned.

    Per row [N]: final_obs [N, 196] (valid where the row's arena is done), episode_start.
    Per arena [E]: done, goals [E, 2] (scored this step, blue/orange), touches [E, C] (ticks
    each car touched the ball this step), score [E, 2] and seconds_left (the game the obs
    shows, after any reset), episode_score [E, 2] and episode_seconds (the episode as it stood
    at the end of this step: for a done arena, the final score and the episode's length).
    """

    final_obs: np.ndarray
    episode_start: np.ndarray
    done: np.ndarray
    goals: np.ndarray
    touches: np.ndarray
    score: np.ndarray
    seconds_left: np.ndarray
    episode_score: np.ndarray
    episode_seconds: np.ndarray


DEFAULT_ENVS_PER_WORKER = 32


def envs_per_worker_of(runner, auto: int = DEFAULT_ENVS_PER_WORKER) -> int:
    """A runner config's arenas per worker; 0 there means auto: `auto`, by default DEFAULT_ENVS_PER_WORKER
    (training's rollout workers, which run the forwards themselves, ask for more: training.rollout_worker).

    Each step costs a worker a fixed overhead (wake-up, shared-memory hand-off) plus its arenas'
    physics, so the choice is per worker, whatever the core count: 32 amortise the fixed part.
    Measured with `league diagnose --test env` on 2 cores (2 workers): 16 arenas gave 0.73x the
    runner/ceiling ratio of 32, and 64 gave 0.92x (random actions) to 1.10x (MLP policy), within
    the noise. Measure again (`--set runner.envs_per_worker=N --baseline`) on a bigger machine.
    """
    return getattr(runner, "envs_per_worker", 0) or auto


class VecGame:
    def __init__(
        self,
        game,
        runner=None,
        *,
        mode: Mode = "training",
        seed: int = 0,
        workers: int | None = None,
        envs_per_worker: int | None = None,
        placement: Placement | str | None = None,
        plugins: GamePlugins | None = None,
    ):
        """`game`: a league.config.GameConfig or a GameSpec; `runner`: a league.config.RunnerConfig.

        Keyword arguments override the runner config; `placement`: where the workers run, in this
        process or in worker processes (default: what the runner config's backend says for games). `plugins` carries training's reward
        function, extra start-state mutators and extra done conditions (RLGym objects).
        """
        spec = game if isinstance(game, GameSpec) else GameSpec.from_config(game, mode)
        workers = workers if workers is not None else getattr(runner, "workers", 0)
        workers = workers_or_default(workers)
        if envs_per_worker is None:  # the runner config's value; 0 there means auto
            envs_per_worker = envs_per_worker_of(runner)
        placement = (as_placement(placement, "VecGame") if placement is not None
                     else Backend.games_of(getattr(runner, "backend", None)))
        if workers < 1 or envs_per_worker < 1:
            raise ValueError(f"need at least one worker and one arena per worker, got workers={workers}, "
                             f"envs_per_worker={envs_per_worker}")
        self.spec = spec
        self.seed = seed
        self.n_workers = workers
        self.envs_per_worker = envs_per_worker
        self.num_envs = workers * envs_per_worker
        self.agents_per_env = spec.n_cars
        self.num_agents = self.num_envs * self.agents_per_env

        rows = np.arange(self.num_agents)
        self.env_of_row = rows // self.agents_per_env
        self.car_of_row = rows % self.agents_per_env
        self.teams = np.tile(team_layout(spec.team_size), self.num_envs)  # [N] 0 blue, 1 orange

        self.single_observation_space = observation_space()
        self.single_action_space = action_space()
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(self.num_agents, OBS_DIM), dtype=np.float32)
        self.action_space = gym.spaces.MultiDiscrete(np.full(self.num_agents, N_ACTIONS))

        plans = [
            WorkerPlan(spec=spec, plugins=plugins or GamePlugins(), first_env=w * envs_per_worker,
                       n_envs=envs_per_worker, total_envs=self.num_envs, seed=seed)
            for w in range(workers)
        ]
        self.placement = placement
        self._transport = make_transport(placement, plans)
        arrays = self._transport.arrays
        self._arrays = arrays
        self.info = StepInfo(**{name: arrays[name] for name in StepInfo.__dataclass_fields__})
        self._speaking = False  # whether use_controls holds a row set by the last step
        self._closed = False

    # ------------------------------------------------------------------ stepping

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Start a new episode in every arena; with a seed, reseed every arena's start states."""
        self._check_open()
        self._transport.send(reset_message(seed))
        self._wait()
        return self._arrays["obs"]

    def reset_games(self, seeds: list[int]) -> np.ndarray:
        """Start one game per arena, arena e's start state drawn from seeds[e] alone (see ArenaWorker.reset_games)."""
        self._check_open()
        if len(seeds) != self.num_envs:
            raise ValueError(f"need one seed per arena ({self.num_envs}), got {len(seeds)}")
        self._transport.send(reset_games_message(seeds))
        self._wait()
        return self._arrays["obs"]

    def send(self, actions: np.ndarray, controls: np.ndarray | None = None,
             use_controls: np.ndarray | None = None) -> None:
        """Hand the workers this step's actions [N] (indices into the action table); returns at once.

        Rows where `use_controls` [N] is true play `controls` [N, 8] (throttle, steer, pitch, yaw,
        roll, jump, boost, handbrake; agents speaking raw controls) instead of their action's row."""
        self._check_open()
        actions = np.asarray(actions)
        if actions.shape != (self.num_agents,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be an integer array of shape ({self.num_agents},), "
                             f"got dtype {actions.dtype} shape {actions.shape}")
        low, high = int(actions.min()), int(actions.max())
        if low < 0 or high >= N_ACTIONS:
            bad = actions[(actions < 0) | (actions >= N_ACTIONS)]
            raise ValueError(f"actions must be in [0, {N_ACTIONS}), got {bad[:8].tolist()}")
        self._arrays["actions"][:] = actions
        if use_controls is not None:
            self._arrays["use_controls"][:] = use_controls
            self._arrays["controls"][:] = np.clip(controls, -1.0, 1.0)
            self._speaking = True
        elif self._speaking:  # written only when it changes: today's agents pay nothing per step
            self._arrays["use_controls"][:] = False
            self._speaking = False
        self._transport.send(MSG_STEP)

    def recv(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, StepInfo]:
        """Wait for the step started by `send`; returns (obs, rewards, terminated, truncated, info)."""
        self._wait()
        a = self._arrays
        return a["obs"], a["rewards"], a["terminated"], a["truncated"], self.info

    def step(self, actions: np.ndarray, controls: np.ndarray | None = None,
             use_controls: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, StepInfo]:
        self.send(actions, controls, use_controls)
        return self.recv()

    def game_state(self) -> GameArrays:
        """Every arena's state as agents read it (agents.game_state), as views: valid until the next step."""
        if not self.spec.game_state:
            raise RuntimeError("this VecGame was built without GameSpec(game_state=True)")
        a = self._arrays
        return GameArrays(a["state_ball"], a["state_cars"], a["state_pads"], self.teams[:self.agents_per_env],
                          a["prev_controls"].reshape(self.num_envs, self.agents_per_env, -1))

    def _wait(self) -> None:
        try:
            self._transport.recv()
        except WorkerError:
            self.close()  # the transport has already stopped its workers; refuse further use
            raise

    # ------------------------------------------------------------------ lifetime

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this VecGame is closed")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._transport.close()

    def __enter__(self) -> VecGame:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def take_phases(self) -> dict[str, float]:
        """Seconds per phase of the in-process workers' steps since the last take (arena.engine.phases);
        empty for game worker processes, whose clocks stay in their own processes."""
        total: dict[str, float] = {}
        for worker in self.in_process_workers:
            total = add_phases(total, worker.clock.take())
        return total

    @property
    def in_process_workers(self) -> list:
        """The ArenaWorkers of the in-process placement (tests and debugging read their arenas)."""
        return list(getattr(self._transport, "workers", []))
