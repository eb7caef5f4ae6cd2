"""Turn a registry agent (or a bare kind) into a playable Policy.

Tournaments, evaluation games and training opponents all go through `load_policy`: the
baselines are built fresh, checkpointed agents are verified against the sha256 the
registry recorded before a single weight is used.
"""

from __future__ import annotations

from pathlib import Path

import torch

from agents.baselines import BASELINE_KINDS, make_baseline
from agents.checkpoint import load_checkpoint
from agents.nn_policy import NetworkPolicy
from agents.policy import Policy
from league.errors import LeagueError
from league.registry import Agent


def checkpoint_file(agent: Agent, home_root: Path | None) -> Path:
    """The agent's checkpoint on disk; relative paths in the registry are relative to the league home."""
    if not agent.checkpoint_path:
        raise LeagueError(f"Agent {agent.name!r} ({agent.kind}) has no checkpoint.")
    path = Path(agent.checkpoint_path)
    if path.is_absolute():
        return path
    if home_root is None:
        raise LeagueError(f"Agent {agent.name!r} has a checkpoint path relative to its league home; "
                          "pass the league home to load it.")
    return Path(home_root) / path


def load_policy(
    agent: Agent | str,
    *,
    checkpoint_path: str | Path | None = None,
    expected_sha256: str | None = None,
    home_root: Path | None = None,
    device: torch.device | str = "cpu",
    seed: int | None = None,
) -> Policy:
    """A Policy for a registry Agent, or for a kind (a baseline of BASELINE_KINDS, or "mlp", "lstm") plus a checkpoint.

    With an Agent, the checkpoint path and sha256 come from the registry (relative paths are
    resolved against `home_root`); `checkpoint_path`/`expected_sha256` are for bare kinds.
    """
    if isinstance(agent, Agent):
        if agent.kind == "community":
            from agents.community.install import load_community  # torch's adapters only where they play

            return load_community(agent, checkpoint_file(agent, home_root))
        kind, name = agent.kind, agent.name
        if kind not in BASELINE_KINDS:
            checkpoint_path = checkpoint_file(agent, home_root)
            expected_sha256 = agent.checkpoint_sha256
    else:
        kind = name = agent
    if kind in BASELINE_KINDS:
        return make_baseline(kind, seed)
    if checkpoint_path is None:
        raise LeagueError(f"A {kind!r} agent needs a checkpoint file to play.")
    ckpt = load_checkpoint(checkpoint_path, expected_sha256=expected_sha256, device=device)
    if ckpt.meta.kind != kind:
        raise LeagueError(f"Agent {name!r} is registered as {kind!r} but its checkpoint holds a "
                          f"{ckpt.meta.kind!r} network.")
    temperature = agent.temperature if isinstance(agent, Agent) else 1.0
    policy = NetworkPolicy(ckpt.net, device=device, name=name, temperature=temperature)
    if seed is not None:
        policy.seed(seed)
    return policy
