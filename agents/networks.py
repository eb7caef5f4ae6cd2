"""Actor-critic networks (torch): a feed-forward MLP and a recurrent LSTM, built from PolicyConfig.

Both modules share one step interface, so the batched-inference wrapper (agents.nn_policy)
and the PPO learner treat them alike:

    step(obs [N, D], state, episode_start [N]) -> (logits [N, A], value [N], new state)

The MLP ignores `state` (always None). The LSTM additionally offers the sequence forward a
recurrent PPO update needs, `sequence_forward(obs [T, N, D], initial_state, episode_start
[T, N]) -> (logits [T, N, A], value [T, N])`, which resets each row's hidden state where its
episode starts, as CleanRL's ppo_atari_lstm.py does with its `(1 - done)` mask.

With `car_frame` on, both read the observation through agents.features.CarFrame (the ball,
the car's motion and the goals rotated into the car's frame, appended); otherwise as it is.

Initialisation follows CleanRL: orthogonal weights with gain sqrt(2) in hidden layers, 0.01
for the policy head (near-uniform first actions) and 1.0 for the value head.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import NamedTuple

import torch
from torch import nn

from agents.action_spaces import ActionSpace, action_space, discrete_space
from agents.features import CarFrame
from agents.game_state import N_CONTROLS
from agents.obs import OBS_DIM
from league.config import PolicyConfig
from league.errors import LeagueError

ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "elu": nn.ELU, "tanh": nn.Tanh}
HIDDEN_GAIN = math.sqrt(2.0)
POLICY_HEAD_GAIN = 0.01
VALUE_HEAD_GAIN = 1.0


def seed_mlp_config() -> PolicyConfig:
    """The seed documents' network: an MLP actor-critic with [1024, 512, 256] ELU layers."""
    return PolicyConfig(kind="mlp", actor_sizes=[1024, 512, 256], critic_sizes=[1024, 512, 256], activation="elu")


# Named architectures a person or a script can ask for; each call returns a fresh config.
PRESETS = {"seed-mlp": seed_mlp_config}


def policy_preset(name: str) -> PolicyConfig:
    """A named architecture, e.g. policy_preset("seed-mlp")."""
    if name not in PRESETS:
        raise LeagueError(f"Unknown policy preset {name!r}; expected one of {', '.join(sorted(PRESETS))}.")
    return PRESETS[name]()


def _own_copy(config: PolicyConfig, kind: str) -> PolicyConfig:
    """A copy of `config` naming the module's kind, sharing no lists with the caller's config."""
    return dataclasses.replace(copy.deepcopy(config), kind=kind)


def layer_init(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def input_dim(config: PolicyConfig) -> int:
    """The width of a game network's input: the observation, then its previous controls if it reads them."""
    return OBS_DIM + (N_CONTROLS if config.prev_controls else 0)


class WithPrevious(nn.Module):
    """The observation's transform on its first columns; the previous controls after them, as they are."""

    def __init__(self, inner: nn.Module, obs_dim: int):
        super().__init__()
        self.inner, self.obs_dim = inner, obs_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.inner(x[..., : self.obs_dim]), x[..., self.obs_dim:]], dim=-1)


def input_layer(config: PolicyConfig, obs_dim: int) -> tuple[nn.Module, int]:
    """The parameter-free input transform and the width it hands on: car-frame features or none, and
    with prev_controls the last N_CONTROLS columns (the previous controls) passed on after them."""
    if config.prev_controls:
        inner, width = input_layer(dataclasses.replace(config, prev_controls=False), obs_dim - N_CONTROLS)
        return WithPrevious(inner, obs_dim - N_CONTROLS), width + N_CONTROLS
    if not config.car_frame:
        return nn.Identity(), obs_dim
    if obs_dim != OBS_DIM:
        raise LeagueError(f"policy.car_frame reads the league's {OBS_DIM}-wide observation, not a {obs_dim}-wide one.")
    return CarFrame(), CarFrame.out_dim


def mlp_head(in_dim: int, sizes: list[int], out_dim: int, activation: str, out_gain: float) -> nn.Sequential:
    """Hidden layers of `sizes` with `activation`, then a linear output layer."""
    layers: list[nn.Module] = []
    width = in_dim
    for size in sizes:
        layers += [layer_init(nn.Linear(width, size), HIDDEN_GAIN), ACTIVATIONS[activation]()]
        width = size
    layers.append(layer_init(nn.Linear(width, out_dim), out_gain))
    return nn.Sequential(*layers)


class LstmState(NamedTuple):
    """Hidden and cell state of the LSTM, each [1, N, hidden] (torch.nn.LSTM's layout)."""

    h: torch.Tensor
    c: torch.Tensor


