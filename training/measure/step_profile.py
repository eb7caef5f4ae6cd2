"""Where one game-runner step goes: the worker's phases and the learner's inference, per arena step.

    python -m training.measure.step_profile [--stage 1v1] [--envs 32] [--seconds 10] [--json FILE]

One worker's arenas stepped in this process (Placement.IN_PROCESS: the same ArenaWorker code the
worker processes run) with the training reward (configs/rewards.yaml) and uniformly random actions,
each step's time split by the worker's own phase clock (arena.engine.phases, the clock
`league diagnose --test scale` reads from every worker, so both speak of the same phases):

  physics           every car's controls from the action table, then RocketSim's Arena.step, tick_skip
                    ticks per arena (C++)
  state read        get_gym_state per arena, one gather, demolished cars
  rules and rewards goals, clocks, done conditions and the training reward's terms over the batch
  observations      the shared arrays and one build_obs for every car
  resets            start states of finished arenas and their observations

then the default MLP's batched forward for the same rows (the learner's inference, which runs in
the main process while the workers wait), timed on its own. "other" is the runner's own share of
a step outside the worker's phases. Shares are of the step's total including inference.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass

import numpy as np

from arena.engine.worker import STEP_PHASES

PHASES = STEP_PHASES


@dataclass(frozen=True)
class StepProfile:
    team_size: int
    arenas: int
    steps: int
    ms_per_step: dict[str, float]  # per step of all the arenas, each phase and "inference"
    share: dict[str, float]  # of the step's total including inference


def profile_step(team_size: int = 1, arenas: int = 32, seconds: float = 10.0, seed: int = 0) -> StepProfile:
    import torch

    from arena.engine.game import GamePlugins, GameSpec
    from arena.engine.placement import Placement
    from arena.engine.vector import VecGame
    from league.config import load_config
    from training.measure.env import mlp_chooser
    from training.rewards import build_reward

    cfg = load_config(overrides=[])
    torch.set_num_threads(1)
    with VecGame(GameSpec(team_size=team_size, tick_skip=cfg.game.tick_skip), workers=1, envs_per_worker=arenas,
                 placement=Placement.IN_PROCESS, seed=seed, plugins=GamePlugins(reward_fn=build_reward(cfg.rewards))) as games:
        obs = games.reset()
        rng = np.random.default_rng(seed)
        for _ in range(20):  # warm up
            obs, *_ = games.step(rng.integers(0, 90, games.num_agents))
        games.take_phases()  # the warm-up's
        steps, stepping, start = 0, 0.0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            actions = rng.integers(0, 90, games.num_agents)
            began = time.perf_counter()
            obs, *_ = games.step(actions)
            stepping += time.perf_counter() - began
            steps += 1
        phases = games.take_phases()
        ms = {phase: 1000 * phases.get(phase, 0.0) / steps for phase in PHASES}
        choose, sample = mlp_chooser(cfg.policy, seed), np.array(obs, copy=True)
        for _ in range(20):
            choose(sample)
        start, calls = time.perf_counter(), 0
        while time.perf_counter() - start < seconds / 4:
            choose(sample)
            calls += 1
        ms["inference"] = 1000 * (time.perf_counter() - start) / calls
    ms["other"] = max(0.0, 1000 * stepping / steps - sum(ms[p] for p in PHASES))
    total = sum(ms.values())
    return StepProfile(team_size=team_size, arenas=arenas, steps=steps, ms_per_step=ms,
                       share={k: v / total for k, v in ms.items()})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stage", default="1v1", choices=("1v1", "2v2", "3v3"))
    parser.add_argument("--envs", type=int, default=32, help="arenas in the worker (the default per worker)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    report = profile_step(int(args.stage[0]), args.envs, args.seconds)
    print(f"{args.stage}, {report.arenas} arenas, {report.steps} steps; ms per step of all arenas:")
    for phase, ms in sorted(report.ms_per_step.items(), key=lambda kv: -kv[1]):
        print(f"  {phase:<18} {ms:7.3f} ms  {100 * report.share[phase]:5.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(asdict(report), f, indent=2)


if __name__ == "__main__":
    main()
