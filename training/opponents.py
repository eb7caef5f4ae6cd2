"""The self-play opponents: which envs are pure self-play, which opponent plays in each of the
others, and their loaded policies.

`lay_out` sets the mix's self-play share of the envs apart once, at the start of a run. Each
other env's non-learner team is driven by one opponent. Opponents are drawn by the configured
mix (league.matchmaking) when the pool is refreshed (at every snapshot, `draw_picks`), the
number of distinct policies is bounded, and each is handed to collection as a PolicySpec (its
weights as arrays, so a Ray rollout worker on another node needs no league files); there
`build_pool` groups the rows of each opponent once into an index array, so every step makes
one batched `act` call per opponent policy, and the feed-forward networks among them act
together, stacked (agents.stacked: one batched matmul per layer for all of them).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from agents.baselines import BASELINE_KINDS, make_baseline
from agents.community.install import community_policy, community_tensors
from agents.loading import checkpoint_file, load_policy
from agents.networks import build_network
from agents.nn_policy import NetworkPolicy
from agents.policy import Policy
from agents.stacked import StackedActors, architecture_key, stackable
from arena.engine.vector import VecGame
from league.config import OpponentMix, PolicyConfig, TrainingConfig
from league.matchmaking import sample_opponents
from league.registry import PayoffRecord, Registry
from training.seeds import derived_seed

# The pool's name for the learner's own weights as of the last refresh (a frozen copy). Not an
# agent name: the name rule (league.names) refuses "<", so no registry agent can be mistaken for it.
LATEST = "<latest>"


@dataclass
class OpponentGroup:
    """One opponent: its name (results are counted against it) and the league envs it plays in."""

    name: str
    envs: np.ndarray


@dataclass
class Actor:
    """What acts for one or more opponent groups: one `act` call per step on its rows."""

    policy: Policy
    rows: np.ndarray
    state: object = None


@dataclass
class OpponentPool:
    groups: list[OpponentGroup] = field(default_factory=list)
    env_opponent: np.ndarray | None = None  # [E_league] index into groups
    actors: list[Actor] = field(default_factory=list)

    def names(self) -> list[str]:
        return [g.name for g in self.groups]


def split_mix(mix: OpponentMix) -> tuple[float, dict[str, float]]:
    """The configured mix as (the share of envs in pure self-play, the weights of the league's sources).

    The `latest` share is played by the learner itself on both sides (`lay_out` sets those envs
    apart); the other sources' weights are drawn from in the remaining, "league", envs. An
    all-zero mix is pure self-play.
    """
    weights = vars(mix)
    total = sum(weights.values())
    share = weights["latest"] / total if total > 0 else 1.0
    return share, {k: v for k, v in weights.items() if k != "latest"}


@dataclass(frozen=True)
class Layout:
    """Who drives which runner row: the learner, or the league opponent of its env."""

    learner_rows: np.ndarray  # [S] every car of a self-play env, the learner's team of a league env
    learner_envs: np.ndarray  # [S] the env of each learner row
    league_envs: np.ndarray  # [E_l] the envs whose other team is a league opponent
    opponent_rows: np.ndarray  # [E_l, team_size] the rows of those opponents


def lay_out(games: VecGame, mix: OpponentMix, team_size: int) -> Layout:
    """The first envs, the mix's self-play share of them, are pure self-play; in the others the
    learner is blue in even envs and orange in odd ones (so it learns both sides)."""
    self_play_share, _ = split_mix(mix)
    n_self = int(round(games.num_envs * self_play_share))
    self_play = np.arange(games.num_envs) < n_self
    side = np.arange(games.num_envs) % 2
    learner_mask = self_play[games.env_of_row] | (games.teams == side[games.env_of_row])
    learner_rows = np.flatnonzero(learner_mask)
    league_envs = np.flatnonzero(~self_play)
    opponent_rows = np.flatnonzero(~learner_mask).reshape(len(league_envs), team_size)
    return Layout(learner_rows, games.env_of_row[learner_rows], league_envs, opponent_rows)


def draw_picks(registry: Registry, cfg: TrainingConfig, run: str, team_size: int, versions: list[str],
               n_envs: int, rng: np.random.Generator, pool: Sequence[str] = (),
               panel: Sequence[str] = ()) -> list[str]:
    """The opponent of each of `n_envs` league envs (the envs not in pure self-play), by the mix.

    The mix's `latest` share is played by the learner itself on both sides (see split_mix);
    here LATEST only takes over the shares of sources with no candidates yet, as a frozen copy
    of the latest weights. `versions`: the run's snapshot names, oldest first; `pool`: other
    agents that join its earlier versions as candidates of the `past` and `pfsp` sources (league
    roles: the exploiters' snapshots in the main agent's pool); `panel`: the evaluation panel's
    members, the `panel` source's candidates (PFSP over the run's scores against them). The distinct
    opponents are bounded by `max_opponents`: the most frequent stay, the rest play LATEST.
    """
    active = {a.name for a in registry.agent_store.all(include_retired=False)}
    past = [v for v in dict.fromkeys([*pool, *versions[:-1]]) if v in active]
    payoff = registry.payoff_store.get(run, team_size)
    scores = [payoff.get(v, PayoffRecord()).score for v in past]
    baselines = [b for b in ("rule", "random") if b in active]
    community = [a.name for a in registry.agent_store.all(team_size) if a.kind == "community" and a.plays(team_size)]
    members = [m for m in panel if m in active]
    _, mix = split_mix(cfg.opponents)
    picks = sample_opponents(n_envs, mix, LATEST, past, scores, baselines, rng, cfg.pfsp_weighting, community,
                             members, [payoff.get(m, PayoffRecord()).score for m in members])
    counts = {name: picks.count(name) for name in dict.fromkeys(picks)}
    keep = sorted(counts, key=lambda n: (n != LATEST, -counts[n]))[: cfg.max_opponents]
    return [p if p in keep else LATEST for p in picks]


@dataclass
class PolicySpec:
    """What it takes to build a policy anywhere (a thread, a Ray worker on another node): a
    baseline's kind, a network's config and weights as numpy arrays, or a community bot's kind
    (`bot`) and tensors. Made by the learner from files it has verified; never read from a file."""

    name: str
    kind: str
    config: PolicyConfig | None = None
    weights: dict[str, np.ndarray] | None = None
    bot: str | None = None  # a community bot's kind (agents.community.bots.KINDS)
    temperature: float = 1.0  # a network's, as it sampled in training (ppo.temperature)

    def policy(self) -> Policy:
        if self.bot is not None:
            return community_policy(self.bot, self.weights, self.name)
        if self.weights is None:
            return make_baseline(self.kind)
        return NetworkPolicy(network_from(self.config, self.weights), name=self.name, temperature=self.temperature)

    @property
    def reads_game(self) -> bool:
        """Whether its policy acts from the game state (a community bot): its runner must publish it."""
        return self.bot is not None


def network_from(config: PolicyConfig, weights: dict[str, np.ndarray]) -> torch.nn.Module:
    """A network built from its config, holding `weights` (a state dict as numpy arrays)."""
    net = build_network(config)
    net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})
    return net


def numpy_weights(net: torch.nn.Module) -> dict[str, np.ndarray]:
    """A network's state dict as numpy arrays on the CPU (a copy)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def network_spec(name: str, net: torch.nn.Module, temperature: float = 1.0) -> PolicySpec:
    return PolicySpec(name, net.config.kind, copy.deepcopy(net.config), numpy_weights(net), temperature=temperature)


