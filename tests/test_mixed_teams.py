"""Mixed teams (issue 39, item 5): a side of several members in 2v2 and 3v3, in matches and tournaments
with named teams; stored car by car (game_members, migration 0009), each member rated (Elo, TrueSkill,
the MLE fit with a team as the mean of its members), and the leaderboard counting mixed games."""

import sqlite3
from contextlib import contextmanager

import numpy as np
import pytest
from typer.testing import CliRunner

from arena.tournament_play import car_drivers
from conftest import play, recompute_ratings
from league import schema
from league.cli import app
from league.config import MleConfig, RatingsConfig
from league.errors import LeagueError
from league.ratings import elo_expected, mle_fit, trueskill_env
from league.registry import Registry
from league.schedule import ScheduledGame
from league.standings import read_standings
from league.stores.database import connect
from league.teams import cars, parse_side

runner = CliRunner()
GAME_SECONDS = "3"


def cli(home, *args):
    return runner.invoke(app, [*map(str, args), "--home", str(home.root)])


def play_cli(home, *args) -> str:
    """The output of a command that plays short games on one worker, which must succeed."""
    done = cli(home, *args, "--game-seconds", GAME_SECONDS, "--workers", "1")
    assert done.exit_code == 0, done.output
    return done.output


@contextmanager
def opened(home):
    reg = Registry.open(home.db_path)
    try:
        yield reg
    finally:
        reg.close()


def test_a_side_is_one_agent_or_exactly_team_size_distinct_members():
    assert parse_side("rule", 2) == "rule" and cars("rule", 3) == ("rule",) * 3
    assert parse_side(" rule + atba ", 2) == "rule+atba" and cars("rule+atba", 2) == ("rule", "atba")
    for text, message in (("rule+atba+random", "has 3 members; a 2v2 team has 2"), ("rule+rule", "names 'rule' twice"),
                          ("rule+", "has an empty name"), ("rule+a b", "is not allowed")):
        with pytest.raises(LeagueError, match=message):
            parse_side(text, 2)


def test_each_car_row_is_driven_by_its_slots_member():
    batch = [ScheduledGame(0, "rule+atba", "random", 1), ScheduledGame(1, "random", "atba+rule", 2)]
    names = car_drivers(batch, 3, 2)  # the third arena idles, playing the first game again
    assert names.tolist() == ["rule", "atba", "random", "random", "random", "random", "atba", "rule",
                              "rule", "atba", "random", "random"]


def test_a_mixed_game_is_stored_car_by_car_and_rates_every_member(registry):
    cfg = registry.ratings_cfg
    game_id = play(registry, "rule+random", "atba+rule-pro", 1, 0, team_size=2)
    db = registry.db
    row = db.execute("SELECT blue_agent_id, orange_agent_id, mixed FROM games WHERE id = ?", [game_id]).fetchone()
    ids = {n: registry.agent_store.get(n).id for n in ("rule", "random", "atba", "rule-pro")}
    assert row == (ids["rule"], ids["atba"], 1)  # the first members, and the mark
    assert db.execute("SELECT side, slot, agent_id FROM game_members WHERE game_id = ? ORDER BY side, slot",
                      [game_id]).fetchall() == [("blue", 0, ids["rule"]), ("blue", 1, ids["random"]),
                                                ("orange", 0, ids["atba"]), ("orange", 1, ids["rule-pro"])]
    game = registry.game_store.games(2)[0]
    assert (game.blue, game.orange, game.mixed) == ("rule+random", "atba+rule-pro", 1)
    delta = cfg.elo.k_factor * (1.0 - elo_expected(cfg.elo.initial, cfg.elo.initial, cfg.elo.scale))
    env = trueskill_env(cfg.trueskill)
    (w1, w2), (l1, l2) = env.rate([[env.create_rating(), env.create_rating()]] * 2, ranks=[0, 1])
    for name, elo, ts in (("rule", cfg.elo.initial + delta, w1), ("random", cfg.elo.initial + delta, w2),
                          ("atba", cfg.elo.initial - delta, l1), ("rule-pro", cfg.elo.initial - delta, l2)):
        r = registry.game_store.rating(name, 2)
        assert r.games == 1 and r.elo == pytest.approx(elo) and r.mu == pytest.approx(ts.mu)
        assert r.sigma == pytest.approx(ts.sigma) and len(registry.game_store.rating_history(name, 2)) == 1
    assert (registry.game_store.rating("rule", 2).wins, registry.game_store.rating("atba", 2).losses) == (1, 1)


