"""Property tests for the curriculum's promotion gates (training/gates.py)."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from league.sprt import SprtParams
from training.gates import (
    Evidence,
    GateSpec,
    SprtOutcome,
    check_gate,
    wilson_lower_bound,
    wilson_upper_bound,
)

games_st = st.integers(min_value=1, max_value=2000)
z_st = st.floats(min_value=0, max_value=5, allow_nan=False)


@st.composite
def record(draw):
    """(score, games) with the score in half-win steps: wins + draws / 2."""
    games = draw(games_st)
    halves = draw(st.integers(min_value=0, max_value=2 * games))
    return halves / 2, games


@given(record(), z_st)
def test_bounds_lie_in_the_unit_interval_around_the_point_estimate(rec, z):
    score, games = rec
    lo, hi = wilson_lower_bound(score, games, z), wilson_upper_bound(score, games, z)
    assert 0.0 <= lo <= score / games <= hi <= 1.0


@given(games_st, z_st, st.data())
def test_lower_bound_is_monotone_in_wins(games, z, data):
    a = data.draw(st.integers(min_value=0, max_value=games))
    b = data.draw(st.integers(min_value=a, max_value=games))
    assert wilson_lower_bound(a, games, z) <= wilson_lower_bound(b, games, z) + 1e-12
    assert wilson_upper_bound(a, games, z) <= wilson_upper_bound(b, games, z) + 1e-12


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=1, max_value=200), st.integers(2, 20), z_st)
def test_more_games_at_the_same_rate_tighten_the_interval(wins, extra, factor, z):
    games = wins + extra
    lo1, hi1 = wilson_lower_bound(wins, games, z), wilson_upper_bound(wins, games, z)
    lo2, hi2 = wilson_lower_bound(wins * factor, games * factor, z), wilson_upper_bound(wins * factor, games * factor, z)
    assert lo2 >= lo1 - 1e-12 and hi2 <= hi1 + 1e-12


@given(record())
def test_zero_confidence_is_the_point_estimate(rec):
    score, games = rec
    assert math.isclose(wilson_lower_bound(score, games, 0.0), score / games, abs_tol=1e-12)
    assert math.isclose(wilson_upper_bound(score, games, 0.0), score / games, abs_tol=1e-12)


@given(record(), z_st, z_st)
def test_more_confidence_widens_the_interval(rec, z1, z2):
    score, games = rec
    lo, hi = sorted((z1, z2))
    assert wilson_lower_bound(score, games, hi) <= wilson_lower_bound(score, games, lo) + 1e-12
    assert wilson_upper_bound(score, games, hi) >= wilson_upper_bound(score, games, lo) - 1e-12


def test_known_value_and_no_games():
    # 8 wins in 10 games, z = 1.96: the textbook Wilson interval is about [0.490, 0.943].
    assert wilson_lower_bound(8, 10, 1.96) == pytest.approx(0.4902, abs=1e-4)
    assert wilson_upper_bound(8, 10, 1.96) == pytest.approx(0.9433, abs=1e-4)
    assert wilson_lower_bound(0, 0, 1.96) == 0.0 and wilson_upper_bound(0, 0, 1.96) == 1.0
    with pytest.raises(ValueError):
        wilson_lower_bound(11, 10, 1.0)


# --------------------------------------------------------------------------- the gate

optional_rate = st.none() | st.floats(min_value=0, max_value=1, allow_nan=False)
optional_rating = st.none() | st.floats(min_value=0, max_value=3000, allow_nan=False)
optional_sprt = st.none() | st.sampled_from(["elo0=-30,elo1=0", "elo0=0,elo1=30,alpha=0.1,beta=0.1"])
sprt_outcomes = st.none() | st.builds(
    SprtOutcome, decision=st.sampled_from(["H1", "H0", "inconclusive"]),
    llr=st.floats(min_value=-10, max_value=10, allow_nan=False), elo=st.floats(min_value=-1200, max_value=1200),
    games=st.integers(0, 400).map(lambda n: 2 * n), match_id=st.none() | st.integers(1, 1000))


@st.composite
def specs(draw):
    return GateSpec(min_games=draw(st.integers(1, 50)), win_rate_vs_rule=draw(optional_rate),
                    win_rate_vs_random=draw(optional_rate), confidence=draw(z_st), min_elo=draw(optional_rating), min_trueskill=draw(optional_rating),
                    not_worse_than_previous=draw(st.booleans()), sprt_vs_previous=draw(optional_sprt))


@st.composite
def evidence(draw):
    rule_score, rule_games = draw(record() | st.just((0.0, 0)))  # sometimes no games against rule at all
    random_score, random_games = draw(record() | st.just((0.0, 0)))
    prev_score, prev_games = draw(record())
    return Evidence(rule_score=rule_score, rule_games=rule_games, random_score=random_score,
                    random_games=random_games, elo=draw(optional_rating),
                    trueskill=draw(optional_rating), previous_score=prev_score, previous_games=prev_games,
                    has_previous=draw(st.booleans()), previous_sprt=draw(sprt_outcomes))


@given(specs(), evidence())
def test_gate_passes_iff_every_configured_criterion_passes(spec, ev):
    result = check_gate(spec, ev)
    configured = {"win_rate_vs_rule": spec.win_rate_vs_rule is not None,
                  "win_rate_vs_random": spec.win_rate_vs_random is not None, "min_elo": spec.min_elo is not None,
                  "min_trueskill": spec.min_trueskill is not None,
                  "not_worse_than_previous": spec.not_worse_than_previous,
                  "sprt_vs_previous": spec.sprt_vs_previous is not None}
    assert {c.name for c in result.criteria} == {k for k, on in configured.items() if on}
    assert result.passed == all(c.passed for c in result.criteria)
    assert all(c.reason for c in result.criteria) and result.reason
    if spec.win_rate_vs_rule is not None:
        (c,) = [c for c in result.criteria if c.name == "win_rate_vs_rule"]
        expected = ev.rule_games >= spec.min_games and (
            wilson_lower_bound(ev.rule_score, ev.rule_games, spec.confidence) >= spec.win_rate_vs_rule)
        assert c.passed == expected
    if spec.win_rate_vs_random is not None:
        (c,) = [c for c in result.criteria if c.name == "win_rate_vs_random"]
        expected = ev.random_games >= spec.min_games and (
            wilson_lower_bound(ev.random_score, ev.random_games, spec.confidence) >= spec.win_rate_vs_random)
        assert c.passed == expected
    if spec.min_elo is not None:
        (c,) = [c for c in result.criteria if c.name == "min_elo"]
        assert c.passed == (ev.elo is not None and ev.elo >= spec.min_elo)
    if spec.sprt_vs_previous is not None:  # the match is played by the caller; only its outcome counts
        (c,) = [c for c in result.criteria if c.name == "sprt_vs_previous"]
        played = ev.previous_sprt
        assert c.passed == (not ev.has_previous or (played is not None and played.decision == "H1"))
        assert c.threshold == SprtParams.parse(spec.sprt_vs_previous).bounds[1]
        assert c.value == (played.llr if ev.has_previous and played is not None else None)


@given(specs(), evidence())
def test_a_better_record_against_rule_never_closes_an_open_gate(spec, ev):
    assume(ev.rule_games and ev.rule_score + 0.5 <= ev.rule_games)
    better = Evidence(**{**ev.__dict__, "rule_score": ev.rule_score + 0.5})
    assert check_gate(spec, better).passed >= check_gate(spec, ev).passed


@given(specs(), evidence())
def test_the_first_stage_is_never_held_back_by_the_comparison_with_a_previous_agent(spec, ev):
    ev = Evidence(**{**ev.__dict__, "has_previous": False, "previous_games": 0})
    for name in ("not_worse_than_previous", "sprt_vs_previous"):
        (prev,) = [c for c in check_gate(spec, ev).criteria if c.name == name] or [None]
        assert prev is None or prev.passed


@given(evidence())
def test_a_gate_without_criteria_passes(ev):
    result = check_gate(GateSpec(), ev)
    assert result.passed and result.criteria == () and "step budget" in result.reason


def test_reasons_say_what_failed_and_why():
    spec = GateSpec(min_games=20, win_rate_vs_rule=0.55, confidence=1.645, min_elo=1600)
    short = check_gate(spec, Evidence(rule_score=8, rule_games=10, elo=1650))
    assert not short.passed and "needs 20 games, has 10" in short.reason and "ok: Elo 1650.0" in short.reason
    lucky = check_gate(spec, Evidence(rule_score=13, rule_games=20, elo=1650))  # 65%, lower bound ~47%
    assert not lucky.passed and "Wilson lower bound 47% < 55%" in lucky.reason
    strong = check_gate(spec, Evidence(rule_score=18, rule_games=20, elo=1650))
    assert strong.passed and strong.reason.startswith("ok:")
    # A bound just under the target says so (it read "55% < 55%": hour curriculum, run 3's 2v2 gate).
    edge = check_gate(GateSpec(min_games=40, win_rate_vs_rule=0.55), Evidence(rule_score=27, rule_games=40))
    assert not edge.passed and "Wilson lower bound 54.5% < 55%" in edge.reason


def test_the_sprt_criterion_passes_on_h1_only_and_says_how_the_match_ended():
    spec = GateSpec(sprt_vs_previous="elo0=-30,elo1=0", sprt_max_games=200)
    upper = SprtParams(elo0=-30, elo1=0).bounds[1]
    cases = {"H1": (3.1, True, "H1 accepted, LLR +3.10"), "H0": (-3.0, False, "H0 accepted, LLR -3.00"),
             "inconclusive": (1.2, False, "no decision within 200 games, LLR +1.20")}
    for decision, (llr, passed, words) in cases.items():
        result = check_gate(spec, Evidence(has_previous=True, previous_sprt=SprtOutcome(decision, llr, 40.0, 24, 7)))
        (c,) = result.criteria
        assert (result.passed, c.passed, c.value, c.threshold) == (passed, passed, llr, upper)
        assert words in c.reason and "match 7" in c.reason and "24 games" in c.reason
        assert c.to_json()["name"] == "sprt_vs_previous"
    missing = check_gate(spec, Evidence(has_previous=True))
    assert not missing.passed and "was not played" in missing.reason
    assert check_gate(spec, Evidence(has_previous=False)).passed  # the first stage has nobody to test against

