"""Evaluation during training: short games of a snapshot against every baseline of the ladder
(random, atba, rule, rule-pro), the community bots of the league that play its team size, and
the champion, recorded as games (origin "evaluation") so
ratings, the leaderboard and the dashboard's climb chart move while training runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from agents.loading import load_policy
from agents.policy import Policy
from arena.pairings import MatchResult, Pairing, play_pairings
from league.config import OPENING_JITTER
from league.registry import BASELINES, GameRecord, Registry
from league.results import Record


class Player(NamedTuple):
    name: str  # the registry agent the games are recorded for
    policy: Policy


def player(registry: Registry, name: str, home_root: Path) -> Player:
    """The registry agent `name` as a player: its policy loaded (checkpoint checked), its games recorded as its."""
    return Player(name, load_policy(registry.agent_store.get(name), home_root=home_root))


def play_recorded(
    registry: Registry | None, matchups: Sequence[tuple[Player, Player]], n_games: int, team_size: int,
    game_seconds: float, seed: int, tick_skip: int = 8, workers: int | None = None, deterministic: bool = False,
    on_game: Callable[[MatchResult], None] | None = None, opening_jitter: float = OPENING_JITTER,
) -> list[list[tuple[int, int]]]:
    """Play `n_games` of every (ours, theirs) matchup, half with ours on blue, all at once on one
    runner (arena.pairings.play_pairings); record each game (unless `registry` is None: an agent
    playing outside the team size it was trained for). Per matchup, (ours, theirs) goals per game.
    `deterministic`: every policy takes its most likely action (as tournaments and the RLBot
    export play) instead of sampling (as training's evaluation plays). `on_game`: called with each game as it
    ends (a progress line). `opening_jitter`: game.opening_jitter.
    """
    pairings, owners = [], []
    for k, (ours, theirs) in enumerate(matchups):
        for side, n in (("blue", (n_games + 1) // 2), ("orange", n_games // 2)):
            if n:
                blue, orange = (ours, theirs) if side == "blue" else (theirs, ours)
                pairings.append(Pairing(blue.policy, orange.policy, n))
                owners.append((k, blue.name, orange.name, side == "blue"))
    goals: list[list[tuple[int, int]]] = [[] for _ in matchups]
    played = play_pairings(pairings, team_size, seed, game_seconds, tick_skip=tick_skip, workers=workers,
                           deterministic=deterministic, on_game=on_game, opening_jitter=opening_jitter)
    for (k, blue, orange, ours_blue), results in zip(owners, played):
        for r in results:
            if registry is not None:
                registry.game_store.record(GameRecord(
                    blue=blue, orange=orange, team_size=team_size, seed=seed, blue_goals=r.blue_goals,
                    orange_goals=r.orange_goals, length_seconds=r.length_seconds, origin="evaluation"))
            goals[k].append((r.blue_goals, r.orange_goals) if ours_blue else (r.orange_goals, r.blue_goals))
    return goals


def evaluate_snapshot(
    registry: Registry, name: str, policy: Policy, team_size: int, n_games: int, game_seconds: float,
    seed: int, home_root: Path, tick_skip: int = 8, workers: int | None = None, viewer: str = "",
    opening_jitter: float = OPENING_JITTER,
) -> dict[str, float]:
    """Play `n_games` against each active baseline and the champion (half on each side); score rates.

    `seed`: this evaluation's: the runner's and the policies' (arena.pairings.play_pairings).
    `viewer` (training.eval_viewer): one more game against the last opponent goes to that external
    viewer when it is running (arena.background_viewer.send_game_in_background); nothing happens when it is not.
    """
    opponents = list(BASELINES)
    opponents += [a.name for a in registry.agent_store.all(team_size) if a.kind == "community" and a.plays(team_size)]
    champion = registry.agent_store.champion(team_size)
    if champion is not None and champion.name != name:
        opponents.append(champion.name)
    active = {a.name for a in registry.agent_store.all(team_size)}
    opponents = [o for o in opponents if o in active]
    me = Player(name, policy)
    matchups = [(me, player(registry, o, home_root)) for o in opponents]
    goals = play_recorded(registry, matchups, n_games, team_size, game_seconds, seed, tick_skip, workers,
                          opening_jitter=opening_jitter)
    if viewer and matchups:
        from arena.engine.game import GameSpec
        from arena.background_viewer import send_game_in_background

        them = matchups[-1][1]
        send_game_in_background(viewer, GameSpec(team_size, tick_skip, "timed", game_seconds, opening_jitter=opening_jitter),
                                {name: policy, them.name: them.policy}, name, them.name, seed)
    return {o: Record.from_goals(g).score for o, g in zip(opponents, goals)}
