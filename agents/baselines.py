"""The baseline agents every league has (no checkpoint, every stage), weakest first:
`random`, `atba`, `rule` and `rule-pro` (the ladder of docs/learning.md, "Baseline ladder")."""

from __future__ import annotations

import numpy as np

from agents.actions import N_ACTIONS
from agents.policy import Policy, State
from agents.atba_bot import AtbaBot
from agents.rule_bot import RuleBot
from agents.rule_pro_bot import RuleProBot
from league.errors import LeagueError

BASELINE_KINDS = ("random", "atba", "rule", "rule-pro")


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
    """A fresh baseline policy by kind: "random", "atba", "rule" or "rule-pro"."""
    if name == "random":
        return RandomPolicy(seed)
    scripted = {"atba": AtbaBot, "rule": RuleBot, "rule-pro": RuleProBot}
    if name in scripted:
        return scripted[name](seed)
    raise LeagueError(f"Unknown baseline {name!r}; expected one of {', '.join(BASELINE_KINDS)}.")
