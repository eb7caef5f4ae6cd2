"""The Policy interface: batched inference for every kind of agent (docs/contract.md).

A policy maps a batch of observations [N, OBS_DIM] (float32, agents.obs layout) and its
recurrent state to actions [N] (int64 indices into agents.actions.ACTION_TABLE) and a new
state. Contract version 2 adds two choices for agents that think in the game's own terms
(community bots): `reads_game` (act from the game state, agents.game_state.GameArrays, with
`act_game` instead of the observation) and `speaks_controls` (answer raw controls [N, 8]
instead of table indices). Agents that choose neither are called exactly as before. `episode_start[i]` is true when row i begins a new episode, so recurrent policies
reset that row's state. Rows are independent: a policy never assumes which env or car a row
belongs to. Policies that sample own their random generator, seeded with `seed()`, so a
game with a seed is reproducible.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from agents.game_state import GameArrays

State = Any  # None for feed-forward policies; policy-specific arrays/tensors otherwise
AGENT_CONTRACT_VERSION = 2  # 1: observation in, action index out; 2: adds reads_game and speaks_controls


class Policy(ABC):
    name: str = "policy"
    recurrent: bool = False
    reads_game: bool = False  # acts with act_game(game, rows, ...) from the game state, not from observations
    speaks_controls: bool = False  # answers raw controls [N, 8] float32, not action indices

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

    def act_game(
        self,
        game: GameArrays,
        rows: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        """For policies that read the game: the answer for runner rows `rows` (row e * C + c is car c
        of arena e of `game`), actions [R] or, with speaks_controls, controls [R, 8]."""
        raise NotImplementedError(f"{type(self).__name__} acts from observations (reads_game is false)")
