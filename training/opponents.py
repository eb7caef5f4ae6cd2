"""The self-play opponent pool: which opponent plays in which env, and their loaded policies.

Each env's non-learner team is driven by one opponent. Opponents are drawn by the configured
mix (league.matchmaking) when the pool is refreshed (at every snapshot), the number of
distinct loaded policies is bounded, and the rows of each opponent are grouped once into an
index array so every step makes one batched `act` call per opponent policy.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agents.loading import load_policy
from agents.nn_policy import NetworkPolicy
from agents.policy import Policy
from league.config import TrainingConfig
from league.matchmaking import sample_opponents, win_rate
from league.registry import Registry

LATEST = "<latest>"  # the learner's own weights as of the last refresh


@dataclass
class OpponentGroup:
    name: str
    policy: Policy
    rows: np.ndarray  # runner rows this opponent drives
    envs: np.ndarray  # the envs those rows belong to
    state: object = None


@dataclass
class OpponentPool:
    groups: list[OpponentGroup] = field(default_factory=list)
    env_opponent: np.ndarray | None = None  # [E_league] index into groups

    def names(self) -> list[str]:
        return [g.name for g in self.groups]


def draw_pool(
    registry: Registry, cfg: TrainingConfig, run: str, team_size: int, latest_net, versions: list[str],
    opp_rows_of_env: np.ndarray, rng: np.random.Generator, home_root: Path, seed: int,
) -> OpponentPool:
    """Sample an opponent for every league env (the envs not in pure self-play) and load each once.

    The mix's `latest` share is played by the learner itself on both sides (see
    training.selfplay); here it only takes over the shares of sources with no candidates yet,
    as a frozen copy of the latest weights. `versions`: the run's snapshot names, oldest
    first; `opp_rows_of_env`: [E_league, team_size] runner rows of each env's opponent team.
    """
    active = {a.name for a in registry.agents(include_retired=False)}
    past = [v for v in versions[:-1] if v in active]
    payoff = registry.payoff(run, team_size)
    rates = [win_rate(*payoff.get(v, (0, 0, 0))) for v in past]
    baselines = [b for b in ("rule", "random") if b in active]
    n_envs = len(opp_rows_of_env)
    mix = {k: v for k, v in vars(cfg.opponents).items() if k != "latest"}
    picks = sample_opponents(n_envs, mix, LATEST, past, rates, baselines, rng, cfg.pfsp_weighting)
    # Bound the distinct policies: the most frequent ones stay, the rest play the latest self.
    counts = {name: picks.count(name) for name in dict.fromkeys(picks)}
    keep = sorted(counts, key=lambda n: (n != LATEST, -counts[n]))[: cfg.max_opponents]
    picks = [p if p in keep else LATEST for p in picks]

    pool = OpponentPool(env_opponent=np.zeros(n_envs, dtype=np.int64))
    env_names = np.array(picks, dtype=object)
    for k, name in enumerate(dict.fromkeys(picks)):
        envs = np.flatnonzero(env_names == name)
        if name == LATEST:
            policy: Policy = NetworkPolicy(copy.deepcopy(latest_net).cpu(), name=LATEST)
        else:
            policy = load_policy(registry.agent(name), home_root=home_root)
        policy.seed(seed + k)
        rows = opp_rows_of_env[envs].reshape(-1)
        group = OpponentGroup(name, policy, rows, np.repeat(envs, opp_rows_of_env.shape[1]))
        group.state = policy.initial_state(len(rows))
        pool.groups.append(group)
        pool.env_opponent[envs] = k
    return pool
