"""Episode rules as RLGym DoneConditions that the game runner can also evaluate batched.

Each class is an RLGym DoneCondition (usable in an `rlgym.api.RLGym` env, arena.engine.game) and adds
`is_done_batch(StepBatch) -> [E] bool` for the runner, so a rule is written once for both.
Timeouts subclass RLGym's own conditions; the batched forms read the runner's per-arena
bookkeeping (ticks since the episode began, ticks since the last touch), which follows the
same tick arithmetic as RLGym's (`ticks / 120 >= timeout_seconds`).

The game clock and score of a game live in `shared_info[GAME_CLOCK_KEY]` (a GameClock) for
RLGym envs; the runner keeps the same numbers as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from rlgym.api import DoneCondition
from rlgym.rocket_league.api import GameState
from rlgym.rocket_league.done_conditions import GoalCondition, NoTouchTimeoutCondition, TimeoutCondition

from arena.engine.batch import StepBatch

GAME_CLOCK_KEY = "game_clock"


@dataclass
class GameClock:
    """Clock and score of one game, as the observation's game block reports them."""

    seconds_left: float
    blue: int = 0
    orange: int = 0
    overtime: bool = False


class _Unbatched:
    def reset_batch(self, envs: np.ndarray, start_states: list[GameState]) -> None:
        """Batched rules read the runner's bookkeeping; they keep no per-arena state."""


class GoalScored(_Unbatched, GoalCondition):
    """Terminates the episode when a goal is scored (training mode)."""

    def is_done_batch(self, batch: StepBatch) -> np.ndarray:
        return batch.goals.sum(axis=1) > 0


class NoTouchTimeout(_Unbatched, NoTouchTimeoutCondition):
    """Truncates the episode when nobody touched the ball for `timeout_seconds`."""

    def is_done_batch(self, batch: StepBatch) -> np.ndarray:
        return batch.seconds_since_touch >= self.timeout_seconds


class EpisodeTimeout(_Unbatched, TimeoutCondition):
    """Truncates the episode after `timeout_seconds` of game time."""

    def is_done_batch(self, batch: StepBatch) -> np.ndarray:
        return batch.episode_seconds >= self.timeout_seconds


class GameClockOver(_Unbatched, DoneCondition[Any, GameState]):
    """Ends a timed game when its clock reaches zero (a tie then is a draw; no overtime)."""

    def reset(self, agents: list, initial_state: GameState, shared_info: dict[str, Any]) -> None:
        pass

    def is_done(self, agents: list, state: GameState, shared_info: dict[str, Any]) -> dict:
        over = shared_info[GAME_CLOCK_KEY].seconds_left <= 0
        return {agent: over for agent in agents}

    def is_done_batch(self, batch: StepBatch) -> np.ndarray:
        return batch.seconds_left <= 0
