"""A learner driven one step at a time: what the update benchmarks and the learner's tests use.

Training fills the learner's buffer with whole collected segments (`PpoLearner.ingest`); a
benchmark that times the update alone (`league diagnose --test update`, scripts/gpu_learner_check.py)
or a test on a classic-control task steps its own environments and stores each step here:

    actions = act(learner, obs, episode_start)   # sample for every slot, store the step
    observe_rewards(learner, rewards)            # the step's rewards
    learner.update(next_obs, next_episode_start)
"""

from __future__ import annotations

import torch

from training.ppo import PpoLearner


@torch.no_grad()
def act(learner: PpoLearner, obs: torch.Tensor, episode_start: torch.Tensor,
        teacher_probs: torch.Tensor | None = None) -> torch.Tensor:
    """Sample actions for all learner slots and store the step (with the teacher's label when
    kickstarting); returns actions [slots]."""
    if learner.accel.pin_memory:
        obs, episode_start = obs.pin_memory(), episode_start.pin_memory()
    obs = obs.to(learner.device, non_blocking=True).float()
    episode_start = episode_start.to(learner.device, non_blocking=True).float()
    before = learner.state
    with learner.accel.inference_autocast():
        logits, value, learner.state = learner.model.step(obs, learner.state, episode_start)
    actions, logprob = learner.space.sample(logits.cpu(), learner.generator)
    actions, logprob = actions.to(learner.device), logprob.to(learner.device)
    learner.buffer.add(obs, actions, logprob, value.float(), episode_start, before, teacher_probs)
    return actions


def observe_rewards(learner: PpoLearner, rewards: torch.Tensor) -> None:
    """The rewards of the step `act` stored last."""
    learner.buffer.add_rewards(rewards.to(learner.device, non_blocking=True).float())
