"""league.nash_standings, the one place Nash averaging is assembled, through `league leaderboard --by nash
[--tournament ID]` on a league written through the stores (tests/dashboard_leagues.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dashboard_leagues import build_sparse_league
from league.cli import app
from league.nash import nash_average
from league.nash_standings import read_nash, round_robins
from league.registry import Registry

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    return build_sparse_league(tmp_path_factory.mktemp("sparse") / "league")


def test_read_nash_over_one_tournament_weighs_its_entrants_over_its_games_alone(sparse):
    reg = Registry.open(sparse.home.db_path, readonly=True)
    try:
        whole = read_nash(reg.db, 1, reg.ratings_cfg)
        one = read_nash(reg.db, None, reg.ratings_cfg, tournament_id=sparse.round_robin)
        games = reg.game_store.games(tournament_id=sparse.round_robin)
        assert [t.id for t in round_robins(reg.db, 1)] == [sparse.round_robin]
    finally:
        reg.close()
    assert (whole.pairs, whole.met_pairs, whole.too_sparse) == (28, 11, True)
    assert (one.pairs, one.met_pairs, one.too_sparse, one.where) == (6, 6, False, f"tournament #{sparse.round_robin} four")
    # the same as nash_average over that tournament's games, one record per game
    records = [type("R", (), {"agent": g.blue, "opponent": g.orange, "wins": int(g.result == "blue"),
                              "draws": int(g.result == "draw"), "losses": int(g.result == "orange")})()
               for g in games]
    expected = nash_average(["a", "b", "c", "d"], records)
    assert one.nash.weights == pytest.approx(expected.weights) and one.nash.scores == pytest.approx(expected.scores)
    rows = one.rows()
    assert [(r.name, r.games, r.wins, r.losses) for r in rows] == [("a", 6, 6, 0), ("b", 6, 4, 2), ("c", 6, 2, 4),
                                                                   ("d", 6, 0, 6)]


def test_leaderboard_by_nash_over_a_tournament(sparse):
    result = run("leaderboard", "--home", sparse.home.root, "--by", "nash", "--tournament", sparse.round_robin)
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert f"Leaderboard tournament #{sparse.round_robin} four (by nash)" in text
    assert "Nash support: a" in text and "payoff matrix 100% full: 6 of 6 pairs met" in text
    assert "Too sparse" not in text
    names = [line.split("│")[2].strip() for line in result.output.splitlines()
             if "│" in line and line.split("│")[1].strip().isdigit()]
    assert names == ["a", "b", "c", "d"]


def test_a_sparse_stage_says_so_and_names_the_round_robins(sparse):
    result = run("leaderboard", "--home", sparse.home.root, "--by", "nash")
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    assert "payoff matrix 39% full: 11 of 28 pairs met" in text and "17 pairs of agents never met" in text
    assert "Too sparse to mean much" in text
    assert f"`--tournament {sparse.round_robin}` (four, 4 entrants, 12 games)" in text
    assert f"--tournament {sparse.partial}`" not in text  # e never met b: not a full round robin


@pytest.mark.parametrize(("args", "sentence"), [
    (["--by", "nash", "--tournament", "99"], "No tournament with id 99; tournaments here: 1, 2."),
    (["--by", "nash", "--tournament", "1", "--stage", "2v2"], "Tournament 1 was played in 1v1, not 2v2"),
    (["--by", "elo", "--tournament", "1"], "--tournament goes with --by nash"),
])
def test_a_bad_tournament_is_one_sentence_and_exit_2(sparse, args, sentence):
    result = run("leaderboard", "--home", sparse.home.root, *args)
    assert result.exit_code == 2
    assert sentence in flat(result.output)
    assert "Traceback" not in result.output
