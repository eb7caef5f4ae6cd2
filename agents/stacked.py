"""StackedActors: several feed-forward networks of one architecture acting as one policy.

Self-play plays a handful of league opponents at once (the learner's past versions), each on a
few rows. A network's forward on a few rows costs its per-layer overhead, not its arithmetic, so
K networks cost about K times one. Here their actor weights are stacked ([K, in, out] per layer)
and every network runs on its own block of rows in one batched matmul per layer
(torch.baddbmm): the rows of network k are padded to the largest block, computed, and
unpadded. The actions equal each network's own (`NetworkPolicy.act`) up to float rounding.

    policy = StackedActors([net_a, net_b], counts=[11, 4])   # rows 0..10 play net_a, 11..14 net_b
    actions, _ = policy.act(obs)                              # obs [15, OBS_DIM]
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.networks import ACTIVATIONS, MlpActorCritic
from agents.action_spaces import SPACES, TABLE
from agents.policy import Policy, State


def stackable(net: nn.Module) -> bool:
    """Whether `net` can join a stack: a feed-forward actor-critic (an LSTM keeps its own state)
    speaking the action table (a network with heads speaks controls, and plays on its own)."""
    return isinstance(net, MlpActorCritic) and not net.space.factorised and not net.config.prev_controls


def architecture_key(net: MlpActorCritic) -> tuple:
    """Networks with equal keys have actor layers of equal shapes and the same input transform."""
    c = net.config
    return (tuple(c.actor_sizes), c.activation, bool(c.car_frame))


class StackedActors(Policy):
    """K feed-forward networks of one architecture; network k acts on the k-th block of `counts[k]` rows."""

    def __init__(self, nets: list[MlpActorCritic], counts: list[int], device: torch.device | str = "cpu",
                 name: str = "stacked", temperature: float = 1.0):
        """`temperature`: every network's sampling temperature (networks that sample at different ones stack apart)."""
        if not nets or len(nets) != len(counts):
            raise ValueError("StackedActors needs one row count per network, and at least one network.")
        keys = {architecture_key(n) for n in nets}
        if len(keys) != 1 or not all(stackable(n) for n in nets):
            raise ValueError("StackedActors stacks feed-forward networks of one architecture only.")
        self.name, self.temperature = name, float(temperature)
        self.device = torch.device(device)
        self.inputs = nets[0].inputs.to(self.device).eval()
        self.activation = ACTIVATIONS[nets[0].config.activation]()
        layers = zip(*[[m for m in n.actor if isinstance(m, nn.Linear)] for n in nets])
        with torch.no_grad():
            stacked = [(torch.stack([lin.weight.T for lin in layer]).contiguous().to(self.device),
                        torch.stack([lin.bias[None] for lin in layer]).contiguous().to(self.device))
                       for layer in layers]
        self.layers = stacked  # [(weight [K, in, out], bias [K, 1, out])] per layer
        self.counts = list(counts)
        self.block = max(self.counts)
        # Where each row sits in the padded [K * block] batch.
        self.index = torch.from_numpy(np.concatenate(
            [k * self.block + np.arange(c) for k, c in enumerate(self.counts)]).astype(np.int64)).to(self.device)
        self.generator = torch.Generator(device=self.device)

    def seed(self, seed: int) -> None:
        self.generator.manual_seed(int(seed))

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Each row's logits under its own network: obs [sum(counts), D] -> [sum(counts), A]."""
        x = self.inputs(obs)
        padded = x.new_zeros(len(self.counts) * self.block, x.shape[1]).index_copy_(0, self.index, x)
        h = padded.view(len(self.counts), self.block, -1)
        last = len(self.layers) - 1
        for i, (weight, bias) in enumerate(self.layers):
            h = torch.baddbmm(bias, h, weight)
            if i < last:
                h = self.activation(h)
        return h.reshape(len(self.counts) * self.block, -1).index_select(0, self.index)

    def act(
        self,
        obs: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        if len(obs) != len(self.index):
            raise ValueError(f"StackedActors was built for {len(self.index)} rows, not {len(obs)}.")
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(self.device, non_blocking=True)
            logits = self.logits(x)
            actions = (logits.argmax(dim=-1) if deterministic
                       else SPACES[TABLE].sample(logits, self.generator, self.temperature)[0])
        return actions.cpu().numpy().astype(np.int64, copy=False), None
