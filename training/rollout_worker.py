"""A rollout worker: one core's games and the Collector that acts in them, in one process.

It is the service a worker of a pool hosts (training.worker_collection: a process of this
machine for the `rollout` backend, a Ray actor for `ray`). Either way the worker steps its own
arenas in-process (the in-process game runner) and runs the policies' forwards itself, with one
torch thread, so inference runs on every core beside the physics instead of in the learner's
process between steps.
"""

from __future__ import annotations

import os

from league.config import Config, PolicyConfig
from training.heap import HeapTrim
from training.opponents import PolicySpec

# A rollout worker runs every policy's forward itself, one call per policy and step over its rows,
# so more arenas amortise each call's fixed cost (the learner's, the teacher's, each opponent's):
# auto gives a worker 256 cars (128 arenas in 1v1, 64 in 2v2, 42 in 3v3). One worker's collection
# in 1v1 on this 2-core machine, in agent steps a second: 128 arenas 1.48x of 32 with the teacher's
# pull, 1.33x without (docs/runs/learning-defaults.md, run RR).
ROLLOUT_CARS_PER_WORKER = 256


def rollout_envs_per_worker(runner, team_size: int) -> int:
    """Arenas per rollout worker: the config's, or 0 (auto) for ROLLOUT_CARS_PER_WORKER cars."""
    from arena.engine.vector import envs_per_worker_of

    return envs_per_worker_of(runner, max(1, ROLLOUT_CARS_PER_WORKER // (2 * team_size)))


class RolloutWorker:
    """One core's vectorized games and their Collector (training.collector)."""

    def __init__(self, cfg: Config, net_config: PolicyConfig, teacher: PolicySpec | None, seed: int,
                 core: int | None = None):
        """`core`: the one core this worker runs on (local workers on a machine with a core to spare)."""
        import torch

        if core is not None:
            os.sched_setaffinity(0, {core})

        from arena.engine.game import GamePlugins
        from arena.engine.placement import Placement
        from arena.engine.vector import VecGame
        from training.collector import Collector, training_spec
        from training.rewards import build_reward

        torch.set_num_threads(1)
        envs = rollout_envs_per_worker(cfg.runner, cfg.game.team_size)
        games = VecGame(training_spec(cfg.game, cfg.training.opponents, teacher), seed=seed, workers=1, envs_per_worker=envs, placement=Placement.IN_PROCESS,
                        plugins=GamePlugins(reward_fn=build_reward(cfg.rewards)))
        self.heap = HeapTrim()
        try:
            self.collector = Collector(games, cfg.training.opponents, cfg.game.team_size, net_config, seed,
                                       cfg.rewards.weights.goal, "cpu", None, teacher, cfg.ppo.temperature)
        except BaseException:
            games.close()
            raise

    def shape(self) -> tuple[int, int]:
        """(learner slots, league envs) of this worker's games."""
        return self.collector.slots, self.collector.league_envs

    def set_pool(self, picks: list[str], specs: dict[str, PolicySpec], seed: int) -> None:
        self.collector.set_pool(picks, specs, seed)

    def collect(self, weights, version: int, steps: int, scale: float, teach: bool):
        self.collector.set_weights(weights, version)
        segment = self.collector.collect(steps, scale, teach)
        self.heap.after_round()  # free memory the heap keeps goes back to the system (training.heap)
        return segment

    def close(self) -> None:
        self.collector.close()


def worker_cores(workers: int) -> list[int | None]:
    """The core each of `workers` local rollout workers is pinned to: where the machine has more cores
    than workers, one each, leaving the first to the learner; else none (the scheduler places them)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return [None] * workers
    if workers >= len(cores):
        return [None] * workers
    return [cores[1 + k] for k in range(workers)]


def host_weights(weights) -> dict:
    """A state dict as numpy arrays on the host: what travels to rollout workers, once per round."""
    return {k: v.detach().cpu().numpy() if hasattr(v, "detach") else v for k, v in weights.items()}


class WorkerShapes:
    """What a collection of rollout workers offers the loop: the sum of its workers' shapes."""

    shapes: list[tuple[int, int]]  # (learner slots, league envs) per worker, in worker order

    @property
    def slots(self) -> int:
        return sum(s[0] for s in self.shapes)

    @property
    def league_envs(self) -> int:
        return sum(s[1] for s in self.shapes)