class MlpActorCritic(nn.Module):
    """Separate actor and critic MLPs over the flat observation."""

    recurrent = False

    def __init__(self, config: PolicyConfig, obs_dim: int | None = None, n_actions: int | None = None):
        super().__init__()
        obs_dim = input_dim(config) if obs_dim is None else obs_dim
        self.obs_dim = obs_dim
        self.space: ActionSpace = action_space(config.action_space) if n_actions is None else discrete_space(n_actions)
        n_actions = self.space.logits
        self.config = _own_copy(config, "mlp")
        self.inputs, width = input_layer(config, obs_dim)
        self.actor = mlp_head(width, config.actor_sizes, n_actions, config.activation, POLICY_HEAD_GAIN)
        self.critic = mlp_head(width, config.critic_sizes, 1, config.activation, VALUE_HEAD_GAIN)

    def initial_state(self, n: int, device: torch.device | str | None = None) -> None:
        return None

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(self.inputs(obs))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.inputs(obs)).squeeze(-1)

    def step(
        self, obs: torch.Tensor, state: None = None, episode_start: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, None]:
        return (*self.forward(obs), None)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.inputs(obs)
        return self.actor(x), self.critic(x).squeeze(-1)


class LstmActorCritic(nn.Module):
    """One LSTM layer over the observation, then actor and critic MLP heads on its output."""

    recurrent = True

    def __init__(self, config: PolicyConfig, obs_dim: int | None = None, n_actions: int | None = None):
        super().__init__()
        obs_dim = input_dim(config) if obs_dim is None else obs_dim
        self.obs_dim = obs_dim
        self.space: ActionSpace = action_space(config.action_space) if n_actions is None else discrete_space(n_actions)
        n_actions = self.space.logits
        self.config = _own_copy(config, "lstm")
        self.hidden_size = config.lstm_hidden
        self.inputs, width = input_layer(config, obs_dim)
        self.lstm = nn.LSTM(width, config.lstm_hidden)
        for name, param in self.lstm.named_parameters():
            if "bias" in name:
                nn.init.zeros_(param)
            else:
                nn.init.orthogonal_(param, 1.0)
        self.actor = mlp_head(config.lstm_hidden, config.actor_sizes, n_actions, config.activation, POLICY_HEAD_GAIN)
        self.critic = mlp_head(config.lstm_hidden, config.critic_sizes, 1, config.activation, VALUE_HEAD_GAIN)

    def initial_state(self, n: int, device: torch.device | str | None = None) -> LstmState:
        device = device if device is not None else self.lstm.weight_ih_l0.device
        zeros = torch.zeros(1, n, self.hidden_size, device=device)
        return LstmState(zeros, zeros.clone())

    def features(
        self, obs: torch.Tensor, state: LstmState, episode_start: torch.Tensor
    ) -> tuple[torch.Tensor, LstmState]:
        """LSTM outputs [T, N, hidden] for obs [T, N, D], zeroing a row's state where its episode starts.

        The loop over time is unavoidable (each step's reset depends on the row); it runs
        over T only, every row of the batch at once.
        """
        h, c = state
        keep = (1.0 - episode_start.to(obs.dtype)).unsqueeze(-1)  # [T, N, 1]
        x = self.inputs(obs)
        outputs = []
        for t in range(obs.shape[0]):
            h, c = h * keep[t], c * keep[t]
            out, (h, c) = self.lstm(x[t].unsqueeze(0), (h, c))
            outputs.append(out)
        return torch.cat(outputs, dim=0), LstmState(h, c)

    def step(
        self, obs: torch.Tensor, state: LstmState, episode_start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, LstmState]:
        """One time step for a batch of rows: obs [N, D], episode_start [N]."""
        hidden, new_state = self.features(obs.unsqueeze(0), state, episode_start.unsqueeze(0))
        hidden = hidden.squeeze(0)
        return self.actor(hidden), self.critic(hidden).squeeze(-1), new_state

    def sequence_forward(
        self, obs: torch.Tensor, initial_state: LstmState, episode_start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits [T, N, A] and values [T, N], replaying a rollout from its initial state."""
        hidden, _ = self.features(obs, initial_state, episode_start)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)

    def value_sequence(self, obs: torch.Tensor, initial_state: LstmState, episode_start: torch.Tensor) -> torch.Tensor:
        """Values [T, N] (e.g. to bootstrap the step after a rollout)."""
        hidden, _ = self.features(obs, initial_state, episode_start)
        return self.critic(hidden).squeeze(-1)


ActorCritic = MlpActorCritic | LstmActorCritic


def build_network(config: PolicyConfig, obs_dim: int | None = None, n_actions: int | None = None) -> ActorCritic:
    """The actor-critic module PolicyConfig describes (freshly initialised).

    `obs_dim`: the input's width (default input_dim(config)); `n_actions`: one plain head of that many
    actions instead of policy.action_space (a toy task's).
    Initialised on one CPU thread: the orthogonal initialisation's QR decomposition rounds
    differently with other thread counts, and the first weights must depend on the seed alone."""
    if config.kind not in ("mlp", "lstm"):
        raise LeagueError(f"Unknown policy kind {config.kind!r}; expected mlp or lstm.")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return (MlpActorCritic if config.kind == "mlp" else LstmActorCritic)(config, obs_dim, n_actions)
    finally:
        torch.set_num_threads(threads)
