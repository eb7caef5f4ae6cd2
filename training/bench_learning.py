"""The learning benchmark: train 1v1 for a wall-clock budget, then play the trained agent and the
untrained network against `random` and `rule` (half the games on each side), and print win rates,
scoring rates and the ratings the league gives them.

    python -m training.bench_learning --minutes 20 --games 50 [--home DIR] [--set KEY=VALUE ...]

It trains with the default config except a discount of 0.99 (BENCH_SETS; the default 0.995 is
the seed documents'): over a 20-minute budget the shorter horizon learned to reach the ball
sooner. The learner is kickstarted from the rule bot over its first 4M steps, as every fresh
learner is by default (training.kickstart); `--set training.kickstart.teacher=` measures pure
self-play. The report names the teacher, so the two figures are never mixed up. `--set`
overrides come after BENCH_SETS.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch

from agents.checkpoint import save_checkpoint
from agents.loading import load_policy
from agents.networks import build_network
from league.config import load_config
from league.home import LeagueHome
from league.registry import Registry
from training.evaluation import play_recorded
from training.selfplay import SelfPlayTrainer


BENCH_SETS = ("ppo.gamma=0.99",)


def evaluate(registry: Registry, home: LeagueHome, name: str, opponent: str, games: int, seed: int) -> dict:
    """Play `games` one-minute games (half per side), recorded; win, draw and goal rates."""
    goals = play_recorded(registry, name, load_policy(registry.agent(name), home_root=home.root), opponent,
                          load_policy(registry.agent(opponent), home_root=home.root), games, 1, 60.0, seed)
    return {"games": games, "win_rate": sum(a > b for a, b in goals) / games,
            "draw_rate": sum(a == b for a, b in goals) / games,
            "goals_per_game": sum(a for a, _ in goals) / games, "conceded_per_game": sum(b for _, b in goals) / games}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], dest="sets")
    args = parser.parse_args()
    root = args.home or Path(tempfile.mkdtemp(prefix="learning-bench-"))
    home = LeagueHome(root)
    home.create_dirs()
    registry = Registry.create(home.db_path)
    cfg = load_config(stage="1v1", sets=[f"training.minutes={args.minutes}", "training.steps=0",
                                        f"seed={args.seed}", *BENCH_SETS, *args.sets])
    # The untrained network of the same architecture, for the comparison.
    torch.manual_seed(args.seed)
    rel = Path("checkpoints") / "untrained.safetensors"
    sha = save_checkpoint(root / rel, build_network(cfg.policy))
    registry.add_agent("untrained", cfg.policy.kind, 1, checkpoint_path=str(rel), checkpoint_sha256=sha)

    result = SelfPlayTrainer(cfg, home, registry, name="learner").run()
    trained = result.versions[-1]
    report = {"trained": trained, "steps": result.steps, "train_seconds": result.seconds,
              "kickstart_teacher": cfg.training.kickstart.teacher or None, "results": {}}
    for agent in (trained, "untrained"):
        for k, opponent in enumerate(("random", "rule")):
            report["results"][f"{agent} vs {opponent}"] = evaluate(registry, home, agent, opponent, args.games,
                                                                   seed=1000 + 10 * k)
    fit = registry.mle(1)
    report["ratings"] = {
        name: {"elo": registry.rating(name, 1)["elo"], "mu": registry.rating(name, 1)["mu"],
               "sigma": registry.rating(name, 1)["sigma"], "mle": fit.rating(name), "mle_95": fit.interval(name)}
        for name in (trained, "untrained", "rule", "random")}
    print(json.dumps(report, indent=2))
    print(f"league home: {root}")


if __name__ == "__main__":
    main()
