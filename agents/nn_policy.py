"""NetworkPolicy: batched numpy inference for an MLP or LSTM actor-critic.

The game runner hands in observations [N, OBS_DIM] float32 and gets actions [N] int64 back (a
network speaking the 90-row table), or controls [N, 8] (a network with factorised heads,
agents.action_spaces: it speaks controls, as community bots do);
this wrapper does the torch side: no autograd (inference_mode), no copy on the way in when
the observations are already contiguous float32 on a CPU device, sampling (Gumbel-max,
`ActionSpace.sample`) through the policy's own torch.Generator so a seeded game is reproducible,
argmax when deterministic. A policy trained at a temperature (ppo.temperature: a distilled student's 0.5)
samples softmax(logits / temperature), as it did in training.
The recurrent state of an LSTM policy stays a torch LstmState on the policy's device.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.game_state import N_CONTROLS
from agents.networks import ActorCritic
from agents.policy import Policy, State


class NetworkPolicy(Policy):
    """A Policy backed by an actor-critic module from agents.networks. A network that reads its own
    previous controls (policy.prev_controls) keeps them per row in its state, zeros where an episode
    starts, and appends them to each observation."""

    def __init__(self, net: ActorCritic, device: torch.device | str = "cpu", name: str = "network",
                 temperature: float = 1.0):
        if not temperature > 0:
            raise ValueError(f"A sampling temperature must be above 0, not {temperature!r}.")
        self.temperature = float(temperature)
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        self.name = name
        self.with_prev = bool(net.config.prev_controls)
        self.recurrent = bool(net.recurrent) or self.with_prev
        self.space = net.space
        self.speaks_controls = net.space.factorised  # heads answer controls; the table answers its rows
        self.generator = torch.Generator(device=self.device)

    def seed(self, seed: int) -> None:
        self.generator.manual_seed(int(seed))

    def initial_state(self, n: int) -> State:
        inner = self.net.initial_state(n, self.device)
        return (inner, np.zeros((n, N_CONTROLS), np.float32)) if self.with_prev else inner

    def _tensor(self, array: np.ndarray, dtype: np.dtype) -> torch.Tensor:
        # from_numpy shares memory; ascontiguousarray only copies when it has to.
        return torch.from_numpy(np.ascontiguousarray(array, dtype=dtype)).to(self.device, non_blocking=True)

    def _logits(self, obs: np.ndarray, state: State, episode_start: np.ndarray | None):
        """(logits, the network's new state, the previous controls the rows read) for a batch."""
        n = len(obs)
        if state is None:
            state = self.initial_state(n)
        inner, prev = state if self.with_prev else (state, None)
        if prev is not None:
            if episode_start is not None:
                prev = np.where(np.asarray(episode_start, bool)[:, None], 0.0, prev).astype(np.float32)
            obs = np.concatenate([np.asarray(obs, np.float32), prev], axis=1)
        x = self._tensor(obs, np.float32)
        if self.net.recurrent:
            starts = (torch.zeros(n, device=self.device) if episode_start is None
                      else self._tensor(episode_start, np.float32))
            logits, _, inner = self.net.step(x, inner, starts)
        else:
            logits = self.net.logits(x)  # the actor only: playing needs no value
        return logits, inner, prev

    def act(
        self,
        obs: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        with torch.inference_mode():
            logits, inner, _ = self._logits(obs, state, episode_start)
            if deterministic:
                actions = self.space.greedy(logits)
            else:
                actions, _ = self.space.sample(logits, self.generator, self.temperature)
        actions = actions.to("cpu").numpy().astype(np.int64, copy=False)
        sent = self.space.controls[actions]
        state = (inner, sent) if self.with_prev else inner
        return (sent if self.speaks_controls else actions), state

    def probs(self, obs: np.ndarray, state: State = None,
              episode_start: np.ndarray | None = None) -> tuple[np.ndarray, State]:
        """Each head's probabilities [N, space.logits] (a teacher's label) and the new state (a teacher
        reading its previous controls is taken to have played its most likely action)."""
        with torch.inference_mode():
            logits, inner, _ = self._logits(obs, state, episode_start)
            probs = self.space.probs(logits).cpu().numpy()
            sent = self.space.controls[self.space.greedy(logits).cpu().numpy()]
        return probs, ((inner, sent) if self.with_prev else inner)