def test_a_single_agent_side_of_a_mixed_game_is_rated_as_its_copies(registry):
    play(registry, "rule+random", "atba", 0, 2, team_size=2)
    env = trueskill_env(registry.ratings_cfg.trueskill)
    _, (atba, _) = env.rate([[env.create_rating()] * 2] * 2, ranks=[1, 0])
    r = registry.game_store.rating("atba", 2)
    assert (r.games, r.wins, r.goals_for) == (1, 1, 2) and r.mu == pytest.approx(atba.mu)
    assert r.elo > registry.ratings_cfg.elo.initial > registry.game_store.rating("random", 2).elo


def test_rebuilt_and_recomputed_ratings_equal_the_stored_ones_with_mixed_and_single_games(registry):
    for blue, orange, bg, og in (("rule+random", "atba+rule-pro", 2, 1), ("rule", "atba", 0, 1),
                                 ("atba+rule", "random", 3, 0), ("rule-pro", "random+rule", 1, 1)):
        play(registry, blue, orange, bg, og, team_size=2)
    stored = {n: registry.game_store.rating(n, 2) for n in ("rule", "random", "atba", "rule-pro")}
    recomputed = recompute_ratings(registry.game_store, 2)
    for name, r in stored.items():
        assert recomputed[name] == pytest.approx((r.elo, r.mu, r.sigma))
    done = registry.game_store.rebuild(2)
    assert (done.games, done.agents) == (4, 4)
    for name, r in stored.items():
        assert registry.game_store.rating(name, 2) == r


def test_a_team_game_refuses_shared_members_and_short_teams_writing_nothing(registry):
    with pytest.raises(LeagueError, match="'rule' is on both sides"):
        play(registry, "rule+random", "rule+atba", 1, 0, team_size=2)
    with pytest.raises(LeagueError, match="does not fill the 3 cars"):
        play(registry, "rule+random", "atba", 1, 0, team_size=3)
    assert registry.game_store.games() == []


def test_the_mle_fit_rates_a_team_as_the_mean_of_its_members():
    cfg = MleConfig()
    pairwise = mle_fit([("a", "rule", 1.0), ("a", "rule", 0.5), ("b", "a", 1.0)], cfg)
    as_teams = mle_fit([], cfg, team_games=[(("a",), ("rule",), 1.0), (("a",), ("rule",), 0.5),
                                            (("b",), ("a",), 1.0)])
    assert as_teams.names == pairwise.names
    assert np.allclose(as_teams.ratings, pairwise.ratings) and np.allclose(as_teams.covariance, pairwise.covariance)
    # x+rule beats y+rule three games in four: x, the only difference, is above y by twice the pair's gap.
    teams = [(("x", "rule"), ("y", "rule"), s) for s in (1.0, 1.0, 1.0, 0.0)] * 10
    fit = mle_fit([], MleConfig(prior_draws=0.01), team_games=teams)
    gap = 400 * np.log10(3.0)
    assert fit.rating("x") - fit.rating("y") == pytest.approx(2 * gap, rel=0.02)
    assert list(fit.games) == [80, 40, 40]


def test_an_older_home_upgrades_keeping_its_games_and_reads_without_the_new_table(tmp_path):
    path = tmp_path / "v8.db"
    db = connect(path)
    schema.migrations.apply(db, stop_before="0009_game_members")
    db.conn.close()
    old = Registry(connect(path))
    old.agent_store.ensure_baselines()
    play(old, "rule", "random", 2, 1, team_size=2)
    old.close()
    readonly = Registry.open(path, readonly=True)  # never migrated: no mixed games, the same tables
    assert "game_members" not in readonly.db.table_names()
    board = read_standings(readonly.db, 2, RatingsConfig())
    assert {r.name: (r.games, r.mixed) for r in board.rows}["rule"] == (1, 0)
    assert [(g.blue, g.orange, g.mixed) for g in readonly.game_store.games()] == [("rule", "random", 0)]
    readonly.close()
    reg = Registry.open(path)
    assert schema.schema_version(reg.db) == schema.latest_version() >= 9
    assert [(g.blue, g.orange, g.blue_goals, g.mixed) for g in reg.game_store.games()] == [("rule", "random", 2, 0)]
    assert reg.game_store.rating("rule", 2).games == 1
    play(reg, "rule+random", "atba+rule-pro", 0, 0, team_size=2)
    assert [g.mixed for g in reg.game_store.games()] == [0, 1]
    assert reg.db.execute("PRAGMA foreign_key_check").fetchall() == []
    with pytest.raises(sqlite3.IntegrityError):  # a car's agent must exist
        with reg.transaction():
            reg.db.execute("INSERT INTO game_members (game_id, side, slot, agent_id) VALUES (2, 'blue', 2, 999)")
    reg.close()


