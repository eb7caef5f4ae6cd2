"""Evaluation during training: short games of a snapshot against rule, random and the champion,
recorded as games (origin "evaluation") so ratings and the leaderboard move while training runs."""

from __future__ import annotations

from pathlib import Path

from agents.loading import load_policy
from agents.policy import Policy
from arena.matches import play_matches
from league.registry import GameRecord, Registry
from training.seeds import derived_seed


def play_recorded(
    registry: Registry, name: str, policy: Policy, opponent: str, opponent_policy: Policy, n_games: int,
    team_size: int, game_seconds: float, seed: int, tick_skip: int = 8, workers: int | None = None,
) -> list[tuple[int, int]]:
    """Play `n_games` (half with `name` on blue, half on orange), record each; (ours, theirs) goals per game.

    Each side's games are seeded from `seed` and the side, so the two halves never replay each other.
    """
    goals: list[tuple[int, int]] = []
    for side, n in (("blue", (n_games + 1) // 2), ("orange", n_games // 2)):
        if n == 0:
            continue
        game_seed = derived_seed(seed, "side", side)
        blue, orange = (policy, opponent_policy) if side == "blue" else (opponent_policy, policy)
        for r in play_matches(blue, orange, n, team_size=team_size, seed=game_seed, game_seconds=game_seconds,
                              tick_skip=tick_skip, workers=workers):
            registry.record_game(GameRecord(
                blue=name if side == "blue" else opponent, orange=opponent if side == "blue" else name,
                team_size=team_size, seed=game_seed, blue_goals=r.blue_goals, orange_goals=r.orange_goals,
                length_seconds=r.length_seconds, origin="evaluation"))
            goals.append((r.blue_goals, r.orange_goals) if side == "blue" else (r.orange_goals, r.blue_goals))
    return goals


def score_rate(goals: list[tuple[int, int]]) -> float:
    """Wins plus half the draws, per game."""
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in goals) / max(len(goals), 1)


def evaluate_snapshot(
    registry: Registry, name: str, policy: Policy, team_size: int, n_games: int, game_seconds: float,
    seed: int, home_root: Path, tick_skip: int = 8, workers: int | None = None,
) -> dict[str, float]:
    """Play `n_games` against each evaluation opponent (half on each side); returns score rates.

    `seed`: this evaluation's; the games against each opponent are seeded from it and the opponent's name.
    """
    opponents = ["rule", "random"]
    champion = registry.champion(team_size)
    if champion is not None and champion.name != name:
        opponents.append(champion.name)
    active = {a.name for a in registry.agents(team_size)}
    rates: dict[str, float] = {}
    for opp_name in (o for o in opponents if o in active):
        opponent = load_policy(registry.agent(opp_name), home_root=home_root)
        goals = play_recorded(registry, name, policy, opp_name, opponent, n_games, team_size, game_seconds,
                              derived_seed(seed, "opponent", opp_name), tick_skip, workers)
        rates[opp_name] = score_rate(goals)
    return rates
