"""Snapshots of averaged weights (training/averaging.py): the moving average is what the formula says, and a run
with training.ema_decay writes it, not the learner's own weights."""

import torch

from agents.checkpoint import load_checkpoint
from agents.networks import build_network
from league.config import PolicyConfig
from training.averaging import moving_average


def test_the_average_follows_the_exponential_moving_average():
    net = build_network(PolicyConfig(actor_sizes=[8], critic_sizes=[8]))
    assert moving_average(net, 0.0) is None
    avg = moving_average(net, 0.75)
    first = {k: v.clone() for k, v in net.state_dict().items()}  # the average starts at the network's weights
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    avg.update_parameters(net)
    for k, v in avg.module.state_dict().items():
        if v.is_floating_point() and k in dict(net.named_parameters()):
            torch.testing.assert_close(v, 0.75 * first[k] + 0.25 * net.state_dict()[k])


def test_a_run_with_ema_decay_snapshots_the_average(trained_home):
    """Resume the trained run for one more snapshot with a heavy average: the snapshot's weights sit between the
    resumed snapshot's and the learner's own (the learner moved; the average moved a tenth as far)."""
    from league.config import load_config
    from league.registry import Registry
    from training.selfplay import SelfPlayTrainer
    from conftest import TINY_TRAINING

    home, result = trained_home
    last = result.versions[-1]
    reg = Registry.open(home.db_path)
    try:
        cfg = load_config(stage="1v1", sets=[*TINY_TRAINING, "training.eval_every_snapshots=0",
                                             "training.ema_decay=0.9", "training.steps=256"])
        before = load_checkpoint(home.root / reg.agent_store.get(last).checkpoint_path).net.state_dict()
        trainer = SelfPlayTrainer(cfg, home, reg, resume=last)
        run = trainer.run()
        after = load_checkpoint(home.root / reg.agent_store.get(run.versions[-1]).checkpoint_path).net.state_dict()
        live = trainer.net.state_dict()
    finally:
        reg.close()
    key = next(k for k in after if k.endswith("weight"))
    moved_avg = (after[key] - before[key]).abs().sum()
    moved_live = (live[key] - before[key]).abs().sum()
    assert 0 < moved_avg < 0.5 * moved_live
