"""Evaluation during training: short games of a snapshot against rule, random and the champion,
recorded as games (origin "evaluation") so ratings and the leaderboard move while training runs."""

from __future__ import annotations

from pathlib import Path

from agents.loading import load_policy
from agents.policy import Policy
from arena.matches import play_matches
from league.registry import GameRecord, Registry


def evaluate_snapshot(
    registry: Registry, name: str, policy: Policy, team_size: int, n_games: int, game_seconds: float,
    seed: int, home_root: Path, tick_skip: int = 8, workers: int | None = None,
) -> dict[str, float]:
    """Play `n_games` against each evaluation opponent (half on each side); returns score rates."""
    opponents = ["rule", "random"]
    champion = registry.champion(team_size)
    if champion is not None and champion.name != name:
        opponents.append(champion.name)
    active = {a.name for a in registry.agents(team_size)}
    rates: dict[str, float] = {}
    for k, opp_name in enumerate(o for o in opponents if o in active):
        opponent = load_policy(registry.agent(opp_name), home_root=home_root)
        score = 0.0
        played = 0
        for side, n in (("blue", (n_games + 1) // 2), ("orange", n_games // 2)):
            if n == 0:
                continue
            game_seed = seed * 1000 + k * 10 + (side == "orange")
            blue, orange = (policy, opponent) if side == "blue" else (opponent, policy)
            results = play_matches(blue, orange, n, team_size=team_size, seed=game_seed,
                                   game_seconds=game_seconds, tick_skip=tick_skip, workers=workers)
            for r in results:
                registry.record_game(GameRecord(
                    blue=name if side == "blue" else opp_name, orange=opp_name if side == "blue" else name,
                    team_size=team_size, seed=game_seed, blue_goals=r.blue_goals, orange_goals=r.orange_goals,
                    length_seconds=r.length_seconds, origin="evaluation"))
                ours, theirs = (r.blue_goals, r.orange_goals) if side == "blue" else (r.orange_goals, r.blue_goals)
                score += 1.0 if ours > theirs else 0.5 if ours == theirs else 0.0
                played += 1
        rates[opp_name] = score / max(played, 1)
    return rates
