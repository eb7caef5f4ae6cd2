"""Property tests for the rating math (league/ratings.py)."""

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from league import ratings as R
from league.config import EloConfig, MleConfig, TrueSkillConfig

ELO = EloConfig()
TS = R.trueskill_env(TrueSkillConfig())
elo_ratings = st.floats(min_value=0, max_value=3000, allow_nan=False)
scores = st.sampled_from([R.WIN, R.DRAW, R.LOSS])
mus = st.floats(min_value=-20, max_value=70, allow_nan=False)
sigmas = st.floats(min_value=0.05, max_value=12, allow_nan=False)


@given(elo_ratings, elo_ratings, scores)
def test_1v1_elo_is_zero_sum(a, b, s):
    (a2,), (b2,) = R.elo_update([a], [b], s, ELO)
    assert math.isclose(a2 + b2, a + b, abs_tol=1e-9)


@given(st.lists(elo_ratings, min_size=1, max_size=3), st.lists(elo_ratings, min_size=1, max_size=3), scores)
def test_team_elo_moves_every_member_by_the_same_amount(team_a, team_b, s):
    new_a, new_b = R.elo_update(team_a, team_b, s, ELO)
    deltas_a = {round(n - o, 9) for n, o in zip(new_a, team_a)}
    deltas_b = {round(n - o, 9) for n, o in zip(new_b, team_b)}
    assert len(deltas_a) == 1 and len(deltas_b) == 1
    assert math.isclose(deltas_a.pop(), -deltas_b.pop(), abs_tol=1e-9)


@given(elo_ratings, elo_ratings)
def test_a_win_never_lowers_the_winner(a, b):
    (a2,), (b2,) = R.elo_update([a], [b], R.WIN, ELO)
    assert a2 >= a and b2 <= b


@given(mus, sigmas, mus, sigmas)
def test_trueskill_win_never_lowers_the_winner_mean(mu_a, s_a, mu_b, s_b):
    (a2,), (b2,) = R.trueskill_update(TS, [(mu_a, s_a)], [(mu_b, s_b)], R.WIN)
    assert a2[0] >= mu_a - 1e-9 and b2[0] <= mu_b + 1e-9


@given(mus, sigmas, mus, sigmas, scores)
def test_trueskill_sigma_never_grows_from_a_game(mu_a, s_a, mu_b, s_b, s):
    (a2,), (b2,) = R.trueskill_update(TS, [(mu_a, s_a)], [(mu_b, s_b)], s)
    assert a2[1] <= s_a + 1e-12 and b2[1] <= s_b + 1e-12


@given(elo_ratings, mus, sigmas)
def test_equal_agents_stay_equal_after_a_draw(r, mu, sigma):
    (a2,), (b2,) = R.elo_update([r], [r], R.DRAW, ELO)
    assert a2 == b2 == r
    (ta,), (tb,) = R.trueskill_update(TS, [(mu, sigma)], [(mu, sigma)], R.DRAW)
    assert math.isclose(ta[0], tb[0], abs_tol=1e-9) and math.isclose(ta[1], tb[1], abs_tol=1e-9)


@given(elo_ratings, elo_ratings, scores, mus, sigmas, mus, sigmas)
def test_swapping_sides_mirrors_the_update(a, b, s, mu_a, s_a, mu_b, s_b):
    (a1,), (b1,) = R.elo_update([a], [b], s, ELO)
    (b2,), (a2,) = R.elo_update([b], [a], 1.0 - s, ELO)
    assert math.isclose(a1, a2, abs_tol=1e-9) and math.isclose(b1, b2, abs_tol=1e-9)
    (ta1,), (tb1,) = R.trueskill_update(TS, [(mu_a, s_a)], [(mu_b, s_b)], s)
    (tb2,), (ta2,) = R.trueskill_update(TS, [(mu_b, s_b)], [(mu_a, s_a)], 1.0 - s)
    assert np.allclose(ta1, ta2) and np.allclose(tb1, tb2)


def test_trueskill_teams_and_draw_probability_come_from_config():
    env = R.trueskill_env(TrueSkillConfig(draw_probability=0.3))
    assert env.draw_probability == 0.3
    a, b = R.trueskill_update(env, [(25, 8), (30, 5)], [(25, 8), (20, 6)], R.WIN)
    assert len(a) == 2 and len(b) == 2 and all(m2 > m1 for (m2, _), (m1, _) in zip(a, [(25, 8), (30, 5)]))


