"""Openings (game.opening_jitter): a timed game opens with its cars' kickoff spots moved, drawn from the
game's seed, so a match between two agents that play their most likely action plays as many lines as
games (before, one line from each of the five spots); both games of a mirrored pair open alike; a match
made before openings existed resumes as it began; training's kickoffs keep the standard spots."""

from pathlib import Path

import numpy as np
import pytest
from rlgym.rocket_league.state_mutators import KickoffMutator
from typer.testing import CliRunner

from arena.engine.game import GameSpec, kickoff_mutator, make_rlgym_env
from arena.engine.rlgym_state import base_state
from arena.match import match_outcome
from arena.replay import read_replay
from league.cli import app
from league.config import OPENING_JITTER, GameConfig, load_config
from league.registry import Registry
from league.stores.matches import MatchSettings

runner = CliRunner()
SPOTS = np.concatenate([KickoffMutator.SPAWN_BLUE_POS, KickoffMutator.SPAWN_ORANGE_POS])[:, :2]


def opening(spec: GameSpec, seed: int) -> np.ndarray:
    """Every car's position (x, y, z) as a real RLGym game of `spec` opens with `seed`."""
    env = make_rlgym_env(spec, seed=seed)
    try:
        env.reset()
        return np.array([car.physics.position for _, car in sorted(env.state.cars.items())])
    finally:
        env.close()


def nearest_spot(xy: np.ndarray) -> np.ndarray:
    return SPOTS[np.argmin(np.abs(SPOTS - xy).max(axis=1))]


def on_a_spot(xy: np.ndarray) -> bool:
    return bool(np.allclose(xy, nearest_spot(xy), atol=0.01))  # RocketSim keeps float32


@pytest.mark.parametrize("team_size", [1, 3])
def test_a_timed_game_opens_near_the_standard_spots_and_a_training_game_on_them(team_size):
    for seed in range(4):
        standard = opening(GameSpec(team_size=team_size, mode="timed", game_seconds=10), seed)
        jittered = opening(GameSpec(team_size=team_size, mode="timed", game_seconds=10, opening_jitter=100), seed)
        for car, moved in zip(standard, jittered):
            assert on_a_spot(car[:2])  # 0: RLGym's spots
            # The same spot (the spots are drawn first), moved by at most the jitter, on the ground as before.
            assert np.array_equal(nearest_spot(moved[:2]), nearest_spot(car[:2]))
            assert np.abs(moved[:2] - car[:2]).max() <= 100.01
            assert moved[2] == car[2]
        assert np.abs(jittered[:, :2] - standard[:, :2]).max() > 1
        again = opening(GameSpec(team_size=team_size, mode="timed", game_seconds=10, opening_jitter=100), seed)
        assert np.array_equal(again, jittered)  # drawn from the game's seed: a game replays exactly
    training = GameSpec.from_config(GameConfig(team_size=team_size, random_start_share=0.0), "training")
    timed = GameSpec.from_config(GameConfig(team_size=team_size, random_start_share=0.0), "timed")
    assert (training.opening_jitter, training.kickoff_jitter, timed.opening_jitter) == (0.0, 0.0, OPENING_JITTER)


def test_training_kickoffs_move_only_when_asked_and_then_after_every_goal_too():
    game = GameConfig(team_size=2, random_start_share=0.0, kickoff_jitter=50)
    training, timed = GameSpec.from_config(game, "training"), GameSpec.from_config(game, "timed")
    assert (training.opening_jitter, training.kickoff_jitter) == (50, 50)
    assert (timed.opening_jitter, timed.kickoff_jitter) == (OPENING_JITTER, 0)  # a timed game's later kickoffs: standard
    for spec, moved in ((training, True), (timed, False)):
        state = base_state()
        kickoff_mutator(spec).apply(state, {"rng": np.random.default_rng(3)})  # the restart after a goal
        cars = np.array([car.physics.position[:2] for car in state.cars.values()])
        assert len(cars) == 4
        assert all(np.abs(xy - nearest_spot(xy)).max() <= 50.01 for xy in cars)
        assert (not all(on_a_spot(xy) for xy in cars)) == moved


