"""A training run's snapshots: versions named RUN-v1, RUN-v2, ..., each a checkpoint file in the
league home and an agent in the registry (parent = the previous version)."""

from __future__ import annotations

import secrets
from pathlib import Path

from torch import nn

from agents.checkpoint import save_checkpoint
from league.home import LeagueHome
from league.names import split_version
from training.ppo import PpoLearner

def next_version(prefix: str, versions: list[str]) -> str:
    """The name of the run's next snapshot: one past the highest version number so far."""
    k = 1 + max([split_version(v)[1] for v in versions], default=0)
    return f"{prefix}-v{k}"


def write_checkpoint(home: LeagueHome, name: str, net: nn.Module, learner: PpoLearner, steps: int,
                     training_config: dict) -> tuple[Path, str]:
    """Write `net` (the learner's eager network) with the learner's optimizer and running
    statistics as snapshot `name`; (path relative to the home, sha256).

    The file name is one nobody else has: created exclusively, so two writers can never replace
    each other's file. A file left by a run killed between writing and registering its snapshot
    keeps its name; this one then gets a unique suffix.
    """
    stem = f"{name}.safetensors"
    if (home.checkpoints / stem).exists():
        stem = f"{name}-{secrets.token_hex(4)}.safetensors"
    rel = Path("checkpoints") / stem
    stats = {**(learner.return_scale.stats() if learner.return_scale else {}), **learner.extra_stats} or None
    sha = save_checkpoint(home.root / rel, net, steps=steps, training_config=training_config,
                          optimizer=learner.optimizer, learner_stats=stats, exclusive=True)
    return rel, sha
