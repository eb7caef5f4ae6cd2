"""league.sprt: the LLR against published values and an independent port of Fishtest's algorithm,
its bounds and decisions, the Elo estimate, properties (hypothesis), and simulated error rates."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from league.errors import LeagueError
from league.sprt import (
    ELO_CLAMP, MAX_ELO, SprtParams, calibrate, decide, distribution_elo, distribution_stats, elo_estimate,
    game_probabilities, llr, llr_many, logistic_elo, logistic_score, pair_score, pentanomial_counts,
    pentanomial_distribution, pentanomial_from_games, simulate_runs, simulate_sprt, sprt_bounds, sprt_result,
    trinomial_counts,
)

# --------------------------------------------------------------------------- reference values

# Published in Disservin/fastchess app/tests/sprt_test.cpp (doctest Approx(...).epsilon(0.01)).
# fastchess's Stats(w, l, d) and Stats(ll, ld, wl, dd, wd, ww) are rewritten here as
# [losses, draws, wins] and [n0, n1, n2 = wl + dd, n3, n4].
FASTCHESS = [
    ("normalized", 0, 2, [36027, 68692, 36433], 0.92),
    ("normalized", -1.75, 0.25, [10650, 20431, 10871], 2.30),
    ("normalized", 0, 10, [0, 0, 4250], 120.56),
    ("logistic", 0.5, 2.5, [21184, 40708, 21404], -1.57),
    ("logistic", 0, 2, [57030, 106593, 57433], -2.59),
    ("normalized", 0, 2, [365, 16618, 36029 + 200, 16974, 390], 2.25),
    ("normalized", -1.75, 0.25, [127, 4883, 10311 + 401, 5150, 104], 3.01),
    ("normalized", 0, 5, [0, 0, 0, 0, 5550], 111.82),
    ("logistic", 0.5, 2.5, [223, 9863, 20279 + 1000, 10037, 246], -3.07),
    ("logistic", 0, 2, [871, 26175, 55003 + 980, 26678, 821], -4.98),
]


@pytest.mark.parametrize(("model", "elo0", "elo1", "counts", "published"), FASTCHESS)
def test_llr_matches_fastchess_published_values(model, elo0, elo1, counts, published):
    ours = llr(counts, SprtParams(elo0, elo1, model=model))
    assert abs(ours - published) <= 0.01 * max(abs(ours), abs(published)), ours


# An independent port of official-stockfish/fishtest server/fishtest/stats/LLRcalc.py
# (LLR_normalized, LLR_logistic): plain lists, scipy's brentq, no code shared with league.sprt.
def _fishtest_secular(pdf):
    values = [a for a, _ in pdf]
    lo, hi = -1 / max(values), -1 / min(values)
    return scipy.optimize.brentq(lambda x: sum(p * a / (1 + x * a) for a, p in pdf), lo + 1e-9, hi - 1e-9)


def _fishtest_stats(pdf):
    s = sum(p * a for a, p in pdf)
    return s, sum(p * (a - s) ** 2 for a, p in pdf)


def _fishtest_mle_t_value(pdfhat, ref, t):
    n = len(pdfhat)
    pdf = [(a, 1 / n) for a, _ in pdfhat]
    for _ in range(10):
        previous = pdf
        mu, var = _fishtest_stats(pdf)
        sigma = var ** 0.5
        shifted = [(a - ref - t * sigma * (1 + ((mu - a) / sigma) ** 2) / 2, p) for a, p in pdfhat]
        x = _fishtest_secular(shifted)
        pdf = [(pdfhat[i][0], pdfhat[i][1] / (1 + x * shifted[i][0])) for i in range(n)]
        if max(abs(previous[i][1] - pdf[i][1]) for i in range(n)) < 1e-9:
            break
    return pdf


def _fishtest_mle_expected(pdfhat, s):
    x = _fishtest_secular([(a - s, p) for a, p in pdfhat])
    return [(a, p / (1 + x * (a - s))) for a, p in pdfhat]


def _fishtest_llr(model, elo0, elo1, results):
    results = [r if r else 1e-3 for r in results]  # LLRcalc.regularize
    n, k = sum(results), len(results)
    pdf = [(i / (k - 1), results[i] / n) for i in range(k)]
    if model == "normalized":
        scale = (2 ** 0.5 if k == 5 else 1.0) / (800 / math.log(10))
        pdf0, pdf1 = (_fishtest_mle_t_value(pdf, 0.5, e * scale) for e in (elo0, elo1))
    else:
        pdf0, pdf1 = (_fishtest_mle_expected(pdf, 1 / (1 + 10 ** (-e / 400))) for e in (elo0, elo1))
    return n * sum(p * (math.log(pdf1[i][1]) - math.log(pdf0[i][1])) for i, (_, p) in enumerate(pdf))


@pytest.mark.parametrize("counts", [[2, 10, 25, 15, 5], [0, 3, 10, 5, 2], [5, 15, 25, 10, 2], [1, 0, 0, 0, 0],
                                    [0, 0, 40, 0, 0], [30, 40, 50], [0, 7, 3], [127, 4883, 10712, 5150, 104]])
@pytest.mark.parametrize(("model", "elo0", "elo1"), [("normalized", 0, 30), ("normalized", -10, 20),
                                                    ("normalized", -200, 200), ("logistic", 0, 30),
                                                    ("logistic", -600, 5)])
def test_llr_matches_an_independent_port_of_fishtest(counts, model, elo0, elo1):
    ours = llr(counts, SprtParams(elo0, elo1, model=model))
    assert ours == pytest.approx(_fishtest_llr(model, elo0, elo1, counts), rel=1e-8, abs=1e-10)


def test_pinned_llr_values():
    # Regression guards (equal to the Fishtest port above to 1e-12 when they were taken).
    assert llr([2, 10, 25, 15, 5], SprtParams(0, 30)) == pytest.approx(0.977608708793462, rel=1e-9)
    assert llr([5, 15, 25, 10, 2], SprtParams(0, 30)) == pytest.approx(-1.8108240216621776, rel=1e-9)
    assert llr([0, 3, 10, 5, 2], SprtParams(0, 30, model="logistic")) == pytest.approx(1.1086475217360965, rel=1e-9)
    assert llr([30, 40, 50], SprtParams(0, 30)) == pytest.approx(1.6693435636074594, rel=1e-9)


def test_llr_of_nothing_is_zero_and_llr_many_agrees_with_llr():
    assert llr([0, 0, 0, 0, 0], SprtParams()) == 0.0
    assert llr([0, 0, 0], SprtParams()) == 0.0
    rows = [[2, 10, 25, 15, 5], [0, 0, 0, 0, 0], [0, 3, 10, 5, 2]]
    many = llr_many(rows, SprtParams())
    assert many.tolist() == pytest.approx([llr(r, SprtParams()) for r in rows], rel=1e-12)


# --------------------------------------------------------------------------- bounds, decisions, params


def test_bounds():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944, abs=5e-4) and upper == pytest.approx(2.944, abs=5e-4)
    assert upper == pytest.approx(math.log(19)) and lower == -upper
    assert sprt_bounds(0.05, 0.10) == pytest.approx((math.log(0.10 / 0.95), math.log(0.90 / 0.05)))
    assert SprtParams().bounds == (lower, upper)


def test_decide():
    p = SprtParams()
    assert decide(2.95, p) == "H1" and decide(math.log(19), p) == "H1"
    assert decide(-2.95, p) == "H0" and decide(-math.log(19), p) == "H0"
    assert decide(0.0, p) is None and decide(2.9, p) is None and decide(-2.9, p) is None


def test_sprt_result():
    strong = sprt_result([0, 2, 20, 40, 60], SprtParams(0, 30))
    assert strong.decision == "H1" and strong.llr >= strong.upper
    assert strong.pairs == 122 and strong.games == 244 and strong.counts == (0, 2, 20, 40, 60)
    assert strong.elo > 0 and strong.elo_95[0] <= strong.elo <= strong.elo_95[1] and strong.los > 0.99
    even = sprt_result([100, 200, 400, 200, 100], SprtParams(0, 30))
    assert even.decision == "H0" and even.llr <= even.lower and even.elo == 0.0 and even.los == 0.5
    games = sprt_result([30, 40, 50], SprtParams(0, 30))
    assert games.pairs is None and games.games == 120 and games.decision is None


def test_params_defaults_and_parse():
    assert SprtParams() == SprtParams(0.0, 30.0, 0.05, 0.05, "normalized")
    assert SprtParams.parse("elo0=0,elo1=30,alpha=0.05,beta=0.05") == SprtParams()
    assert SprtParams.parse(" elo1 = 10 , model=logistic ") == SprtParams(elo1=10.0, model="logistic")
    assert SprtParams.parse("") == SprtParams()


@pytest.mark.parametrize(("text", "needle"), [
    ("elo2=5", "'elo2'"), ("elo1=abc", "'elo1'"), ("alpha=", "'alpha'"), ("elo1", "'elo1'"),
    ("elo0=1,elo0=2", "'elo0'"), ("alpha=nan", "alpha"), ("beta=inf", "beta"), ("model=bayesian", "model"),
])
def test_parse_names_the_bad_key(text, needle):
    with pytest.raises(LeagueError, match=needle):
        SprtParams.parse(text)


@pytest.mark.parametrize("kwargs", [
    {"alpha": 0.0}, {"alpha": 0.5}, {"beta": -0.1}, {"beta": 0.7}, {"elo0": 30.0, "elo1": 30.0},
    {"elo0": 40.0, "elo1": 30.0}, {"elo1": math.inf}, {"elo0": math.nan}, {"alpha": True}, {"elo1": "30"},
    {"model": "bayesian"}, {"elo1": MAX_ELO["normalized"] + 1}, {"elo0": -MAX_ELO["logistic"] - 1, "model": "logistic"},
])
def test_params_validation(kwargs):
    with pytest.raises(LeagueError) as error:
        SprtParams(**kwargs)
    message = str(error.value)
    assert message.endswith(".") and "\n" not in message


# --------------------------------------------------------------------------- counting


def test_pair_score_and_counts():
    assert [pair_score(a, b) for a, b in [(0, 0), (0, 0.5), (1, 0), (0.5, 0.5), (0.5, 1), (1, 1)]] == [0, 1, 2, 2, 3, 4]
    assert pair_score(1, 0.5) == pair_score(0.5, 1) == 3
    assert pentanomial_counts([(1, 1), (1, 0), (0.5, 0.5), (0, 0.5), (1, 0.5)]) == [0, 1, 2, 1, 1]
    assert pentanomial_counts([]) == [0, 0, 0, 0, 0]
    assert trinomial_counts([1, 0.5, 0, 1, 1]) == [1, 1, 3]
    for bad in [(0.25, 1), (2, 0), (-1, 0)]:
        with pytest.raises(ValueError):
            pair_score(*bad)
    with pytest.raises(ValueError):
        llr([1, 2, 3, 4], SprtParams())
    with pytest.raises(ValueError):
        llr([1, -2, 3], SprtParams())


# --------------------------------------------------------------------------- properties

elos = st.floats(-100.0, 100.0, allow_nan=False)
widths = st.floats(5.0, 100.0, allow_nan=False)
models = st.sampled_from(["normalized", "logistic"])
penta = st.lists(st.integers(0, 300), min_size=5, max_size=5)
tri = st.lists(st.integers(0, 300), min_size=3, max_size=3)


@settings(max_examples=80, deadline=None)
@given(counts=st.one_of(st.lists(st.integers(2, 300), min_size=5, max_size=5),
                        st.lists(st.integers(2, 300), min_size=3, max_size=3)),
       elo0=elos, width=widths, data=st.data())
def test_a_better_result_raises_the_logistic_llr(counts, elo0, width, data):
    """One result moved to a better outcome raises the logistic model's LLR where every outcome is seen before and
    after (an empty cell is regularised, which can take up to 3e-4 off: [0, 0, 150, 0, 163] -> [0, 0, 149, 1, 163]);
    none of 80,000 random such moves lowered it. The normalized model's LLR need not rise: the next test.
    The old property, drawn at random, failed the suite by chance (the suite's examples are fixed now: conftest)."""
    worse = data.draw(st.integers(0, len(counts) - 2))
    better = data.draw(st.integers(worse + 1, len(counts) - 1))
    improved = list(counts)
    improved[worse] -= 1
    improved[better] += 1
    params = SprtParams(elo0, elo0 + width, model="logistic")
    # Up to the MLE's precision: where nearly every game was drawn ([0, 236, 0] -> [0, 235, 1] at
    # elo0 -18, width 5, logistic) the win's wider spread takes 3e-8 off, a relative 1e-8.
    before = llr(counts, params)
    assert llr(improved, params) > before - 1e-6 * max(1.0, abs(before))


def test_a_wider_spread_can_lower_the_normalized_llr():
    """Normalized Elo is the score over its spread: a pair moved from 1.5 to 2 points raises the score and widens the
    spread more, so the normalized estimate and LLR fall, as they should; the logistic ones rise. (The example
    hypothesis found against the old property of both models.)"""
    before, after = [0, 0, 16, 2, 0], [0, 0, 16, 1, 1]
    normalized, logistic = SprtParams(21, 119, model="normalized"), SprtParams(21, 119, model="logistic")
    assert elo_estimate(after).nelo < elo_estimate(before).nelo and llr(after, normalized) < llr(before, normalized)
    assert elo_estimate(after).elo > elo_estimate(before).elo and llr(after, logistic) > llr(before, logistic)


@settings(max_examples=60, deadline=None)
@given(counts=st.one_of(penta, tri), elo0=elos, width=widths, model=models)
def test_mirroring_the_counts_and_the_hypotheses_negates_the_llr(counts, elo0, width, model):
    elo1 = elo0 + width
    forward = llr(counts, SprtParams(elo0, elo1, model=model))
    mirrored = llr(counts[::-1], SprtParams(-elo1, -elo0, model=model))
    assert mirrored == pytest.approx(-forward, rel=1e-7, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(half=st.lists(st.integers(0, 300), min_size=2, max_size=2), middle=st.integers(0, 300),
       elo=st.floats(1.0, 100.0), model=models)
def test_balanced_counts_and_symmetric_hypotheses_give_zero(half, middle, elo, model):
    counts = [half[0], half[1], middle, half[1], half[0]]
    assert llr(counts, SprtParams(-elo, elo, model=model)) == pytest.approx(0.0, abs=1e-8)


@settings(max_examples=40, deadline=None)
@given(counts=st.lists(st.integers(1, 200), min_size=5, max_size=5), k=st.integers(2, 50), elo0=elos, width=widths)
def test_llr_scales_with_repeated_evidence(counts, k, elo0, width):
    params = SprtParams(elo0, elo0 + width)
    assert llr([k * c for c in counts], params) == pytest.approx(k * llr(counts, params), rel=1e-7, abs=1e-9)


@settings(max_examples=120, deadline=None)
@given(counts=st.one_of(st.lists(st.integers(0, 10**7), min_size=5, max_size=5),
                        st.lists(st.integers(0, 10**7), min_size=3, max_size=3),
                        st.lists(st.sampled_from([0, 1, 10**6]), min_size=5, max_size=5)),
       model=models, data=st.data())
def test_llr_is_always_finite(counts, model, data):
    limit = MAX_ELO[model]
    elo0 = data.draw(st.floats(-limit, limit - 1e-3))
    elo1 = data.draw(st.floats(elo0 + 1e-3, limit))
    params = SprtParams(elo0, elo1, model=model)
    result = sprt_result(counts, params)
    assert all(math.isfinite(v) for v in (result.llr, result.elo, *result.elo_95, result.los, result.nelo,
                                          *result.nelo_95))


@settings(max_examples=150, deadline=None)
@given(counts=st.one_of(penta, tri, st.lists(st.sampled_from([0, 1, 10**6]), min_size=5, max_size=5)))
def test_elo_estimate_properties(counts):
    est = elo_estimate(counts)
    assert est.elo_95[0] <= est.elo <= est.elo_95[1]
    assert est.nelo_95[0] <= est.nelo <= est.nelo_95[1]
    assert 0.0 <= est.los <= 1.0
    assert (est.los > 0.5) == (est.score > 0.5)
    assert (est.elo > 0) == (est.score > 0.5) or abs(est.score - 0.5) < 1e-12
    assert -ELO_CLAMP <= est.elo_95[0] and est.elo_95[1] <= ELO_CLAMP
    mirrored = elo_estimate(counts[::-1])
    assert mirrored.elo == pytest.approx(-est.elo, abs=1e-9)
    assert mirrored.los == pytest.approx(1.0 - est.los, abs=1e-9)


def test_elo_estimate_fixture():
    # By hand: 30 losses, 40 draws, 50 wins -> s = 70/120, per-game variance, se = sqrt(var / 120).
    s = 70 / 120
    var = (30 * s**2 + 40 * (0.5 - s) ** 2 + 50 * (1 - s) ** 2) / 120
    se = math.sqrt(var / 120)
    est = elo_estimate([30, 40, 50])
    assert est.score == pytest.approx(s) and est.score_se == pytest.approx(se)
    assert est.elo == pytest.approx(-400 * math.log10(1 / s - 1))
    assert est.elo_95 == pytest.approx((-400 * math.log10(1 / (s - 1.959964 * se) - 1),
                                        -400 * math.log10(1 / (s + 1.959964 * se) - 1)), rel=1e-5)
    assert est.los == pytest.approx(0.5 * math.erfc(-(s - 0.5) / se / math.sqrt(2)))
    assert est.nelo == pytest.approx((s - 0.5) / math.sqrt(var) * 800 / math.log(10))
    # Pairs: the variance is the per-pair one, so a pair's correlation narrows or widens the interval.
    pairs = elo_estimate([2, 10, 25, 15, 5])
    pair_scores = np.repeat([0, 0.25, 0.5, 0.75, 1], [2, 10, 25, 15, 5])
    assert pairs.score == pytest.approx(pair_scores.mean())
    assert pairs.score_se == pytest.approx(pair_scores.std() / math.sqrt(57))
    assert pairs.elo == pytest.approx(logistic_elo(pair_scores.mean()))
    assert elo_estimate([0, 0, 0, 0, 0]).los == 0.5
    nine_won = elo_estimate([0, 0, 0, 0, 9])
    assert nine_won.elo == pytest.approx(ELO_CLAMP) and 0.9999 < nine_won.los < 1.0


@pytest.mark.parametrize("counts", [[0, 0, 1, 0, 0], [0, 0, 0, 0, 1], [1, 0, 0, 0, 0], [0, 0, 0, 3, 0], [0, 2, 0]])
def test_pairs_that_all_ended_alike_still_have_an_interval(counts):
    """Issue 37, item 11: a match of one pair printed a 95% interval of zero width ("[+190.8, +190.8]")."""
    est = elo_estimate(counts)
    lo, hi = est.elo_95
    assert lo < est.elo < hi or (est.elo == pytest.approx(ELO_CLAMP) and lo < hi) \
        or (est.elo == pytest.approx(-ELO_CLAMP) and lo < hi), est
    assert hi - lo > 100  # one pair says little
    assert 0.0 < est.los < 1.0


# --------------------------------------------------------------------------- distributions


@pytest.mark.parametrize("model", ["normalized", "logistic"])
@pytest.mark.parametrize("elo", [-50.0, 0.0, 12.5, 30.0, 100.0])
@pytest.mark.parametrize(("draw_ratio", "correlation"), [(0.2, 0.0), (0.0, 0.3), (0.6, 0.5)])
def test_pentanomial_distribution_has_the_asked_elo(model, elo, draw_ratio, correlation):
    probs = pentanomial_distribution(elo, model, draw_ratio, correlation)
    assert probs.sum() == pytest.approx(1.0) and np.all(probs >= 0)
    assert distribution_elo(probs, model) == pytest.approx(elo, abs=1e-7)


def test_pair_correlation_model():
    game = game_probabilities(0.6, 0.3)
    assert game.tolist() == pytest.approx([0.25, 0.3, 0.45])
    game_mean, game_var = distribution_stats(game)
    for rho in (0.0, 0.4, 0.9):
        probs = pentanomial_from_games(game, rho)
        mean, pair_var = distribution_stats(probs)
        assert mean == pytest.approx(game_mean)
        # var of the mean of two games with correlation rho: var * (1 + rho) / 2
        assert pair_var == pytest.approx(game_var * (1 + rho) / 2)
    with pytest.raises(ValueError):
        game_probabilities(0.9, 0.4)
    assert logistic_score(0.0) == 0.5 and logistic_elo(logistic_score(100.0)) == pytest.approx(100.0)


# --------------------------------------------------------------------------- simulation

FAST = SprtParams(elo0=0.0, elo1=50.0)  # wide bounds: runs of ~140 pairs, so the fast test stays fast


def _sigmas(rate: float, runs: int) -> float:
    return math.sqrt(rate * (1 - rate) / runs)


def test_simulation_is_seeded():
    probs = pentanomial_distribution(25.0)
    a = simulate_runs(probs, FAST, 12, np.random.default_rng(7), max_pairs=150)
    b = simulate_runs(probs, FAST, 12, np.random.default_rng(7), max_pairs=150)
    assert a == b and set(a.decisions) <= {"H0", "H1", None} and max(a.pairs) <= 150
    assert all(n == 150 for d, n in zip(a.decisions, a.pairs) if d is None)
    decision, pairs = simulate_sprt(probs, FAST, np.random.default_rng(7), max_pairs=3)
    assert decision is None and pairs == 3  # three pairs cannot reach a bound of 2.94 at these Elo


@pytest.mark.slow  # thousands of simulated matches; CI runs it after the default suite
def test_simulated_error_rates_match_alpha_and_beta():
    rng = np.random.default_rng(2024)
    at_elo0 = simulate_runs(pentanomial_distribution(FAST.elo0), FAST, 300, rng)
    at_elo1 = simulate_runs(pentanomial_distribution(FAST.elo1), FAST, 300, rng)
    midway = simulate_runs(pentanomial_distribution((FAST.elo0 + FAST.elo1) / 2), FAST, 150, rng)
    print(f"\nSPRT nelo [0, 50], alpha = beta = 0.05, draw ratio 0.2: mean pairs at elo0 {at_elo0.mean_pairs:.0f}, "
          f"midway {midway.mean_pairs:.0f}, elo1 {at_elo1.mean_pairs:.0f}; H1 at elo0 {at_elo0.rate('H1'):.3f}, "
          f"H0 at elo1 {at_elo1.rate('H0'):.3f}, H1 midway {midway.rate('H1'):.3f}")
    assert at_elo0.rate(None) == at_elo1.rate(None) == midway.rate(None) == 0.0
    assert at_elo0.rate("H0") >= 1 - FAST.alpha - 4 * _sigmas(FAST.alpha, 300)
    assert at_elo1.rate("H1") >= 1 - FAST.beta - 4 * _sigmas(FAST.beta, 300)
    assert abs(midway.rate("H1") - 0.5) <= 4 * _sigmas(0.5, 150)  # alpha = beta: a coin toss midway
    assert midway.mean_pairs > max(at_elo0.mean_pairs, at_elo1.mean_pairs)  # the slowest point


def test_measure_entry_point_prints_the_table(capsys):
    from training.measure.sprt import main

    main(["--runs", "10", "--elo1", "150", "--seed", "3"])
    out = capsys.readouterr().out
    assert "observed alpha" in out and "mean pairs" in out and len(out.splitlines()) == 6


@pytest.mark.slow
@pytest.mark.parametrize("correlation", [0.0, 0.5])
def test_calibration_at_default_params(correlation):
    runs = 2000
    params = SprtParams()  # normalized [0, 30]
    cal = calibrate(params, runs, np.random.default_rng(11 + int(10 * correlation)), correlation=correlation)
    print(f"\ncalibration rho={correlation}: alpha {cal.false_positive_rate:.4f}, beta {cal.false_negative_rate:.4f}, "
          f"mean pairs {cal.at_elo0.mean_pairs:.0f} / {cal.midway.mean_pairs:.0f} / {cal.at_elo1.mean_pairs:.0f}")
    assert cal.false_positive_rate <= params.alpha + 4 * _sigmas(params.alpha, runs)
    assert cal.false_negative_rate <= params.beta + 4 * _sigmas(params.beta, runs)
    # Overshoot makes Wald's bounds conservative, but not wildly: the rates stay near alpha and beta.
    assert cal.false_positive_rate >= params.alpha / 4 and cal.false_negative_rate >= params.beta / 4
    assert abs(cal.midway.rate("H1") - 0.5) <= 4 * _sigmas(0.5, runs)
