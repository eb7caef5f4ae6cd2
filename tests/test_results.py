"""One record of results (league.results): its score, intervals and addition, and the rows built on it."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from league.results import UNPLAYED_SCORE, Record, score_rate
from league.stores.payoff import PayoffRecord
from league.stores.roles import RoleCheck

counts = st.integers(min_value=0, max_value=10_000)
records = st.builds(Record, counts, counts, counts)


@given(records)
def test_score_and_win_rate_lie_in_their_intervals_within_0_and_1(r):
    low, high = r.score_interval
    assert 0.0 <= low <= r.score <= high <= 1.0
    low, high = r.win_interval
    assert 0.0 <= low <= r.win_rate <= high <= 1.0
    assert r.games == r.wins + r.draws + r.losses and r.points == r.wins + r.draws / 2


@given(records, records)
def test_adding_records_adds_their_counts_games_and_points(a, b):
    total = a + b
    assert total == Record(a.wins + b.wins, a.draws + b.draws, a.losses + b.losses) == b + a
    assert total.games == a.games + b.games and total.points == a.points + b.points
    assert min(a.score, b.score) - 1e-12 <= total.score <= max(a.score, b.score) + 1e-12 or not (a.games and b.games)


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=30))
def test_a_record_from_goals_counts_each_game_once(goals):
    r = Record.from_goals(goals)
    assert (r.wins, r.draws, r.losses) == (sum(a > b for a, b in goals), sum(a == b for a, b in goals),
                                           sum(a < b for a, b in goals))
    if goals:  # the figure evaluation and the gates used: a win 1, a draw 1/2, per game
        assert r.score == sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in goals) / len(goals)


def test_figures_by_hand_and_with_no_games():
    r = Record(3, 2, 5)
    assert (str(r), r.games, r.points, r.score, r.win_rate) == ("3-2-5", 10, 4.0, 0.4, 0.3)
    assert dataclasses.asdict(r) == {"wins": 3, "draws": 2, "losses": 5, "games": 10}
    empty = Record(0, 0, 0)
    assert (empty.score, empty.win_rate, empty.score_interval, empty.win_interval) == (UNPLAYED_SCORE, 0.0,
                                                                                       (0.0, 1.0), (0.0, 1.0))
    assert score_rate(3, 2, 10) == 0.4 and score_rate(0, 0, 0) == UNPLAYED_SCORE == 0.5
    assert PayoffRecord(1.5, 1.0, 4.0).score == 0.5 and PayoffRecord().score == UNPLAYED_SCORE
    with pytest.raises(ValueError, match="no negative"):
        Record(1, -1, 0)


def test_a_row_is_a_record_with_more_columns_and_flat_counts():
    check = RoleCheck(**Record(2, 1, 1).counts(), league="l", role="r", restart=1, agent="a", steps=5,
                      targets=("x",), reset="", created="")
    assert (str(check), check.games, check.win_rate, check.score) == ("2-1-1", 4, 0.5, 0.625)
    assert {"wins": 2, "draws": 1, "losses": 1, "games": 4}.items() <= dataclasses.asdict(check).items()
    assert check + check == Record(4, 2, 2)
    assert dataclasses.replace(check, wins=3).games == 5  # games follows the counts
    with pytest.raises(TypeError):  # rows are built by keyword: no positional column lands on a count
        RoleCheck("l", "r", 1, "a", 5, ("x",), 4, 2, 1, 1, "", "")