def simulate(strengths: dict[str, float], n_per_pair: int, rng: random.Random, draw_share: float = 0.1):
    names = list(strengths)
    games = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = R.elo_expected(strengths[a], strengths[b])
            for _ in range(n_per_pair):
                u = rng.random()
                if u < draw_share:
                    s = R.DRAW
                else:
                    s = R.WIN if rng.random() < p else R.LOSS
                games.append((a, b, s) if rng.random() < 0.5 else (b, a, 1.0 - s))
    return games


def test_mle_recovers_known_strengths_and_intervals_cover_truth():
    truth = {"rule": 1500.0, "a": 1700.0, "b": 1350.0, "c": 1550.0}
    cfg = MleConfig(prior_draws=0.0)
    covered, total, errors = 0, 0, []
    for trial in range(40):
        games = simulate(truth, 60, random.Random(trial))
        fit = R.mle_fit(games, cfg)
        assert fit.anchor == "rule" and fit.rating("rule") == 1500.0
        for name, true in truth.items():
            if name == "rule":
                continue
            lo, hi = fit.interval(name)
            covered += lo <= true <= hi
            total += 1
            errors.append(fit.rating(name) - true)
    assert covered / total >= 0.85  # nominal 95%
    assert abs(np.mean(errors)) < 15 and np.sqrt(np.mean(np.square(errors))) < 60


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_mle_is_invariant_to_game_order(rnd):
    games = simulate({"rule": 1500, "x": 1600, "y": 1400}, 8, random.Random(rnd.randint(0, 10**6)))
    shuffled = list(games)
    rnd.shuffle(shuffled)
    a, b = R.mle_fit(games, MleConfig()), R.mle_fit(shuffled, MleConfig())
    for name in a.names:
        assert math.isclose(a.rating(name), b.rating(name), abs_tol=1e-6)


def test_mle_likelihood_of_superiority_and_unbeaten_agents_stay_finite():
    games = [("a", "rule", R.WIN)] * 20 + [("b", "rule", R.WIN)] * 10 + [("b", "rule", R.LOSS)] * 10
    fit = R.mle_fit(games, MleConfig(prior_draws=1.0, anchor_rating=1000))
    assert fit.rating("rule") == 1000
    assert math.isfinite(fit.rating("a")) and fit.rating("a") > fit.rating("b")
    assert fit.los("a", "b") > 0.95 and math.isclose(fit.los("a", "b") + fit.los("b", "a"), 1.0)


def test_mle_without_the_anchor_pins_a_virtual_player():
    fit = R.mle_fit([("x", "y", R.WIN), ("x", "y", R.DRAW)], MleConfig(), names=["x", "y", "z"])
    assert fit.anchor is None and set(fit.names) == {"x", "y", "z"}
    assert fit.rating("x") > fit.rating("z") > fit.rating("y")
    assert fit.rating("z") == pytest.approx(1500.0)


# --------------------------------------------------------------------------- re-anchoring the fit

