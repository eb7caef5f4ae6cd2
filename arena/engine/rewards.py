"""The runner's default reward: +1 to every car of the scoring team, -1 to every car conceding.

An RLGym RewardFunction (RLGym's GoalReward) with the batched form the runner calls
(arena.engine.batch). Training plugs in its own reward objects the same way.
"""

from __future__ import annotations

import numpy as np
from rlgym.rocket_league.api import GameState
from rlgym.rocket_league.reward_functions import GoalReward as RLGymGoalReward

from arena.engine.batch import StepBatch


class GoalReward(RLGymGoalReward):
    def reset_batch(self, envs: np.ndarray, start_states: list[GameState]) -> None:
        pass

    def get_rewards_batch(self, batch: StepBatch, terminated: np.ndarray, truncated: np.ndarray) -> np.ndarray:
        teams = batch.teams.astype(np.int64)
        own = batch.goals[:, teams]  # [E, C]: goals of each car's team this step
        conceded = batch.goals[:, 1 - teams]
        return (own - conceded).astype(np.float32)