def test_league_match_plays_mixed_teams_and_the_leaderboard_counts_their_games(home):
    match = ("match", "rule+random", "atba+rule-pro", "--stage", "2v2", "--max-games", "2")
    assert "rule+random vs atba+rule-pro, 2v2" in play_cli(home, *match)
    with opened(home) as reg:
        games = reg.game_store.games(2)
        assert [(g.blue, g.orange, g.mixed) for g in games] == [("rule+random", "atba+rule-pro", 1),
                                                                ("atba+rule-pro", "rule+random", 1)]
        assert all((home.root / g.replay_path).is_file() for g in games)
        assert {n: reg.game_store.rating(n, 2).games for n in ("rule", "random", "atba", "rule-pro")} == dict.fromkeys(
            ("rule", "random", "atba", "rule-pro"), 2)
        row = reg.match_store.all()[0]
        assert (row.a, row.b, row.games) == ("rule+random", "atba+rule-pro", 2)
    assert "already finished" in play_cli(home, *match)  # the same teams: the same match
    board = runner.invoke(app, ["leaderboard", "--stage", "2v2", "--home", str(home.root)], env={"COLUMNS": "200"})
    assert board.exit_code == 0 and "mixed" in board.output
    assert "a side was a team of several members" in board.output
    rule_row = next(line for line in board.output.splitlines() if " rule " in line)
    assert rule_row.rstrip(" │").endswith("2")  # its two games, both mixed


@pytest.mark.parametrize("a, b, stage, message", [
    ("rule+random+atba", "rule-pro", "2v2", "has 3 members; a 2v2 team has 2"),
    ("rule+nobody", "atba", "2v2", "nobody"),
    ("rule+random", "random+atba", "2v2", "'random' is on both sides"),
    ("rule+random", "atba", "1v1", "is for 2v2 or 3v3"),
    ("rule+net-1v1", "atba+random", "2v2", "'net-1v1' is a 1v1 agent, not 2v2"),
    ("rule+old", "atba+random", "2v2", "'old' is retired"),
])
def test_league_match_refuses_a_bad_team_in_one_sentence_writing_nothing(home, a, b, stage, message):
    with opened(home) as reg:
        reg.agent_store.add("net-1v1", "mlp", 1)
        reg.agent_store.add("old", "mlp", 2)
        reg.agent_store.set_status("old", "retired")
    done = cli(home, "match", a, b, "--stage", stage, "--max-games", "2")
    assert done.exit_code == 2 and message in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1
    with opened(home) as reg:
        assert reg.match_store.all() == [] and reg.tournament_store.all() == [] and reg.game_store.games() == []


def test_a_tournament_of_named_teams_plays_a_round_robin_rating_every_member(home):
    done = cli(home, "tournament", "--stage", "2v2", "--teams", "rule+random,atba+rule-pro,rule-pro",
               "--games", "2", "--game-seconds", GAME_SECONDS, "--workers", "1")
    assert done.exit_code == 2 and "'rule-pro' is in two teams" in done.output
    done = cli(home, "tournament", "--stage", "2v2", "--teams", "rule+random, atba+rule-pro", "--agents", "rule,atba")
    assert done.exit_code == 2 and "as agents or as teams, not both" in done.output
    output = play_cli(home, "tournament", "--stage", "3v3", "--teams", "rule+random+atba,rule-pro", "--games", "2")
    assert "members of mixed teams" in output
    with opened(home) as reg:
        t = reg.tournament_store.all()[-1]
        assert t.entrants == ["rule+random+atba", "rule-pro"] and t.status == "finished"
        games = reg.game_store.games(3, tournament_id=t.id)
        assert sorted((g.blue, g.orange) for g in games) == [("rule+random+atba", "rule-pro"),
                                                             ("rule-pro", "rule+random+atba")]
        assert reg.db.execute("SELECT COUNT(*) FROM game_members").fetchone() == (12,)
        board = read_standings(reg.db, 3, reg.ratings_cfg, by="mle")
        rows = {r.name: r for r in board.rows}
        assert all(rows[n].games == rows[n].mixed == 2 for n in ("rule", "random", "atba", "rule-pro"))
        assert all(rows[n].mle_interval is not None for n in ("random", "atba", "rule-pro"))


def test_necto_plays_in_a_mixed_team(home):
    from community_bots import bots_dir

    added = cli(home, "bot", "add", "necto", bots_dir() / "Necto")
    assert added.exit_code == 0, added.output
    play_cli(home, "match", "necto+random", "rule+atba", "--stage", "2v2", "--max-games", "2")
    with opened(home) as reg:
        assert reg.game_store.rating("necto", 2).games == 2
        assert [g.blue for g in reg.game_store.games(2)] == ["necto+random", "rule+atba"]