PLAYERS = ["rule", "a", "b", "c", "d"]
small_games = st.lists(st.tuples(st.sampled_from(PLAYERS), st.sampled_from(PLAYERS),
                                 st.sampled_from([R.WIN, R.DRAW, R.LOSS])), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(small_games, st.data(), st.floats(min_value=0, max_value=5000), st.sampled_from([0.5, 1.0, 3.0]))
def test_reanchoring_shifts_every_rating_by_one_constant(games, data, value, prior_draws):
    fit = R.mle_fit(games, MleConfig(prior_draws=prior_draws), names=["rule"])
    played = [n for n, g in zip(fit.names, fit.games) if g > 0]
    if not played:  # only mirror matches
        return
    new_anchor = data.draw(st.sampled_from(played))
    moved = R.reanchor(fit, new_anchor, value)
    assert moved.anchor == new_anchor and moved.names == fit.names
    assert moved.rating(new_anchor) == value  # exactly
    assert moved.interval(new_anchor) == (value, value)  # the anchor's own interval has zero width
    shift = value - fit.rating(new_anchor)
    for n in fit.names:
        assert moved.rating(n) == pytest.approx(fit.rating(n) + shift, abs=1e-6)
        for m in fit.names:  # the gaps and who is likely better do not depend on the anchor
            assert moved.los(n, m) == pytest.approx(fit.los(n, m), abs=1e-6)
    assert np.allclose(moved.covariance, moved.covariance.T, atol=1e-6)


def test_reanchoring_back_and_onto_the_same_anchor_changes_nothing():
    games = simulate({"rule": 1500, "x": 1650, "y": 1400}, 6, random.Random(3))
    fit = R.mle_fit(games, MleConfig())
    same = R.reanchor(fit, "rule", 1500.0)
    assert np.allclose(same.ratings, fit.ratings) and np.allclose(same.covariance, fit.covariance)
    there_and_back = R.reanchor(R.reanchor(fit, "x", 2000.0), "rule", 1500.0)
    assert np.allclose(there_and_back.ratings, fit.ratings) and np.allclose(there_and_back.covariance,
                                                                            fit.covariance, atol=1e-6)


def test_reanchoring_gives_the_intervals_of_a_fit_pinned_on_that_agent():
    # Without prior draws the likelihood depends on differences only, so pinning `x` in the fit itself is
    # the same model: its ratings and covariance must match the re-anchored ones.
    games = simulate({"rule": 1500, "x": 1650, "y": 1400, "z": 1550}, 12, random.Random(7))
    by_rule = R.mle_fit(games, MleConfig(prior_draws=0.0))
    by_x = R.mle_fit(games, MleConfig(anchor_agent="x", anchor_rating=2000.0, prior_draws=0.0))
    moved = R.reanchor(by_rule, "x", 2000.0)
    for n in by_x.names:
        assert moved.rating(n) == pytest.approx(by_x.rating(n), abs=1e-6)
        assert moved.interval(n) == pytest.approx(by_x.interval(n), abs=1e-6)
    assert moved.stderr("rule") > 0 and moved.stderr("x") == 0.0


def test_reanchoring_a_fit_with_a_virtual_anchor_pins_a_real_agent():
    fit = R.mle_fit([("x", "y", R.WIN), ("x", "y", R.DRAW)], MleConfig(), names=["x", "y", "z"])
    moved = R.reanchor(fit, "y", 1000.0)
    assert moved.anchor == "y" and moved.rating("y") == 1000.0 and moved.stderr("y") == 0.0
    assert moved.rating("x") - moved.rating("z") == pytest.approx(fit.rating("x") - fit.rating("z"))
    with pytest.raises(ValueError):
        R.reanchor(fit, "nobody", 1500.0)


# --------------------------------------------------------------------------- any finite input (issue 37, item 2)

any_finite = st.floats(allow_nan=False, allow_infinity=False)


@given(any_finite, any_finite, st.floats(min_value=1, max_value=1e300))
def test_elo_expected_never_overflows_for_finite_ratings(a, b, scale):
    e = R.elo_expected(a, b, scale)
    assert 0.0 <= e <= 1.0 and math.isfinite(e)


def test_elo_expected_of_a_1e308_gap_is_certain_not_an_overflow():
    assert R.elo_expected(1500.0, 1e308) == pytest.approx(0.0, abs=1e-200)
    assert R.elo_expected(1e308, 1500.0) == 1.0
    assert R.elo_expected(-1.7e308, 1.7e308) == pytest.approx(0.0, abs=1e-200)  # the difference itself overflows


def test_trueskill_falls_back_to_arbitrary_precision_where_float64_fails():
    # Within the configured ranges, float64 TrueSkill can fail at extreme sigma/beta ratios ("Cannot calculate
    # correctly", math domain errors); the update is then computed with mpmath instead of raising.
    env = R.trueskill_env(TrueSkillConfig(mu=0.0, sigma=5951.137222675757, beta=0.3208821972775532, tau=0.0,
                                          draw_probability=0.001))
    team_a, team_b = [(93.73711634780557, 0.09394310509668272)], [(5116.084083144478, 21.30997679145059)]
    with pytest.raises(FloatingPointError):
        R._rate(env, team_a, team_b, [1, 0])
    (a,), (b,) = R.trueskill_update(env, team_a, team_b, R.LOSS)
    assert all(math.isfinite(x) for x in (*a, *b)) and a[0] <= team_a[0][0] and b[0] >= team_b[0][0]
