"""Action spaces a network can speak: the 90-row table, or factorised heads in a teacher's own terms.

A network's actor outputs `sum(head_sizes)` logits: one categorical per head, independent given
the observation. An action is one integer, the joint index of the heads' choices (mixed radix,
the first head most significant), so rollouts, replays and log-probabilities keep one int per
step whatever the space; `controls[joint]` is what the car is sent (throttle, steer, pitch, yaw,
roll, jump, boost, handbrake).

    table     one head of 90: agents.actions.ACTION_TABLE (RLGym's LookupTableAction)
    necto     Necto's five heads, throttle 3, steer 3, jump 2, boost 2, handbrake 2 (72 joint
              actions), sent as Necto's agent.py sends them: pitch = throttle, yaw = steer without
              handbrake, roll = steer with it
    element   Element's eight heads, throttle, steer, pitch, yaw, roll 3 each, jump, boost,
              handbrake 2 each (1,944 joint actions), sent as its bot.py sends them: yaw 0 while
              jumping

A network trained in the table keeps speaking table indices (and every old checkpoint is one);
a network with heads speaks raw controls to the game (agents.policy: speaks_controls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import torch

from agents.actions import ACTION_TABLE, nearest_actions
from league.errors import LeagueError

TABLE = "table"
SPACE_NAMES = ("table", "necto", "element")


@dataclass(frozen=True, eq=False)
class ActionSpace:
    name: str
    head_sizes: tuple[int, ...]
    controls: np.ndarray = field(repr=False)  # [joint actions, 8] float32
    doc: str = ""

    @property
    def logits(self) -> int:
        """The actor's output width."""
        return sum(self.head_sizes)

    @property
    def actions(self) -> int:
        """How many joint actions (the joint index runs over 0 .. actions - 1)."""
        return len(self.controls)

    @property
    def factorised(self) -> bool:
        return len(self.head_sizes) > 1

    @cached_property
    def joint_heads(self) -> np.ndarray:
        """[actions, heads] int64: each joint index's choice in every head."""
        return _joint_heads(self.head_sizes)

    @cached_property
    def radix(self) -> torch.Tensor:
        """[heads] the weight of each head's choice in the joint index."""
        weights = np.cumprod((1,) + self.head_sizes[:0:-1])[::-1].copy()
        return torch.as_tensor(weights, dtype=torch.long)

    @cached_property
    def into_table(self) -> np.ndarray:
        """[actions, 90] float64: 1 at the table row nearest each joint action's controls."""
        out = np.zeros((self.actions, len(ACTION_TABLE)))
        out[np.arange(self.actions), nearest_actions(self.controls)] = 1.0
        return out

    # ---- torch: one categorical per head over logits [..., self.logits]

    def head_logits(self, logits: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.split(logits, self.head_sizes, dim=-1)

    def joint(self, heads: list[torch.Tensor]) -> torch.Tensor:
        """The joint index of per-head choices (each [...])."""
        out = heads[0]
        for size, h in zip(self.head_sizes[1:], heads[1:]):
            out = out * size + h
        return out

    def sample(self, logits: torch.Tensor, generator: torch.Generator,
               temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """Joint actions drawn head by head by the Gumbel-max trick from softmax(logits / temperature)
        (ppo.temperature: a distilled student's 0.5), and their log-probabilities under it.

        argmax(logits + Gumbel noise) is an exact draw from the categorical distribution (Gumbel,
        1954; Maddison et al., 2014), and costs one uniform draw per logit and an argmax: about a
        third of softmax + torch.multinomial on a CPU at a game runner's batch (128 rows of 90).
        One draw covers every head (the table's single head draws exactly as it always has)."""
        logits = logits.float() if temperature == 1.0 else logits.float() / temperature
        uniform = torch.rand(logits.shape, generator=generator, device=logits.device)
        noisy = logits - torch.log(-torch.log(uniform))
        choices = [h.argmax(dim=-1) for h in self.head_logits(noisy)]
        logprob = sum(torch.log_softmax(h, dim=-1).gather(-1, c[..., None]).squeeze(-1)
                      for h, c in zip(self.head_logits(logits), choices))
        return self.joint(choices), logprob

    def greedy(self, logits: torch.Tensor) -> torch.Tensor:
        """The joint action of every head's most likely choice (how community bots play)."""
        return self.joint([h.argmax(dim=-1) for h in self.head_logits(logits)])

    def log_prob(self, logits: torch.Tensor, joint: torch.Tensor) -> torch.Tensor:
        """log pi(joint | logits): the sum of the heads' log-probabilities of their choices."""
        total = torch.zeros(joint.shape, dtype=torch.float32, device=logits.device)
        radix = self.radix.to(joint.device)
        for i, (size, h) in enumerate(zip(self.head_sizes, self.head_logits(logits.float()))):
            choice = (joint // radix[i]) % size
            total = total + torch.log_softmax(h, dim=-1).gather(-1, choice[..., None]).squeeze(-1)
        return total

    def entropy(self, logits: torch.Tensor) -> torch.Tensor:
        """The joint distribution's entropy: the heads' entropies summed (they are independent)."""
        total = 0.0
        for h in self.head_logits(logits.float()):
            logp = torch.log_softmax(h, dim=-1)
            total = total - (logp.exp() * logp).sum(-1)
        return total

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """Each head's probabilities, side by side [..., self.logits] (a teacher's label)."""
        return torch.cat([torch.softmax(h.float(), dim=-1) for h in self.head_logits(logits)], dim=-1)

    def cross_entropy(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[...] -sum_heads sum_k target_k log pi_k: the KL from the target's heads to these, plus the
        target's entropy (a constant), so its gradient is the KL's."""
        total = 0.0
        for h, p in zip(self.head_logits(logits.float()), torch.split(target, self.head_sizes, dim=-1)):
            total = total - (p * torch.log_softmax(h, dim=-1)).sum(-1)
        return total

    def agreement(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[...] 1.0 where every head's most likely choice is the target's, else 0.0."""
        same = torch.ones(logits.shape[:-1], dtype=torch.bool, device=logits.device)
        for h, p in zip(self.head_logits(logits), torch.split(target, self.head_sizes, dim=-1)):
            same &= h.argmax(dim=-1) == p.argmax(dim=-1)
        return same.float()


def _joint_heads(sizes: tuple[int, ...]) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1).astype(np.int64)


def _necto_controls() -> np.ndarray:
    h = _joint_heads((3, 3, 2, 2, 2))
    throttle, steer, jump, boost, handbrake = h[:, 0] - 1, h[:, 1] - 1, h[:, 2], h[:, 3], h[:, 4]
    return np.stack([throttle, steer, throttle, steer * (1 - handbrake), steer * handbrake, jump, boost,
                     handbrake], 1).astype(np.float32)


def _element_controls() -> np.ndarray:
    h = _joint_heads((3, 3, 3, 3, 3, 2, 2, 2))
    out = np.concatenate([h[:, :5] - 1, h[:, 5:]], axis=1).astype(np.float32)
    out[:, 3] = np.where(out[:, 5] > 0, 0.0, out[:, 3])  # bot.py's update_controls: no yaw while jumping
    return out


SPACES: dict[str, ActionSpace] = {
    "table": ActionSpace("table", (len(ACTION_TABLE),), ACTION_TABLE, "the 90-row action table"),
    "necto": ActionSpace("necto", (3, 3, 2, 2, 2), _necto_controls(),
                         "Necto's heads: throttle 3, steer 3, jump 2, boost 2, handbrake 2"),
    "element": ActionSpace("element", (3, 3, 3, 3, 3, 2, 2, 2), _element_controls(),
                           "Element's heads: throttle, steer, pitch, yaw, roll 3 each; jump, boost, handbrake 2 each"),
}


def action_space(name: str) -> ActionSpace:
    if name not in SPACES:
        raise LeagueError(f"Unknown action space {name!r}; expected one of {', '.join(SPACES)}.")
    return SPACES[name]


def discrete_space(n: int) -> ActionSpace:
    """One head of `n` actions with no controls behind them: a toy task's (tests, classic control)."""
    return ActionSpace(f"discrete{n}", (n,), np.zeros((n, 8), dtype=np.float32), f"{n} plain actions")


def project(probs: np.ndarray, source: ActionSpace, target: ActionSpace) -> np.ndarray:
    """A teacher's per-head probabilities [R, source.logits] as the student's [R, target.logits]:
    the same space unchanged; into the table, the joint distribution's mass moved to the row
    nearest each joint action's controls. Any other pair cannot be held (see can_hold)."""
    if source.name == target.name:
        return probs.astype(np.float32, copy=False)
    if target.name != TABLE:
        raise LeagueError(f"A network speaking {target.name} heads cannot hold a teacher speaking {source.name}.")
    joint = np.ones((len(probs), 1), dtype=np.float64)
    for p in np.split(probs.astype(np.float64), np.cumsum(source.head_sizes)[:-1], axis=1):
        joint = (joint[:, :, None] * p[:, None, :]).reshape(len(probs), -1)
    return (joint @ source.into_table).astype(np.float32)


def can_hold(student: ActionSpace, teacher: ActionSpace) -> bool:
    """Whether a student speaking `student` can be fitted to a teacher speaking `teacher`: its own
    space, or any teacher when the student speaks the table (through project's nearest rows)."""
    return student.name in (teacher.name, TABLE)


def one_hot(actions: np.ndarray, space: ActionSpace) -> np.ndarray:
    """[R, space.logits] per-head one-hot labels of joint actions (a greedy teacher's)."""
    heads = space.joint_heads[np.asarray(actions, dtype=np.int64)]
    out = np.zeros((len(heads), space.logits), dtype=np.float32)
    offsets = np.concatenate([[0], np.cumsum(space.head_sizes)[:-1]])
    out[np.arange(len(heads))[:, None], heads + offsets] = 1.0
    return out
