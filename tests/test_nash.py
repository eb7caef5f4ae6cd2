"""Nash averaging (league.nash): properties of the maximum-entropy equilibrium, the meta-game built
from recorded results, and `league leaderboard --by nash` on real league homes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from typer.testing import CliRunner

from league.cli import app
from league.nash import SCORE_TOLERANCE, NashAverage, max_entropy_nash, meta_game, nash_average
from league.registry import Registry
from league.standings import PairRecord

from conftest import play

TOL = SCORE_TOLERANCE
FAST = settings(max_examples=60, deadline=None)

# A pair's payoff: the score rate of a few games minus 1/2 (ties and "never met" are common, as in a
# league), or of up to a thousand games.
payoffs = st.one_of(st.sampled_from([k / 8 - 0.5 for k in range(9)]), st.integers(-1000, 1000).map(lambda k: k / 2000))


@st.composite
def games(draw, min_members: int = 1, max_members: int = 6) -> np.ndarray:
    """An antisymmetric meta-game of a few members."""
    n = draw(st.integers(min_members, max_members))
    upper = draw(st.lists(payoffs, min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))
    a = np.zeros((n, n))
    a[np.triu_indices(n, 1)] = upper
    return a - a.T


def entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p @ np.log(p)))


def rps(strength: float = 0.5) -> np.ndarray:
    return strength * np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])


# --------------------------------------------------------------------------- the equilibrium


@FAST
@given(st.floats(0.01, 0.5))
def test_rock_paper_scissors_gives_a_third_each(strength):
    p = max_entropy_nash(rps(strength))
    assert np.allclose(p, 1 / 3, atol=1e-9)
    assert np.allclose(rps(strength) @ p, 0.0, atol=1e-12)


@FAST
@given(games())
def test_weights_are_a_distribution_and_no_member_beats_the_mixture(a):
    p = max_entropy_nash(a)
    scores = a @ p
    assert np.all(p >= 0) and math.isclose(p.sum(), 1.0, abs_tol=1e-12)
    assert scores.max() <= TOL  # no member scores above 0 against the mixture
    assert np.all(np.abs(scores[p > 0]) <= TOL)  # the support scores 0


@FAST
@given(games(), st.data())
def test_an_exact_copy_leaves_every_other_score_unchanged_and_shares_the_weight(a, data):
    n = len(a)
    copied = data.draw(st.integers(0, n - 1), label="copied")
    at = data.draw(st.integers(0, n), label="inserted at")
    order = list(range(n))
    order.insert(at, copied)  # the copy may come before the original: the strategies' order changes
    b = a[np.ix_(order, order)]
    p, q = max_entropy_nash(a), max_entropy_nash(b)
    before, after = a @ p, b @ q
    for position, member in enumerate(order):
        assert math.isclose(after[position], before[member], abs_tol=TOL)
    original, copy = [i for i, m in enumerate(order) if m == copied]
    assert math.isclose(q[original], q[copy], abs_tol=1e-12)
    same = np.all(a == a[copied], axis=1)  # the original may already have copies in `a`
    assert math.isclose(q[np.all(b == b[original], axis=1)].sum(), p[same].sum(), abs_tol=TOL)


def test_a_copy_draws_no_weight_to_its_strategy_where_equilibria_are_many():
    # a and b never met and both beat c: every mix of a and b is an equilibrium. The plain
    # maximum-entropy one would give a with a copy 2/3 and move c's score; copies share instead.
    x, y = 0.3, 0.1
    a = np.array([[0.0, 0.0, x], [0.0, 0.0, y], [-x, -y, 0.0]])
    b = np.array([[0.0, 0.0, 0.0, x], [0.0, 0.0, 0.0, x], [0.0, 0.0, 0.0, y], [-x, -x, -y, 0.0]])
    assert np.allclose(max_entropy_nash(a), [0.5, 0.5, 0.0])
    assert np.allclose(max_entropy_nash(b), [0.25, 0.25, 0.5, 0.0])
    assert math.isclose((a @ max_entropy_nash(a))[2], (b @ max_entropy_nash(b))[3], abs_tol=1e-12)


@FAST
@given(games(), st.data())
def test_a_member_that_beats_everyone_gets_all_the_weight(a, data):
    n = len(a)
    best = data.draw(st.integers(0, n - 1), label="best")
    margins = data.draw(st.lists(st.floats(0.001, 0.5), min_size=n, max_size=n), label="margins")
    a = a.copy()
    for j in range(n):
        if j != best:
            a[best, j], a[j, best] = margins[j], -margins[j]
    p = max_entropy_nash(a)
    assert math.isclose(p[best], 1.0, abs_tol=1e-9)
    assert np.allclose(a @ p, a[:, best], atol=1e-9)  # everyone's score is its result against it


@FAST
@given(games(min_members=2), st.lists(st.floats(-1, 1), min_size=6, max_size=6))
def test_no_equilibrium_has_more_entropy(a, direction):
    """Another equilibrium (a vertex the LP finds for a random objective, and its midpoint with
    ours) never has more entropy than the one chosen, among games without copies."""
    n = len(a)
    if len({row.tobytes() for row in a + 0.0}) < n:
        return  # copies share their strategy's weight, which is the maximum over strategies, not members
    p = max_entropy_nash(a)
    scale = max(np.abs(a).max(), 1e-300)  # the LP's tolerances are absolute: give it payoffs of order 1
    other = linprog(np.array(direction[:n]), A_ub=a / scale, b_ub=np.zeros(n), A_eq=np.ones((1, n)), b_eq=[1.0],
                    bounds=[(0, None)] * n, method="highs").x
    for q in (other, (other + p) / 2):
        assert entropy(p) >= entropy(np.clip(q, 0, None)) - 1e-7


def test_a_game_where_everyone_is_even_is_played_uniformly():
    assert np.allclose(max_entropy_nash(np.zeros((4, 4))), 0.25)
    assert max_entropy_nash(np.zeros((0, 0))).shape == (0,)
    assert max_entropy_nash(np.zeros((1, 1))).tolist() == [1.0]


def test_a_payoff_a_million_times_smaller_than_the_largest_is_a_tie():
    a = np.array([[0.0, 1e-9, 0.5], [-1e-9, 0.0, 0.5], [-0.5, -0.5, 0.0]])
    assert np.allclose(max_entropy_nash(a), [0.5, 0.5, 0.0])


def test_a_payoff_that_is_not_antisymmetric_is_refused():
    with pytest.raises(ValueError, match="antisymmetric"):
        max_entropy_nash(np.array([[0.0, 0.2], [0.2, 0.0]]))
    with pytest.raises(ValueError, match="finite square"):
        max_entropy_nash(np.array([[0.0, math.nan], [math.nan, 0.0]]))


# --------------------------------------------------------------------------- from recorded results


def test_meta_game_counts_both_sides_and_draws_half_and_unplayed_pairs_zero():
    records = [PairRecord("a", "b", wins=3, draws=2, losses=1), PairRecord("b", "a", wins=1, losses=1),
               PairRecord("a", "a", wins=5), PairRecord("a", "outsider", wins=9)]
    payoff, games = meta_game(["a", "b", "c"], records)
    # a against b: 3 + 1 wins, 2 draws, 1 + 1 losses over 8 games: (4 + 1) / 8
    assert payoff[0, 1] == pytest.approx(5 / 8 - 0.5) and payoff[1, 0] == pytest.approx(-(5 / 8 - 0.5))
    assert games.tolist() == [[0, 8, 0], [8, 0, 0], [0, 0, 0]]
    assert payoff[0, 2] == 0.0 and payoff[0, 0] == 0.0


def test_nash_average_of_records_names_the_support_unplayed_pairs_and_who_is_left_out():
    records = [PairRecord("rock", "scissors", wins=4), PairRecord("scissors", "paper", wins=4),
               PairRecord("paper", "rock", wins=3, draws=2), PairRecord("weak", "rock", losses=2),
               PairRecord("weak", "paper", draws=2)]
    nash = nash_average(["rock", "paper", "scissors", "weak", "idle"], records)
    assert isinstance(nash, NashAverage)
    assert nash.members == ("rock", "paper", "scissors", "weak") and nash.left_out == ("idle",)
    assert nash.unplayed_pairs == (("scissors", "weak"),)
    assert set(nash.support) == {"rock", "paper", "scissors"} and nash.weight("weak") == 0.0
    assert nash.score("weak") < -TOL
    assert [nash.members[i] for i in nash.ranking()][-1] == "weak"
    assert all(abs(nash.score(m)) <= TOL for m in nash.support)


def test_nash_average_of_nobody_is_empty():
    nash = nash_average(["a", "b"], [])
    assert nash.members == () and nash.weights == () and nash.left_out == ("a", "b") and nash.support == ()


# --------------------------------------------------------------------------- league leaderboard --by nash

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def nash_rows(output: str) -> list[tuple[str, float, float]]:
    """(agent, nash weight, nash score) of each printed row, in order."""
    cells = [[c.strip() for c in line.split("│")] for line in output.splitlines() if "│" in line]
    return [(c[2], float(c[4].replace("<", "")), float(c[5])) for c in cells if c[1].isdigit()]


@pytest.fixture
def rps_league(tmp_path):
    """A league whose agents rock, paper and scissors beat each other in a circle, and `weak`, which
    loses to rock and draws paper (it never met scissors); the baselines have no games."""
    home = tmp_path / "lh"
    assert run("init", "--home", home).exit_code == 0
    reg = Registry.open(home / "league.db")
    for name in ("rock", "paper", "scissors", "weak"):
        reg.agent_store.add(name, "mlp", 1)
    for _ in range(2):
        play(reg, "rock", "scissors", 2, 0)
        play(reg, "paper", "scissors", 0, 1)  # scissors (orange) wins
        play(reg, "paper", "rock", 3, 1)
        play(reg, "weak", "rock", 0, 2)
        play(reg, "paper", "weak", 1, 1)
    reg.close()
    return home


def test_leaderboard_by_nash_ranks_by_score_with_weights(rps_league):
    result = run("leaderboard", "--home", rps_league, "--by", "nash")
    assert result.exit_code == 0, result.output
    rows = nash_rows(result.output)
    assert {name for name, _, _ in rows[:3]} == {"rock", "paper", "scissors"}
    assert all(weight == pytest.approx(0.333, abs=1e-3) and score == 0.0 for _, weight, score in rows[:3])
    assert rows[3][0] == "weak" and rows[3][1] == 0.0 and rows[3][2] < 0
    text = " ".join(result.output.split())
    assert f"Nash support: {', '.join(name for name, _, _ in rows[:3])}" in text
    assert "1 pair of agents never met and count as even" in text
    assert "Left out (no game against a listed agent): random, rule" in text


def test_leaderboard_by_nash_is_not_fooled_by_copies(rps_league):
    reg = Registry.open(rps_league / "league.db")
    for copy in ("rock-2", "rock-3"):  # two more snapshots that play exactly as rock does
        reg.agent_store.add(copy, "mlp", 1)
        for _ in range(2):
            play(reg, copy, "scissors", 2, 0)
            play(reg, "paper", copy, 3, 1)
            play(reg, "weak", copy, 0, 2)
    reg.close()
    rows = {name: (weight, score) for name, weight, score in
            nash_rows(run("leaderboard", "--home", rps_league, "--by", "nash").output)}
    assert rows["paper"][0] == rows["scissors"][0] == pytest.approx(0.333, abs=1e-3)
    assert all(rows[r][0] == pytest.approx(0.111, abs=1e-3) for r in ("rock", "rock-2", "rock-3"))
    assert rows["weak"][1] < 0


def test_leaderboard_by_nash_without_games_and_unknown_ranking(rps_league):
    result = run("leaderboard", "--home", rps_league, "--by", "nash", "--stage", "2v2")
    assert result.exit_code == 0 and "No games between the listed agents in 2v2 yet" in result.output
    result = run("leaderboard", "--home", rps_league, "--by", "nahs")
    assert result.exit_code == 2
    assert "Unknown ranking 'nahs'; expected elo, trueskill, mle or nash." in " ".join(result.output.split())
