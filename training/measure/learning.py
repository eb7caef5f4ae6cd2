"""The learning benchmark: train 1v1 for a wall-clock budget, then play the trained agent against
the baseline ladder (`random`, `atba`, `rule`, `rule-pro`) and the untrained network against
`random` and `rule` (half the games on each side), and print win rates, scoring rates, where the
training time went, the learning curve (the run's own evaluation games against each baseline,
by version) and the ratings the league gives them. The trained agent plays its games twice, from
the same seeds: drawing its actions (`results`, as training's evaluation plays) and taking its most
likely one (`argmax`, as community bots, tournaments, matches and the RLBot export play), so a gain
is not an artefact of sampling.

    python -m training.bench_learning --minutes 20 --games 50 [--home DIR] [--set KEY=VALUE ...] [--bots DIR]

(`training/bench_learning.py` is that documented entry point; it runs `main` here.)

It trains with the default config except a discount of 0.99 (BENCH_SETS; the default 0.995 is
the seed documents'): over a 20-minute budget the shorter horizon learned to reach the ball
sooner. The learner is kickstarted from `rule-pro` over its first 4M steps, as every fresh
learner is by default (training.kickstart); `--set training.kickstart.teacher=` measures pure
self-play. The report names the teacher, so the two figures are never mixed up. `--set`
overrides come after BENCH_SETS. `--set training.distill.teacher=necto --bots DIR` distils Necto
first (docs/distill.md): the bots then join before training, and the student speaks Necto's heads.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from agents.checkpoint import save_checkpoint
from agents.loading import load_policy
from agents.networks import build_network
from league.climb import ClimbPoint, climb
from league.config import load_config
from training.launch import student_of
from training.accel import cuda_available
from training.budget import Budget
from league.home import LeagueHome
from league.registry import Registry
from training.evaluation import Player, play_recorded
from training.selfplay import SelfPlayTrainer

BENCH_SETS = ("ppo.gamma=0.99",)
OPPONENTS = ("random", "atba", "rule", "rule-pro")  # the trained agent plays the whole baseline ladder
UNTRAINED_OPPONENTS = ("random", "rule")


@dataclass(frozen=True)
class MatchResult:
    """`games` one-minute games of one agent against one opponent, half on each side."""

    agent: str
    opponent: str
    games: int
    win_rate: float
    draw_rate: float
    goals_per_game: float
    conceded_per_game: float
    play: str = "sampled"  # the agents' actions drawn from their policies, or "argmax": their most likely ones


@dataclass(frozen=True)
class AgentRating:
    name: str
    elo: float
    mu: float
    sigma: float
    mle: float  # whole-history maximum-likelihood rating
    mle_95: tuple[float, float]


@dataclass(frozen=True)
class LearningBench:
    home: Path
    trained: str  # the last version the run snapshotted
    steps: int
    train_seconds: float
    kickstart_teacher: str | None  # the teacher (distilled or kickstarted from); None: pure self-play
    timing: dict[str, float]  # training seconds per part (training.selfplay.TIMED_PARTS)
    results: list[MatchResult]  # sampled: trained against OPPONENTS (and the community bots), untrained against
    # UNTRAINED_OPPONENTS; then argmax: trained against the same opponents
    ratings: list[AgentRating]  # trained, untrained, rule, random
    curve: list[ClimbPoint]  # the run's own evaluation games against the baselines, over steps


COMMUNITY = {"necto": "Necto", "element": "Element"}  # kind: its folder in the botpack


def add_community(home: LeagueHome, registry: Registry, bots: Path) -> list[str]:
    """Necto and Element added to the league from the botpack folder `bots`; their names."""
    from agents.community.install import add_bot

    return [add_bot(home, registry, kind, Path(bots) / folder).name for kind, folder in COMMUNITY.items()]


def evaluate(registry: Registry, home: LeagueHome, plan: list[tuple[str, str]], games: int, seed: int,
             deterministic: bool = False) -> list[MatchResult]:
    """Play `games` one-minute games (half per side) of each (agent, opponent) of `plan`, all at
    once, recorded; win, draw and goal rates per matchup. `deterministic`: every policy takes its
    most likely action instead of drawing it."""
    policies = {name: load_policy(registry.agent_store.get(name), home_root=home.root)
                for name in dict.fromkeys(sum(plan, ()))}
    matchups = [(Player(a, policies[a]), Player(o, policies[o])) for a, o in plan]
    played = play_recorded(registry, matchups, games, 1, 60.0, seed, deterministic=deterministic)
    return [MatchResult(a, o, games, win_rate=sum(x > y for x, y in goals) / games,
                        draw_rate=sum(x == y for x, y in goals) / games,
                        goals_per_game=sum(x for x, _ in goals) / games,
                        conceded_per_game=sum(y for _, y in goals) / games,
                        play="argmax" if deterministic else "sampled")
            for (a, o), goals in zip(plan, played)]


def bench_learning(minutes: float = 20.0, games: int = 50, root: Path | None = None, seed: int = 0,
                   sets: list[str] | None = None, bots: Path | None = None) -> LearningBench:
    """Train for `minutes` in a league home at `root` (a new temporary one by default), then evaluate.

    `bots`: a folder holding Necto/ and Element/ from the RLBot botpack: the trained agent also plays
    both. They join the league after training, so the run trains as without them, unless the run
    asks for them (a community teacher to kickstart from or distil, or a community share of the
    opponent mix)."""
    root = root or Path(tempfile.mkdtemp(prefix="learning-bench-"))
    home = LeagueHome(root)
    home.create_dirs()
    registry = Registry.create(home.db_path)
    cfg = load_config(stage="1v1", sets=[*BENCH_SETS, *(sets or [])], gpu=cuda_available)
    cfg = dataclasses.replace(cfg, seed=seed)  # the run's values typed: its seed here, its budget to run()
    community: list[str] = []
    teacher = cfg.training.distill.teacher or cfg.training.kickstart.teacher
    asked = teacher in COMMUNITY or cfg.training.opponents.community > 0
    if bots is not None and asked:
        community = add_community(home, registry, bots)
    if cfg.training.distill.teacher:  # again, over the bots just added: the student speaks its teacher's actions
        cfg = dataclasses.replace(load_config(stage="1v1", sets=[*BENCH_SETS, *(sets or [])], gpu=cuda_available,
                                              student_of=student_of(home)), seed=seed)
    # The untrained network of the same architecture, for the comparison.
    torch.manual_seed(seed)
    rel = Path("checkpoints") / "untrained.safetensors"
    sha = save_checkpoint(root / rel, build_network(cfg.policy))
    registry.agent_store.add("untrained", cfg.policy.kind, 1, checkpoint_path=str(rel), checkpoint_sha256=sha)
    result = SelfPlayTrainer(cfg, home, registry, name="learner").run(Budget.from_limits(minutes=minutes))
    trained = result.versions[-1]
    curve = climb(registry.db, "learner")  # the run's own evaluation games, before the benchmark's
    if bots is not None and not asked:
        community = add_community(home, registry, bots)
    trained_plan = [(trained, opponent) for opponent in (*OPPONENTS, *community)]
    plan = trained_plan + [("untrained", o) for o in UNTRAINED_OPPONENTS]
    results = evaluate(registry, home, plan, games, seed=1000)
    results += evaluate(registry, home, trained_plan, games, seed=1000, deterministic=True)  # from the same seed
    fit = registry.mle(1)
    stored = {name: registry.game_store.rating(name, 1) for name in (trained, "untrained", "rule", "random")}
    ratings = [AgentRating(name, r.elo, r.mu, r.sigma, fit.rating(name), fit.interval(name))
               for name, r in stored.items()]
    return LearningBench(root, trained, result.steps, result.seconds, teacher or None,
                         result.timing, results, ratings, curve)


def report_json(bench: LearningBench) -> dict:
    """The JSON the benchmark prints (its keys are the documented output): `results` sampled, `argmax`
    the trained agent's same games with its most likely actions."""
    def rates(play: str) -> dict:
        return {f"{r.agent} vs {r.opponent}": {
            "games": r.games, "win_rate": r.win_rate, "draw_rate": r.draw_rate, "goals_per_game": r.goals_per_game,
            "conceded_per_game": r.conceded_per_game} for r in bench.results if r.play == play}

    return {"trained": bench.trained, "steps": bench.steps, "train_seconds": bench.train_seconds,
            "kickstart_teacher": bench.kickstart_teacher,
            "timing": {part: round(seconds, 1) for part, seconds in bench.timing.items()},
            "results": rates("sampled"), "argmax": rates("argmax"),
            "curve": [{"version": p.version, "steps": p.steps, "opponent": p.baseline, "wins": p.wins,
                       "draws": p.draws, "losses": p.losses} for p in bench.curve],
            "ratings": {r.name: {"elo": r.elo, "mu": r.mu, "sigma": r.sigma, "mle": r.mle, "mle_95": r.mle_95}
                        for r in bench.ratings}}


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], dest="sets")
    parser.add_argument("--bots", type=Path, default=None,
                        help="A folder holding Necto/ and Element/ from the RLBot botpack: play them too.")
    args = parser.parse_args()
    bench = bench_learning(args.minutes, args.games, args.home, args.seed, args.sets, args.bots)
    print(json.dumps(report_json(bench), indent=2))
    print(f"league home: {bench.home}")


if __name__ == "__main__":
    main()
