"""A single-agent Gymnasium env: the learner drives one car, a fixed Policy drives all the others.

Built on the game runner (one arena, in-process placement), so it plays exactly the game and the
observation layout the vectorized runner plays. Spaces are the runner's single-agent spaces:
Box(196) float32 observations, Discrete(90) actions. The opponent policy gets one batched
`act` call per step for every car that is not the learner's (teammates included, in 2v2/3v3).

Episodes follow the game mode (arena.engine.game.GameSpec): in training mode a goal terminates the
episode and the timeouts truncate it; in timed mode the episode is one whole game. At the end
of an episode `step` returns the episode's last observation (the runner has already started the
next one; `reset` starts a fresh one anyway). `reset(seed=s)` reseeds the start states and the
opponent, so a seeded episode replays exactly.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.policy import Policy
from arena.engine.game import GamePlugins, GameSpec, Mode
from arena.engine.placement import Placement
from arena.engine.vector import VecGame, action_space, observation_space


class SingleAgentEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(
        self,
        game,
        opponent: Policy,
        *,
        mode: Mode = "training",
        learner_car: int = 0,
        seed: int = 0,
        plugins: GamePlugins | None = None,
    ):
        """`game`: a GameSpec or league.config.GameConfig; `learner_car`: the learner's car index
        (0..2*team_size-1, blue cars first)."""
        spec = game if isinstance(game, GameSpec) else GameSpec.from_config(game, mode)
        if not 0 <= learner_car < spec.n_cars:
            raise ValueError(f"learner_car must be in [0, {spec.n_cars}), got {learner_car}")
        self.observation_space = observation_space()
        self.action_space = action_space()
        self.opponent = opponent
        self.learner = learner_car
        self._games = VecGame(spec, workers=1, envs_per_worker=1, placement=Placement.IN_PROCESS, seed=seed, plugins=plugins)
        self._others = np.flatnonzero(np.arange(spec.n_cars) != learner_car)
        self._actions = np.zeros(spec.n_cars, dtype=np.int64)
        self._obs: np.ndarray | None = None
        self._opponent_state = None
        self._opponent_start = np.ones(len(self._others), dtype=bool)

    @property
    def team(self) -> int:
        """The learner's team: 0 blue, 1 orange."""
        return int(self._games.teams[self.learner])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.opponent.seed(seed)
        self._obs = self._games.reset(seed=seed)
        self._opponent_state = self.opponent.initial_state(len(self._others))
        self._opponent_start[:] = True
        return self._obs[self.learner].copy(), self._info()

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"action must be an integer in [0, {self.action_space.n}), got {action!r}")
        self._actions[self.learner] = int(action)
        if len(self._others):
            opp, self._opponent_state = self.opponent.act(
                self._obs[self._others], self._opponent_state, self._opponent_start, deterministic=False)
            self._actions[self._others] = opp
        obs, rewards, terminated, truncated, info = self._games.step(self._actions)
        self._obs = obs
        self._opponent_start[:] = info.episode_start[self._others]
        done_term, done_trunc = bool(terminated[self.learner]), bool(truncated[self.learner])
        last = info.final_obs if (done_term or done_trunc) else obs
        return last[self.learner].copy(), float(rewards[self.learner]), done_term, done_trunc, self._info()

    def _info(self) -> dict:
        info = self._games.info
        blue, orange = (int(v) for v in info.episode_score[0])
        return {"score": (blue, orange), "seconds_left": float(info.seconds_left[0]),
                "goals": tuple(int(g) for g in info.goals[0])}

    def close(self) -> None:
        self._games.close()
        super().close()
