"""NetworkPolicy: batched numpy inference for an MLP or LSTM actor-critic.

The game runner hands in observations [N, OBS_DIM] float32 and gets actions [N] int64 back;
this wrapper does the torch side: no autograd (inference_mode), no copy on the way in when
the observations are already contiguous float32 on a CPU device, sampling (Gumbel-max,
`sample_actions`) through the policy's own torch.Generator so a seeded game is reproducible,
argmax when deterministic.
The recurrent state of an LSTM policy stays a torch LstmState on the policy's device.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.networks import ActorCritic, LstmState
from agents.policy import Policy, State


def sample_actions(logits: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Actions drawn from softmax(logits) by the Gumbel-max trick, and their log-probabilities.

    argmax(logits + Gumbel noise) is an exact draw from the categorical distribution (Gumbel,
    1954; Maddison et al., 2014), and costs one uniform draw per entry and an argmax: about a
    third of softmax + torch.multinomial on a CPU at a game runner's batch (128 rows of 90).
    """
    logits = logits.float()
    uniform = torch.rand(logits.shape, generator=generator, device=logits.device)
    actions = (logits - torch.log(-torch.log(uniform))).argmax(dim=-1)
    logprob = torch.log_softmax(logits, dim=-1).gather(-1, actions[:, None]).squeeze(-1)
    return actions, logprob


class NetworkPolicy(Policy):
    """A Policy backed by an actor-critic module from agents.networks."""

    def __init__(self, net: ActorCritic, device: torch.device | str = "cpu", name: str = "network"):
        self.device = torch.device(device)
        self.net = net.to(self.device).eval()
        self.name = name
        self.recurrent = bool(net.recurrent)
        self.generator = torch.Generator(device=self.device)

    def seed(self, seed: int) -> None:
        self.generator.manual_seed(int(seed))

    def initial_state(self, n: int) -> LstmState | None:
        return self.net.initial_state(n, self.device)

    def _tensor(self, array: np.ndarray, dtype: np.dtype) -> torch.Tensor:
        # from_numpy shares memory; ascontiguousarray only copies when it has to.
        return torch.from_numpy(np.ascontiguousarray(array, dtype=dtype)).to(self.device, non_blocking=True)

    def act(
        self,
        obs: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        n = len(obs)
        with torch.inference_mode():
            x = self._tensor(obs, np.float32)
            if self.recurrent:
                if state is None:
                    state = self.initial_state(n)
                starts = (torch.zeros(n, device=self.device) if episode_start is None
                          else self._tensor(episode_start, np.float32))
                logits, _, state = self.net.step(x, state, starts)
            else:
                logits = self.net.logits(x)  # the actor only: playing needs no value
            if deterministic:
                actions = logits.argmax(dim=-1)
            else:
                actions, _ = sample_actions(logits, self.generator)
        return actions.to("cpu").numpy().astype(np.int64, copy=False), state
