"""Rollout storage: preallocated [T, N, ...] tensors written one whole time step at a time.

N is the number of learner slots (env slots the learner controls); each `add` writes a full
row of N with vectorized slices, never per env. GAE runs over T with whole-batch tensor ops.
"""

from __future__ import annotations

import torch


class RolloutBuffer:
    def __init__(self, steps: int, slots: int, obs_dim: int, device: torch.device | str = "cpu",
                 lstm_hidden: int | None = None, teacher: int = 0):
        self.steps, self.slots, self.device = steps, slots, torch.device(device)
        shape = (steps, slots)
        self.obs = torch.zeros(shape + (obs_dim,), device=self.device)
        self.actions = torch.zeros(shape, dtype=torch.long, device=self.device)
        self.logprobs = torch.zeros(shape, device=self.device)
        self.values = torch.zeros(shape, device=self.device)
        self.rewards = torch.zeros(shape, device=self.device)
        # episode_start[t, i]: slot i's observation at step t begins a new episode.
        self.episode_starts = torch.zeros(shape, device=self.device)
        self.advantages = torch.zeros(shape, device=self.device)
        self.returns = torch.zeros(shape, device=self.device)
        # The teacher's label of each step (its per-head probabilities, `teacher` wide), when there is one.
        self.teacher_probs = torch.zeros(shape + (teacher,), device=self.device) if teacher else None
        # LSTM state *before* each step, so any sequence can be replayed from its start.
        self.hidden = None
        if lstm_hidden is not None:
            self.hidden = torch.zeros((steps, 2, slots, lstm_hidden), device=self.device)
        self.t = 0

    @property
    def full(self) -> bool:
        return self.t >= self.steps

    def reset(self) -> None:
        self.t = 0

    def add(self, obs, actions, logprobs, values, episode_starts, state=None, teacher_probs=None) -> None:
        t = self.t
        if self.teacher_probs is not None and teacher_probs is not None:
            self.teacher_probs[t].copy_(teacher_probs, non_blocking=True)
        self.obs[t].copy_(obs, non_blocking=True)
        self.actions[t].copy_(actions, non_blocking=True)
        self.logprobs[t].copy_(logprobs)
        self.values[t].copy_(values)
        self.episode_starts[t].copy_(episode_starts, non_blocking=True)
        if self.hidden is not None and state is not None:
            self.hidden[t, 0].copy_(state[0][0])
            self.hidden[t, 1].copy_(state[1][0])
        self.t += 1

    def add_rewards(self, rewards, step: int | None = None) -> None:
        """Rewards for the step just taken (they arrive after the env stepped)."""
        self.rewards[self.t - 1 if step is None else step].copy_(rewards, non_blocking=True)

    def compute_gae(self, last_value: torch.Tensor, last_episode_start: torch.Tensor, gamma: float, lam: float) -> None:
        """Generalized advantage estimation; an episode start cuts the bootstrap chain."""
        next_adv = torch.zeros(self.slots, device=self.device)
        next_value = last_value
        next_nonterminal = 1.0 - last_episode_start
        for t in reversed(range(self.steps)):
            delta = self.rewards[t] + gamma * next_value * next_nonterminal - self.values[t]
            next_adv = delta + gamma * lam * next_nonterminal * next_adv
            self.advantages[t] = next_adv
            next_value = self.values[t]
            next_nonterminal = 1.0 - self.episode_starts[t]
        self.returns = self.advantages + self.values
