"""Ratings that cannot be trusted (issue 37, item 2): never stored, and a home that holds them is told how to
rebuild them from the recorded games (`league ratings rebuild`), which then works."""

from __future__ import annotations

import sqlite3

import pytest
from typer.testing import CliRunner

from league.cli import app
from league.config import EloConfig, RatingsConfig, TrueSkillConfig
from league.errors import LeagueError
from league.registry import Registry

from conftest import play

REBUILD = "league ratings rebuild --stage 1v1"


def one_sentence(text: str) -> str:
    text = " ".join(text.split())  # rich wraps long lines on a narrow console
    assert text.count(". ") <= 1 and text.endswith("."), text
    return text


def league_with_games(home) -> list[tuple]:
    """A few rated 1v1 games between the baselines; their stored (name, elo, mu, sigma, games) rows."""
    reg = Registry.open(home.db_path)
    for blue, orange, bg, og in [("rule", "random", 3, 0), ("atba", "random", 1, 1), ("rule", "atba", 2, 1),
                                 ("random", "rule-pro", 0, 4), ("rule", "rule", 1, 0)]:  # a mirror game too
        play(reg, blue, orange, bg, og)
    rows = stored(reg)
    reg.close()
    return rows


def stored(reg: Registry, team_size: int = 1) -> list[tuple]:
    return [(r["name"], r["elo"], r["mu"], r["sigma"], r["games"], r["wins"], r["draws"], r["losses"], r["goals_for"],
             r["goals_against"])
            for r in reg.db.query("""SELECT a.name, r.* FROM ratings r JOIN agents a ON a.id = r.agent_id
                                     WHERE r.team_size = ? ORDER BY a.name""", [team_size])]


def history(reg: Registry) -> list[tuple]:
    return [tuple(r.values())[1:-1] for r in reg.db.query(  # without the id and the time
        "SELECT id, game_id, agent_id, team_size, elo_before, elo_after, mu_before, mu_after, sigma_before, "
        "sigma_after, played FROM rating_history ORDER BY id")]


def poison(home, name: str, column: str, value: float) -> None:
    """What the old code could leave behind: a rating written straight into SQLite."""
    con = sqlite3.connect(home.db_path)
    con.execute(f"UPDATE ratings SET {column} = ? WHERE team_size = 1 AND agent_id = "
                "(SELECT id FROM agents WHERE name = ?)", [value, name])
    con.commit()
    con.close()


def counts(home) -> tuple[int, int, int]:
    con = sqlite3.connect(home.db_path)
    try:
        return tuple(con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                     for t in ("games", "ratings", "rating_history"))
    finally:
        con.close()


@pytest.mark.parametrize("column, value", [("elo", float("inf")), ("elo", 1e308), ("mu", -float("inf")),
                                           ("sigma", 0.0), ("sigma", 1e200)])
def test_a_poisoned_rating_stops_the_next_game_with_the_rebuild_sentence_and_writes_nothing(home, column, value):
    league_with_games(home)
    poison(home, "rule", column, value)
    before = counts(home)
    reg = Registry.open(home.db_path)
    with pytest.raises(LeagueError) as info:
        play(reg, "rule", "atba", 1, 0)
    text = one_sentence(str(info.value))
    assert "'rule'" in text and "1v1" in text and REBUILD in text
    reg.close()
    assert counts(home) == before


def test_rebuild_recomputes_ratings_and_history_from_the_games_in_order(home):
    good = league_with_games(home)
    reg = Registry.open(home.db_path)
    good_history = history(reg)
    reg.close()
    poison(home, "rule", "elo", float("inf"))
    poison(home, "atba", "mu", 1e308)
    reg = Registry.open(home.db_path)
    summary = reg.game_store.rebuild(1)
    assert summary.games == 4 and summary.agents == 4  # the mirror game is recorded, never rated
    assert stored(reg) == good
    assert history(reg) == good_history
    play(reg, "rule", "atba", 1, 0)  # the next game is rated again
    reg.close()


def test_rebuild_uses_the_homes_config(home):
    league_with_games(home)
    cfg = RatingsConfig(elo=EloConfig(initial=1000.0))
    reg = Registry.open(home.db_path, cfg)
    reg.game_store.rebuild(1)
    mean = sum(r[1] for r in stored(reg)) / len(stored(reg))
    assert mean == pytest.approx(1000.0)  # Elo is zero-sum: the mean stays the initial rating
    reg.close()


@pytest.mark.parametrize("ratings", [RatingsConfig(elo=EloConfig(initial=1e308)),
                                     RatingsConfig(trueskill=TrueSkillConfig(sigma=1e200))],
                         ids=["elo-1e308", "sigma-1e200"])
def test_ratings_that_would_not_be_finite_are_never_stored(home, ratings):
    # The config refuses these now; a Registry handed them anyway still stores nothing absurd.
    league_with_games(home)
    before = counts(home)
    reg = Registry.open(home.db_path, ratings)
    with pytest.raises(LeagueError) as info:
        play(reg, "rule-pro", "atba", 2, 0, team_size=2)  # no 2v2 ratings yet: the initial ones
    text = one_sentence(str(info.value))
    assert "not recorded" in text and "ratings" in text
    reg.close()
    assert counts(home) == before


def cli(home, *args):
    return CliRunner().invoke(app, [*args, "--home", str(home.root)])


def test_cli_match_and_tournament_say_how_to_rebuild_then_rebuild_fixes_the_home(home):
    league_with_games(home)
    poison(home, "rule", "elo", 1e308)
    before = counts(home)
    for args in (["match", "rule", "atba", "--max-games", "2", "--game-seconds", "5", "--workers", "1"],
                 ["tournament", "--games", "1", "--agents", "rule,atba", "--game-seconds", "5", "--workers", "1"]):
        result = cli(home, *args)
        assert result.exit_code == 2, result.output
        text = one_sentence(result.output.split("Error:", 1)[1])
        assert "'rule'" in text and REBUILD in text
    assert counts(home)[0] == before[0]  # no game was played in vain
    assert cli(home, "leaderboard").exit_code == 0  # reading still works

    result = cli(home, "ratings", "rebuild", "--stage", "1v1")
    assert result.exit_code == 0, result.output
    assert "Rebuilt" in result.output and "1v1" in result.output
    result = cli(home, "match", "rule", "atba", "--max-games", "2", "--game-seconds", "5", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert counts(home)[0] == before[0] + 2


def test_cli_rebuild_of_every_stage_and_its_help_has_an_example(home):
    league_with_games(home)
    result = cli(home, "ratings", "rebuild")
    assert result.exit_code == 0, result.output
    assert "1v1" in result.output
    assert "Example: league ratings rebuild" in CliRunner().invoke(app, ["ratings", "rebuild", "--help"]).output
