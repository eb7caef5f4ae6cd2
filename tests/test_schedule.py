"""Schedule properties (league/schedule.py)."""

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from league.schedule import round_robin

names = st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=2, max_size=7, unique=True)


@given(names, st.integers(1, 9), st.integers(0, 2**31 - 1))
def test_each_pairing_plays_exactly_n_games_with_balanced_sides(entrants, n, seed):
    games = round_robin(entrants, n, seed)
    assert len(games) == n * len(entrants) * (len(entrants) - 1) // 2
    assert [g.index for g in games] == list(range(len(games)))
    per_pair = Counter(frozenset((g.blue, g.orange)) for g in games)
    assert set(per_pair.values()) == {n}
    blue_count = Counter((frozenset((g.blue, g.orange)), g.blue) for g in games)
    for pair in per_pair:
        a, b = sorted(pair)
        assert abs(blue_count[(pair, a)] - blue_count[(pair, b)]) <= 1
    if n % 2 == 0:  # every seed is played once from each side
        seeds = Counter((g.seed, g.blue) for g in games)
        by_seed = Counter(g.seed for g in games)
        assert all(c == 2 for c in by_seed.values()) and all(c == 1 for c in seeds.values())


@given(names, st.integers(1, 6), st.integers(0, 1000))
def test_schedule_is_deterministic_and_pair_seeds_ignore_other_entrants(entrants, n, seed):
    assert round_robin(entrants, n, seed) == round_robin(entrants, n, seed)
    a, b = entrants[:2]
    small = {(g.blue, g.orange, g.seed) for g in round_robin([a, b], n, seed)}
    big = {(g.blue, g.orange, g.seed) for g in round_robin(entrants, n, seed) if {g.blue, g.orange} == {a, b}}
    assert {s for *_, s in small} == {s for *_, s in big}