def test_an_opening_jitter_out_of_range_is_refused():
    with pytest.raises(ValueError, match="opening_jitter must be between 0 and 500"):
        GameSpec(mode="timed", opening_jitter=-1)
    with pytest.raises(Exception, match="opening_jitter"):
        load_config(overrides={"game.opening_jitter": 501})


def match_cli(home, *args: str):
    return runner.invoke(app, ["match", "rule", "rule-pro", "--max-games", "12", "--game-seconds", "2",
                               "--workers", "1", "--home", str(home.root), *args])


def starts(home, reg: Registry, match_id: int) -> list[tuple[str, tuple]]:
    """(blue agent, every car's opening x, y rounded to 0.01 uu) of each game of the match, in schedule order."""
    games = sorted(reg.game_store.games(tournament_id=match_outcome(reg, match_id).tournament_id),
                   key=lambda g: g.schedule_index)
    return [(g.blue, tuple(np.round(read_replay(home.root / g.replay_path).cars[0, :, :2], 2).ravel())) for g in games]


def test_a_match_of_two_greedy_bots_opens_every_pair_its_own_way(home):
    reg = Registry.open(home.db_path)
    played = match_cli(home, "--seed", "5")
    assert played.exit_code == 0, played.output
    assert f"2 s games, openings ±{OPENING_JITTER:g} uu" in played.output
    opened = starts(home, reg, 1)
    assert len(opened) == 12
    # Both games of a pair open alike, sides swapped (each bot plays both sides of one opening) ...
    for p in range(6):
        (blue_a, cars_a), (blue_b, cars_b) = opened[2 * p], opened[2 * p + 1]
        assert (blue_a, blue_b) == ("rule", "rule-pro") and cars_a == cars_b
    # ... and no two pairs alike: six openings in six pairs, where the five spots give at most five.
    assert len({cars for _, cars in opened}) == 6
    standard = match_cli(home, "--seed", "5", "--opening-jitter", "0")
    assert standard.exit_code == 0 and "standard kickoffs" in standard.output and "Starting match 2" in standard.output
    assert len({cars for _, cars in starts(home, reg, 2)}) <= 5
    reg.close()


def test_a_match_made_before_openings_resumes_with_the_standard_spots(home):
    reg = Registry.open(home.db_path)
    cfg = load_config()
    old_config = cfg.to_dict()
    del old_config["game"]["opening_jitter"]  # as a home of the last release stored it
    settings = MatchSettings("rule", "rule-pro", 1, "fixed", None, 4, 4.0, 9, opening_jitter=0.0)
    old, created = reg.match_store.open(settings, 2, old_config)
    assert created and reg.tournament_store.get(old.tournament_id).opening_jitter == 0.0
    # Asked again with the old settings, the old match is found; with today's openings it is another match.
    assert reg.match_store.open(settings, 2, cfg.to_dict())[0].id == old.id
    new, created = reg.match_store.open(MatchSettings("rule", "rule-pro", 1, "fixed", None, 4, 4.0, 9,
                                                      opening_jitter=OPENING_JITTER), 2, cfg.to_dict())
    assert created and new.id != old.id and reg.tournament_store.get(new.tournament_id).opening_jitter == OPENING_JITTER
    resumed = runner.invoke(app, ["match", "--resume", str(old.id), "--workers", "1", "--home", str(home.root)])
    assert resumed.exit_code == 0, resumed.output
    assert "standard kickoffs" in resumed.output
    for _, cars in starts(home, reg, old.id):
        assert all(on_a_spot(xy) for xy in np.reshape(cars, (-1, 2)))
    reg.close()


def test_a_run_with_a_teacher_trains_on_moved_kickoffs_unless_told_otherwise():
    assert load_config(stage="1v1").game.kickoff_jitter == 0.0  # from zero: the standard spots, as measured
    taught = load_config(stage="1v1", overrides={"training.distill.teacher": "necto"})
    assert taught.game.kickoff_jitter == 100.0 and taught.game.opening_jitter == OPENING_JITTER
    assert load_config(stage="1v1", overrides={"training.distill.teacher": "necto",
                                               "game.kickoff_jitter": 0}).game.kickoff_jitter == 0.0
