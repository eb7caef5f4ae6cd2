"""Opponent sampling (pure) and the payoff table (registry)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from league.matchmaking import PFSP_WEIGHTINGS, normalized_mix, pfsp_weights, sample_opponents

rates = st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=20)


@given(rates, st.sampled_from(sorted(PFSP_WEIGHTINGS)))
def test_pfsp_weights_are_a_distribution(ps, weighting):
    w = pfsp_weights(ps, weighting)
    assert w.shape == (len(ps),) and np.all(w >= 0) and np.isclose(w.sum(), 1.0)


@given(st.floats(0, 1), st.floats(0, 1))
def test_hard_weighting_prefers_opponents_we_lose_to(p, q):
    w = pfsp_weights([p, q], "hard")
    if p < q:
        assert w[0] >= w[1]


def test_variance_weighting_prefers_even_opponents():
    w = pfsp_weights([0.5, 0.95, 0.05], "variance")
    assert w[0] > w[1] and w[0] > w[2]


@given(st.dictionaries(st.sampled_from(["latest", "past", "pfsp", "rule", "random"]), st.floats(0, 5)),
       st.booleans(), st.booleans())
def test_mix_moves_empty_sources_to_latest(mix, has_past, has_rule):
    shares = normalized_mix(mix, {"past": has_past, "pfsp": has_past, "rule": has_rule, "random": True})
    assert np.isclose(sum(shares.values()), 1.0)
    if not has_past:
        assert "past" not in shares and "pfsp" not in shares
    if not has_rule:
        assert "rule" not in shares


def test_sampling_follows_the_mix_and_never_returns_unknown_names():
    rng = np.random.default_rng(0)
    past = ["v1", "v2", "v3"]
    picks = sample_opponents(4000, {"latest": 0.5, "pfsp": 0.3, "rule": 0.2}, "v4", past,
                             [0.9, 0.5, 0.1], ["rule", "random"], rng)
    counts = {n: picks.count(n) for n in set(picks)}
    assert set(counts) <= {"v4", "v1", "v2", "v3", "rule"}
    assert abs(counts["v4"] / 4000 - 0.5) < 0.04 and abs(counts["rule"] / 4000 - 0.2) < 0.03
    assert counts["v3"] > counts["v2"] > counts.get("v1", 0)  # PFSP favours the opponent we lose to


def test_retired_agents_are_excluded_by_the_caller_contract():
    # Only names passed in can come out: the training loop passes non-retired versions only.
    rng = np.random.default_rng(1)
    assert set(sample_opponents(200, {"past": 1.0}, "v9", ["v5"], [0.5], [], rng)) == {"v5"}


def test_unknown_source_is_an_error():
    with pytest.raises(ValueError, match="unknown opponent sources"):
        normalized_mix({"champion!": 1.0}, {})


def test_payoff_table_decays_and_accumulates(registry):
    registry.agent_store.add("v1", "mlp", 1)
    registry.payoff_store.record("run", 1, {"v1": (2, 1, 4), "rule": (1, 0, 1)})
    registry.payoff_store.record("run", 1, {"v1": (1, 0, 1)}, decay=0.5)
    pay = registry.payoff_store.get("run", 1)
    assert pay["v1"] == pytest.approx((2.0, 0.5, 3.0)) and pay["rule"] == (1, 0, 1)
    assert registry.payoff_store.get("other", 1) == {}


def test_the_community_share_draws_the_leagues_community_bots_or_falls_back_to_self_play():
    rng = np.random.default_rng(2)
    picks = sample_opponents(3000, {"latest": 0.5, "community": 0.5}, "v4", [], [], ["rule"], rng,
                             community=["necto", "element"])
    counts = {n: picks.count(n) for n in set(picks)}
    assert set(counts) == {"v4", "necto", "element"} and abs(counts["necto"] / 3000 - 0.25) < 0.04
    without = sample_opponents(100, {"latest": 0.5, "community": 0.5}, "v4", [], [], ["rule"], rng)
    assert set(without) == {"v4"}  # no community bot in the league: self-play takes its share
    before = sample_opponents(50, {"latest": 0.5, "rule": 0.5}, "v4", [], [], ["rule"], np.random.default_rng(3))
    after = sample_opponents(50, {"latest": 0.5, "rule": 0.5, "community": 0.0}, "v4", [], [], ["rule"],
                             np.random.default_rng(3), community=["necto"])
    assert before == after  # a zero community share changes no draw


def test_the_panel_share_draws_panel_members_by_pfsp_or_falls_back_to_self_play():
    rng = np.random.default_rng(4)
    picks = sample_opponents(4000, {"latest": 0.5, "panel": 0.5}, "v4", [], [], ["rule"], rng,
                             panel=["necto", "sa-v100"], panel_scores=[0.7, 0.3])
    counts = {n: picks.count(n) for n in set(picks)}
    assert set(counts) == {"v4", "necto", "sa-v100"}
    # hard PFSP: (1 - 0.3)^2 against (1 - 0.7)^2, the member the learner loses to drawn 0.49 / 0.58 of the share
    assert abs(counts["sa-v100"] / 4000 - 0.5 * 0.49 / 0.58) < 0.03
    without = sample_opponents(100, {"latest": 0.5, "panel": 0.5}, "v4", [], [], ["rule"], rng)
    assert set(without) == {"v4"}  # no panel yet: self-play takes its share
    before = sample_opponents(50, {"latest": 0.5, "rule": 0.5}, "v4", [], [], ["rule"], np.random.default_rng(3))
    after = sample_opponents(50, {"latest": 0.5, "rule": 0.5, "panel": 0.0}, "v4", [], [], ["rule"],
                             np.random.default_rng(3), panel=["necto"], panel_scores=[0.5])
    assert before == after  # a zero panel share changes no draw
