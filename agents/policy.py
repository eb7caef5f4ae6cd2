"""The Policy interface: batched inference for every kind of agent.

A policy maps a batch of observations [N, OBS_DIM] (float32, agents.obs layout) and its
recurrent state to actions [N] (int64 indices into agents.actions.ACTION_TABLE) and a new
state. `episode_start[i]` is true when row i begins a new episode, so recurrent policies
reset that row's state. Rows are independent: a policy never assumes which env or car a row
belongs to. Policies that sample own their random generator, seeded with `seed()`, so a
game with a seed is reproducible.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

State = Any  # None for feed-forward policies; policy-specific arrays/tensors otherwise


class Policy(ABC):
    name: str = "policy"
    recurrent: bool = False

    def initial_state(self, n: int) -> State:
        """Recurrent state for n fresh rows (None for feed-forward policies)."""
        return None

    def seed(self, seed: int) -> None:
        """Seed the policy's own sampling generator."""

    @abstractmethod
    def act(
        self,
        obs: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        """Actions [N] int64 and the new state for observations [N, OBS_DIM]."""
