"""One agent from the uniform average of several agents' weights: the library behind `league average` and the
title round robin's averaged entrant (training/judge.py).

    agent = average_agents(home, registry, ["xa-v60", "xa-v64", "xa-v68"], "xa-avg")

Snapshots of one run, minutes apart, lie near one another in weight space (one start, small constant steps), and the
mean of their weights is a network of its own, not a blend of their play: a model soup (Wortsman et al., 2022) or
stochastic weight averaging over a run's snapshots (Izmailov et al., 2018; in RL, Nikishin et al., 2018). Where the
snapshots' differences are noise about one policy, the average keeps the policy and drops the noise. Whether it plays
better is for games to say: the title round robin lets it in beside its ingredients, and it holds the title only by
beating them.

Only agents of one network (the same architecture: sizes, heads, previous controls, normaliser) and one team size
average; baselines and community bots have no weights of the league's to average. Every float tensor is averaged,
the observation normaliser's running statistics too; the averaged agent's parent is its most trained ingredient,
whose config (teacher, provenance, temperature) it carries, with the ingredients under `averaged_from`, and whose
optimizer state and running statistics (the return scale) it keeps: a run resumed from it goes on as from its parent,
from the averaged weights.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Sequence

import torch

from agents.checkpoint import Checkpoint, checkpoint_paths, load_checkpoint, save_checkpoint
from agents.loading import checkpoint_file
from agents.networks import ActorCritic, build_network
from league.errors import LeagueError
from league.files import all_or_nothing
from league.home import LeagueHome
from league.registry import Agent, Registry


def averaged_network(checkpoints: Sequence[Checkpoint]) -> ActorCritic:
    """A new network whose every float tensor is the mean of `checkpoints`' (one architecture); integer tensors are
    the last checkpoint's."""
    states = [c.net.state_dict() for c in checkpoints]
    mean = {key: (torch.stack([s[key].double() for s in states]).mean(0).to(value.dtype)
                  if value.is_floating_point() else states[-1][key].clone())
            for key, value in states[0].items()}
    net = build_network(checkpoints[0].meta.architecture)
    net.load_state_dict(mean)
    return net.eval()


def _optimizer_of(ckpt: Checkpoint, net: ActorCritic) -> tuple[torch.optim.Optimizer | None, dict[str, float] | None]:
    """`ckpt`'s optimizer (its class and state, over `net`'s parameters) and the learner's running statistics."""
    settings = ckpt.meta.optimizer or {}
    kind = getattr(torch.optim, str(settings.get("class")), None)
    if ckpt.optimizer_state is None or not (isinstance(kind, type) and issubclass(kind, torch.optim.Optimizer)):
        return None, None
    optimizer = kind(net.parameters())
    optimizer.load_state_dict(ckpt.optimizer_state)
    return optimizer, settings.get("learner_stats")


def _ingredients(home: LeagueHome, registry: Registry, names: Sequence[str]) -> list[tuple[Agent, Checkpoint]]:
    """The agents named and their verified checkpoints, refused in one sentence where they cannot be averaged."""
    if len(set(names)) < 2 or len(set(names)) != len(names):
        raise LeagueError("Give two or more different agents to average.")
    out = []
    for name in names:
        agent = registry.agent_store.get(name)
        if agent.kind not in ("mlp", "lstm") or not agent.checkpoint_path:
            raise LeagueError(f"{name!r} is a {agent.kind} agent with no weights of the league's; only trained "
                              "agents (mlp, lstm) can be averaged.")
        out.append((agent, load_checkpoint(checkpoint_file(agent, home.root), expected_sha256=agent.checkpoint_sha256)))
    first_agent, first = out[0]
    for agent, ckpt in out[1:]:
        if agent.team_size != first_agent.team_size:
            raise LeagueError(f"{first_agent.name!r} and {agent.name!r} play different team sizes; only agents of "
                              "one stage can be averaged.")
        if ckpt.meta.architecture != first.meta.architecture:
            raise LeagueError(f"{first_agent.name!r} and {agent.name!r} have different networks; only agents of "
                              "one architecture (sizes, heads, inputs) can be averaged.")
    return out


def average_agents(home: LeagueHome, registry: Registry, names: Sequence[str], name: str) -> Agent:
    """Register `name`, the uniform average of the weights of agents `names` (see the module notes). The checkpoint
    is written under a file name nobody else has and registered in one transaction: both or neither."""
    from league.names import check_name

    check_name(name)
    if registry.agent_store.find(name) is not None:
        raise LeagueError(f"An agent named {name!r} already exists; choose another name.")
    ingredients = _ingredients(home, registry, names)
    parent, ckpt = max(ingredients, key=lambda pair: pair[0].steps_trained)
    config = copy.deepcopy(parent.config or ckpt.meta.training_config or {})
    config["averaged_from"] = list(names)
    net = averaged_network([c for _, c in ingredients])
    optimizer, stats = _optimizer_of(ckpt, net)
    stem = home.checkpoints / f"{name}-{secrets.token_hex(4)}"
    with all_or_nothing(f"Cannot write the average into {home.checkpoints}") as written, registry.transaction():
        home.checkpoints.mkdir(parents=True, exist_ok=True)
        sha = save_checkpoint(stem, net, steps=parent.steps_trained, training_config=config, optimizer=optimizer,
                              learner_stats=stats, exclusive=True, notes=f"the average of the weights of {', '.join(names)}")
        written.extend(checkpoint_paths(stem))  # ours from here: removed if the registration fails (never before:
        # an exclusive write that finds a file there leaves it as it was)
        return registry.agent_store.add(
            name, parent.kind, parent.team_size, parent=parent.name,
            checkpoint_path=checkpoint_paths(stem)[0].relative_to(home.root).as_posix(), checkpoint_sha256=sha,
            config=config, steps_trained=parent.steps_trained,
            notes=f"the average of the weights of {', '.join(names)}")
