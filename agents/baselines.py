"""The baseline agents every league has: `random` and `rule` (no checkpoint, every stage)."""

from __future__ import annotations

import numpy as np

from agents.actions import N_ACTIONS
from agents.policy import Policy, State
from agents.rule_bot import RuleBot
from league.errors import LeagueError

BASELINE_KINDS = ("random", "rule")


class RandomPolicy(Policy):
    """Uniform over the action table, from its own numpy Generator."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(
        self,
        obs: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        # Deterministic has no meaning for a uniform policy: it stays random (and seeded).
        return self.rng.integers(0, N_ACTIONS, size=len(obs), dtype=np.int64), None


def make_baseline(name: str, seed: int | None = None) -> Policy:
    """A fresh baseline policy by kind: "random" or "rule"."""
    if name == "random":
        return RandomPolicy(seed)
    if name == "rule":
        return RuleBot(seed)
    raise LeagueError(f"Unknown baseline {name!r}; expected one of {', '.join(BASELINE_KINDS)}.")
