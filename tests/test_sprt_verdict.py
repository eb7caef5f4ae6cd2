"""The one wording of an SPRT's verdict (league/sprt_verdict.py), as every command and page says it."""

import pytest

from league.sprt import SprtParams
from league.sprt_verdict import match_verdict, sprt_verdict

PARAMS = SprtParams(elo0=0, elo1=30)


@pytest.mark.parametrize("decision, said", [
    ("H1", "H1 accepted"), ("H0", "H0 accepted"), ("inconclusive", "no decision within 400 games"),
])
def test_the_phrase_alone(decision, said):
    assert sprt_verdict(decision, 400) == said
    assert sprt_verdict(decision, 400, PARAMS) == said  # without the agents, nothing more is said


def test_with_the_agents_an_accepted_hypothesis_says_what_it_means():
    assert sprt_verdict("H1", 400, PARAMS, "v13", "v12") == "H1 accepted: v13 is at least 30 normalized Elo better than v12"
    assert (sprt_verdict("H0", 400, SprtParams(elo0=-5, elo1=10, model="logistic"), "v13", "v12")
            == "H0 accepted: v13 is no more than -5 logistic Elo better than v12")
    assert sprt_verdict("inconclusive", 400, PARAMS, "v13", "v12") == "no decision within 400 games"


@pytest.mark.parametrize("mode, status, decision, params, said", [
    ("sprt", "finished", "H1", PARAMS, "H1 accepted: a is at least 30 normalized Elo better than b."),
    ("sprt", "finished", "H0", PARAMS, "H0 accepted: a is no more than 0 normalized Elo better than b."),
    ("sprt", "finished", "inconclusive", PARAMS, "Inconclusive: no decision within 400 games."),
    ("sprt", "finished", "H1", None, "SPRT decision H1 (its parameters cannot be read)."),
    ("sprt", "running", None, PARAMS, "SPRT running: no decision yet (12 of at most 400 games counted)."),
    ("fixed", "finished", None, None, "Fixed match: 12 games of a against b (no SPRT)."),
    ("fixed", "interrupted", None, None, "Fixed match interrupted: 12 of 400 games counted (no SPRT)."),
])
def test_a_match_in_one_sentence(mode, status, decision, params, said):
    assert match_verdict(mode, status, decision, params, "a", "b", 12, 400) == said