def agent_spec(registry: Registry, name: str, home_root: Path) -> PolicySpec:
    """The spec of a registry agent, its checkpoint read and verified here."""
    agent = registry.agent_store.get(name)
    if agent.kind in BASELINE_KINDS:
        return PolicySpec(name, agent.kind)
    if agent.kind == "community":
        bot, tensors = community_tensors(agent, checkpoint_file(agent, home_root))
        return PolicySpec(name, agent.kind, weights={k: v.numpy() for k, v in tensors.items()}, bot=bot)
    policy = load_policy(agent, home_root=home_root)
    return network_spec(name, policy.net, policy.temperature)


def pool_specs(picks: list[str], registry: Registry, home_root: Path, latest_net,
               latest_temperature: float = 1.0) -> dict[str, PolicySpec]:
    """A spec for each distinct opponent in `picks` (LATEST: a frozen copy of `latest_net`, sampling at the
    learner's `latest_temperature`)."""
    return {name: network_spec(LATEST, latest_net, latest_temperature) if name == LATEST
            else agent_spec(registry, name, home_root)
            for name in dict.fromkeys(picks)}


def build_pool(picks: list[str], specs: dict[str, PolicySpec], opp_rows_of_env: np.ndarray, seed: int,
               device: torch.device | str = "cpu") -> OpponentPool:
    """The opponent pool of league envs whose opponents are `picks`, one group per distinct name.

    `opp_rows_of_env`: [E_league, team_size] runner rows of each env's opponent team; `seed`:
    this pool's seed, from which each actor's own is derived; `device`: where the networks act
    (the learner's). Scripted baselines and recurrent networks act alone; the feed-forward
    networks of one architecture act as one StackedActors.
    """
    pool = OpponentPool(env_opponent=np.zeros(len(picks), dtype=np.int64))
    env_names = np.array(picks, dtype=object)
    stacks: dict[tuple, list[tuple[torch.nn.Module, np.ndarray]]] = {}
    for k, name in enumerate(dict.fromkeys(picks)):
        envs = np.flatnonzero(env_names == name)
        rows = opp_rows_of_env[envs].reshape(-1)
        pool.groups.append(OpponentGroup(name, envs))
        pool.env_opponent[envs] = k
        spec = specs[name]
        net = network_from(spec.config, spec.weights) if spec.config is not None else None
        if net is not None and stackable(net):
            stacks.setdefault((architecture_key(net), spec.temperature), []).append((net, rows))
            continue
        policy = spec.policy() if net is None else NetworkPolicy(net, device, name=name, temperature=spec.temperature)
        pool.actors.append(Actor(policy, rows))
    for (_, temperature), members in stacks.items():
        pool.actors.append(Actor(StackedActors([n for n, _ in members], [len(r) for _, r in members], device,
                                               temperature=temperature),
                                 np.concatenate([r for _, r in members])))
    for k, actor in enumerate(pool.actors):
        actor.policy.seed(derived_seed(seed, "opponent", k))
        actor.state = actor.policy.initial_state(len(actor.rows))
    return pool
