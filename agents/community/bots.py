"""The community bots the league knows (`league bot list`), and each as a league Policy.

A kind names the botpack files its adapter reads (weights, licence), how to read the weights
(agents.community.tensors: tensors only, nothing unpickled or run), the adapter that plays them
(its network written in this project), the team sizes and tick skip the bot was made for, and
what the adapter does not reproduce of the bot's own code (also in its module's docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.action_spaces import ActionSpace
from agents.game_state import GameArrays
from agents.policy import Policy, State


@dataclass(frozen=True)
class BotKind:
    kind: str
    title: str
    weights_file: str  # the file of the botpack folder holding the network's weights
    weights_format: str  # "torchscript" or "state_dict": which restricted reader takes it
    licence: str  # what the licence allows, in a few words (the text itself is copied from the folder)
    team_sizes: tuple[int, ...]
    tick_skip: int
    not_reproduced: tuple[str, ...]
    adapter: Callable[[], type]  # the adapter class (imported when used)

    def read_weights(self, path: Path, data: bytes) -> dict[str, torch.Tensor]:
        """The tensors of the weights file `path`, whose bytes are `data`, by its format's restricted reader."""
        from agents.community.tensors import read_state_dict, read_torchscript_tensors

        return (read_torchscript_tensors if self.weights_format == "torchscript" else read_state_dict)(path, data)


def _necto() -> type:
    from agents.community.necto import NectoPolicy

    return NectoPolicy


def _element() -> type:
    from agents.community.element import ElementPolicy

    return ElementPolicy


KINDS: dict[str, BotKind] = {
    "necto": BotKind(
        "necto", "Necto (Rolv-Arild and the Necto team; RLGym + rocket-learn)", "necto-model.pt", "torchscript",
        "CC BY-NC-SA 4.0: non-commercial use, with attribution, derivatives under the same licence",
        (1, 2, 3), 8,
        ("bot.py's scripted kickoff: the network plays every kickoff (played at the 8-tick step, the script lost "
         "20 of 40 games to Necto without it: docs/community.md)",
         "bot.py's random actions once a match has ended: the adapter always plays its greedy action",
         "rlgym_compat 1.x's has_flip (not double_jumped) and its 6-tick on-ground grace: RLGym v2's values are used"),
        _necto),
    "element": BotKind(
        "element", "Element (Rangler; RLGym)", "model.p", "state_dict",
        "the RLBotPack licence (MIT): use, copy, modify and distribute with the copyright notice",
        (1,), 8,
        ("bot.py's scripted speed-flip kickoff: the network plays every kickoff (played at the 8-tick step, the "
         "flip lost 33 of 40 games to Element without it: docs/community.md)",),
        _element),
}


class CommunityPolicy(Policy):
    """A community bot's adapter as a league Policy: it reads the game and speaks raw controls."""

    reads_game = True
    speaks_controls = True
    recurrent = True  # adapters may keep per-row memory (Necto's pad and demo timers)

    def __init__(self, adapter: Any, name: str, space: ActionSpace):
        self.adapter, self.name, self.space = adapter, name, space

    def initial_state(self, n: int) -> State:
        return self.adapter.initial_state(n)

    def act(self, obs: np.ndarray, state: State = None, episode_start: np.ndarray | None = None,
            deterministic: bool = False) -> tuple[np.ndarray, State]:
        raise NotImplementedError(f"{self.name} reads the game state, not the league's observation (act_game)")

    def act_game(self, game: GameArrays, rows: np.ndarray, state: State = None,
                 episode_start: np.ndarray | None = None, deterministic: bool = False) -> tuple[np.ndarray, State]:
        return self.adapter.act(game, rows, state, episode_start)

    def act_game_probs(self, game: GameArrays, rows: np.ndarray, state: State = None,
                       episode_start: np.ndarray | None = None) -> tuple[np.ndarray, State]:
        """Each head's probabilities [R, space.logits] (a teacher's label), and the new state, as act_game."""
        _, probs, state = self.adapter.act_probs(game, rows, state, episode_start)
        return probs, state
