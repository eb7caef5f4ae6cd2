"""Snapshots of averaged weights: an exponential moving average of the learner's network (Polyak averaging,
as SWA and EMA do), updated after every PPO update, so that a snapshot is not one noisy step.

    average = moving_average(net, decay=0.95)   # the start's weights; None when decay is 0 (the live weights)
    average.update_parameters(net)              # after each update
    average.module                              # the averaged network, what a snapshot writes and plays

The learner trains its own weights; only snapshots (checkpoints, registry versions, their evaluation and
the opponents drawn from them) are the average. `torch.optim.swa_utils.AveragedModel` keeps it, buffers
included (the observation normaliser's running statistics are averaged too, as `use_buffers` does). A run
resumed from a snapshot goes on from the averaged weights it holds.
"""

from __future__ import annotations

from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


def moving_average(net: nn.Module, decay: float) -> AveragedModel | None:
    """An exponential moving average of `net`'s weights with `decay` per update (0: None, no average)."""
    if decay <= 0.0:
        return None
    average = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)
    average.update_parameters(net)  # the start counts: AveragedModel's first update only copies
    return average
