"""Evaluation matches on the game runner: results, reproducibility, and one act call per policy per step."""

from __future__ import annotations

import numpy as np
import pytest

from agents.baselines import RandomPolicy, make_baseline
from agents.policy import Policy
from arena.pairings import MatchResult, Pairing, match_layout, play_matches, play_pairings


class Recording(Policy):
    """Uniformly random, remembering how many rows each act call got."""

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.batch_sizes: list[int] = []
        self.starts = 0

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs, state=None, episode_start=None, deterministic=False):
        self.batch_sizes.append(len(obs))
        self.starts += int(np.sum(episode_start))
        return self.rng.integers(0, 90, len(obs)), None


def test_results_are_whole_timed_games():
    blue, orange = Recording(), Recording()
    results = play_matches(blue, orange, n_games=5, team_size=2, seed=1, game_seconds=3, workers=2, placement="in-process")
    assert len(results) == 5
    assert all(isinstance(r, MatchResult) and r.length_seconds == 3.0 for r in results)
    assert all(isinstance(r.blue_goals, int) and isinstance(r.orange_goals, int) for r in results)
    # 2 workers x 3 arenas, 2 cars a side: every call covers all 6 arenas' cars of one side.
    assert set(blue.batch_sizes) == {12} and set(orange.batch_sizes) == {12}
    steps = int(3 * 120 / 8)
    assert len(blue.batch_sizes) == steps  # one call per step, one round of games
    assert blue.starts == 12  # episode_start marks only each game's first step


def test_reproducible_from_the_seed_in_either_placement():
    def play(placement: str) -> list[MatchResult]:
        return play_matches(RandomPolicy(), RandomPolicy(), n_games=4, team_size=1, seed=5, game_seconds=20,
                            workers=2, placement=placement)

    here = play("in-process")
    assert here == play("in-process") == play("processes")


def test_sides_go_to_the_right_policy():
    # The rule bot playing orange must outscore random playing blue.
    results = play_matches(RandomPolicy(), make_baseline("rule"), n_games=4, team_size=1, seed=2,
                           game_seconds=30, placement="in-process")
    assert sum(r.orange_goals for r in results) > sum(r.blue_goals for r in results)


def test_more_pairings_than_a_rounds_arenas_are_all_played(monkeypatch):
    """Run te's title screen (22 snapshots against 3 opponents, 132 pairings of 10 games) ran on 120 arenas: the
    last 12 pairings had none, and the games went on for 109,000 steps where each is 900. Fails before: no end."""
    import arena.pairings

    monkeypatch.setattr(arena.pairings, "MAX_ENVS_PER_WORKER", 2)  # a round of 2 arenas for 5 pairings
    pairings = [Pairing(RandomPolicy(), make_baseline("rule"), 2) for _ in range(5)]
    results = play_pairings(pairings, 1, seed=3, game_seconds=2, workers=1, placement="in-process")
    assert [len(r) for r in results] == [2] * 5
    assert [len(r) for r in play_pairings(pairings[:3], 1, seed=3, game_seconds=2, workers=1, envs_per_worker=1,
                                          placement="in-process")] == [2] * 3


@pytest.mark.parametrize("n_games, workers, expected", [(1, 2, (1, 1)), (5, 2, (2, 3)), (100, 2, (2, 50)),
                                                        (200, 2, (2, 50)), (130, 2, (2, 33))])
def test_match_layout_plays_few_spare_games(n_games, workers, expected):
    assert match_layout(n_games, workers, None) == expected


def test_zero_games_is_refused():
    with pytest.raises(ValueError, match="n_games"):
        play_matches(RandomPolicy(), RandomPolicy(), n_games=0)


def test_pairings_share_one_runner_and_each_gets_its_games_on_its_sides():
    learner, rule, random = Recording(), make_baseline("rule"), RandomPolicy()
    pairings = [Pairing(learner, rule, 3), Pairing(rule, learner, 3), Pairing(learner, random, 2),
                Pairing(random, rule, 2)]
    results = play_pairings(pairings, team_size=1, seed=3, game_seconds=30, workers=2, placement="in-process")
    assert [len(r) for r in results] == [3, 3, 2, 2]
    assert all(r.length_seconds == 30.0 for games in results for r in games)
    # 4 pairings x 3 games fit one round of 2 x 6 arenas: the learner, in three pairings on both
    # sides, acts once per step over all its rows.
    steps = int(30 * 120 / 8)
    assert len(learner.batch_sizes) == steps and set(learner.batch_sizes) == {9}
    # Sides reach the right policy: rule (orange) outscores random (blue) in the last pairing.
    assert sum(r.orange_goals for r in results[3]) > sum(r.blue_goals for r in results[3])
    assert sum(r.blue_goals for r in results[1]) > 0  # rule, on blue, scores against a random learner


def test_one_pairing_is_play_matches():
    one = play_pairings([Pairing(RandomPolicy(), make_baseline("rule"), 4)], seed=2, game_seconds=20,
                        placement="in-process")[0]
    assert one == play_matches(RandomPolicy(), make_baseline("rule"), 4, seed=2, game_seconds=20, placement="in-process")


def test_no_pairings_is_refused():
    with pytest.raises(ValueError, match="at least one pairing"):
        play_pairings([])


def test_each_game_that_counts_is_reported_as_it_ends():
    """A long batch (the title screen) says how far it is: on_game sees every game it returns, and no spare one."""
    seen: list[MatchResult] = []
    pairings = [Pairing(RandomPolicy(), make_baseline("rule"), 3), Pairing(make_baseline("rule"), RandomPolicy(), 2)]
    results = play_pairings(pairings, seed=4, game_seconds=2, workers=1, envs_per_worker=4, placement="in-process",
                            on_game=seen.append)
    assert [len(r) for r in results] == [3, 2]
    assert sorted(seen) == sorted(r for rs in results for r in rs)
