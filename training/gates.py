"""Curriculum promotion gates: pure functions from evaluation evidence to pass/fail with reasons.

A gate is a set of criteria (`GateSpec`, one curriculum stage's `gate:` mapping); each
configured criterion is checked against the `Evidence` gathered by the stage's evaluation
games, and the gate passes exactly when every configured criterion passes. Nothing here plays
games or touches the registry (training.curriculum does that, and plays the SPRT match of
`sprt_vs_previous`, handing in how it ended as an `SprtOutcome`), so the logic is tested with
hypothesis (tests/test_gates.py).

Results count a draw as half a win, as the ratings do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from league.config import even_games_problem, sprt_problem
from league.config_tree import param
from league.ratings import STORED_RATING_LIMIT as RATING_BOUND  # a threshold beyond any storable rating never passes
from league.ratings import wilson_interval
from league.sprt_params import SprtParams
from league.sprt_verdict import sprt_verdict

NOT_WORSE_SCORE = 0.5  # "not worse than the previous agent": an even score cannot be ruled out


@dataclass
class GateSpec:
    """A stage's promotion gate (the `gate:` mapping of a curriculum stage)."""

    min_games: int = param(20, "Evaluation games per opponent at each gate check (rule, random, the previous agent).",
                           min=1, max=10_000)
    win_rate_vs_rule: float | None = param(
        None, "Pass only if the Wilson lower bound of the score rate against rule is at least this (null: off).",
        min=0, max=1)
    win_rate_vs_random: float | None = param(
        None, "Pass only if the Wilson lower bound of the score rate against random is at least this (null: off).",
        min=0, max=1)
    confidence: float = param(1.645, "z of the Wilson score interval (1.645: one-sided 95%; 0: the point estimate).",
                              min=0, max=10)
    min_elo: float | None = param(None, "Pass only if the agent's Elo in its team size is at least this (null: off).",
                                  min=-RATING_BOUND, max=RATING_BOUND)
    min_trueskill: float | None = param(
        None, "Pass only if the agent's conservative TrueSkill (mu - 3 sigma) is at least this (null: off).",
        min=-RATING_BOUND, max=RATING_BOUND)
    not_worse_than_previous: bool = param(
        False, "Pass only if the agent is not significantly worse than the previous stage's final agent "
               "(Wilson upper bound of its score against it at least 0.5).")
    sprt_vs_previous: str | None = param(
        None, "Pass only if an SPRT match of the agent against the previous stage's final agent accepts H1; the "
              "SPRT as `league match --sprt` takes it: \"elo0=-30,elo1=0\" (not worse) or \"elo0=0,elo1=30\" "
              "(better) (null: off).", check=sprt_problem)
    sprt_max_games: int = param(200, "Cap of the sprt_vs_previous match (an even number of games); undecided there, "
                                     "the criterion fails.", min=2, max=10_000, check=even_games_problem)
    game_seconds: float = param(60.0, "Game clock of a gate evaluation game.", min=1, max=3600)

    def plays_rule(self) -> bool:
        """Whether a check plays games against rule (the win rate needs them; Elo and TrueSkill move with them)."""
        return self.win_rate_vs_rule is not None or self.min_elo is not None or self.min_trueskill is not None


@dataclass(frozen=True)
class SprtOutcome:
    """How an SPRT match of the agent (A) against an opponent ended; the caller plays it."""

    decision: str  # "H1" (A is at least elo1 better), "H0" (no better than elo0) or "inconclusive" (the cap)
    llr: float
    elo: float  # A's logistic Elo difference
    games: int
    match_id: int | None = None


@dataclass(frozen=True)
class Evidence:
    """What one gate check measured for the agent under test."""

    rule_score: float = 0.0  # wins + draws / 2 against rule
    rule_games: int = 0
    random_score: float = 0.0  # wins + draws / 2 against random
    random_games: int = 0
    elo: float | None = None
    trueskill: float | None = None  # mu - 3 sigma
    previous_score: float = 0.0  # wins + draws / 2 against the previous stage's final agent
    previous_games: int = 0
    has_previous: bool = False  # False in the first stage: there is nothing to compare with
    previous_sprt: SprtOutcome | None = None  # the sprt_vs_previous match, as it ended


@dataclass(frozen=True)
class Criterion:
    name: str
    passed: bool
    value: float | None  # the measured value compared with the threshold (None: nothing measured)
    threshold: float | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "value": self.value, "threshold": self.threshold,
                "reason": self.reason}


@dataclass(frozen=True)
class GateResult:
    passed: bool
    criteria: tuple[Criterion, ...]

    @property
    def reason(self) -> str:
        """One line: every criterion's reason, failed ones first."""
        if not self.criteria:
            return "no criteria configured: the step budget alone decides"
        ordered = sorted(self.criteria, key=lambda c: c.passed)
        return "; ".join(("ok: " if c.passed else "FAILED: ") + c.reason for c in ordered)

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.criteria]


# --------------------------------------------------------------------------- statistics


def wilson_lower_bound(successes: float, games: int, z: float) -> float:
    """Lower end of the Wilson score interval for a success rate (0 with no games)."""
    return wilson_interval(successes, games, z)[0]


def wilson_upper_bound(successes: float, games: int, z: float) -> float:
    """Upper end of the Wilson score interval for a success rate (1 with no games)."""
    return wilson_interval(successes, games, z)[1]


# --------------------------------------------------------------------------- the gate


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _versus(bound: float, target: float) -> str:
    """"bound ≥ target" or "bound < target" in whole percent, with a decimal where the bound would
    round to the target (54.5% < 55%, not 55% < 55%)."""
    shown = _pct(bound) if _pct(bound) != _pct(target) else f"{100 * bound:.1f}%"
    return f"{shown} {'≥' if bound >= target else '<'} {_pct(target)}"


def _baseline_criterion(spec: GateSpec, opponent: str, target: float, score: float, games: int) -> Criterion:
    """The Wilson lower bound of the score rate against a baseline (rule or random) reaches `target`."""
    name = f"win_rate_vs_{opponent}"
    if games < spec.min_games:
        return Criterion(name, False, None, target, f"win rate vs {opponent} needs {spec.min_games} games, has {games}")
    lower = wilson_lower_bound(score, games, spec.confidence)
    passed = lower >= target
    return Criterion(name, passed, lower, target,
                     f"vs {opponent} {score:g}/{games} ({_pct(score / games)}), "
                     f"Wilson lower bound {_versus(lower, target)}")


def _threshold_criterion(name: str, label: str, value: float | None, threshold: float) -> Criterion:
    if value is None:
        return Criterion(name, False, None, threshold, f"{label} not rated yet (needs ≥ {threshold:g})")
    passed = value >= threshold
    return Criterion(name, passed, value, threshold, f"{label} {value:.1f} {'≥' if passed else '<'} {threshold:g}")


def _previous_criterion(spec: GateSpec, ev: Evidence) -> Criterion:
    if not ev.has_previous:
        return Criterion("not_worse_than_previous", True, None, NOT_WORSE_SCORE,
                         "first stage: no previous agent to compare with")
    if ev.previous_games < spec.min_games:
        return Criterion("not_worse_than_previous", False, None, NOT_WORSE_SCORE,
                         f"comparison with the previous agent needs {spec.min_games} games, has {ev.previous_games}")
    upper = wilson_upper_bound(ev.previous_score, ev.previous_games, spec.confidence)
    passed = upper >= NOT_WORSE_SCORE
    return Criterion("not_worse_than_previous", passed, upper, NOT_WORSE_SCORE,
                     f"vs previous agent {ev.previous_score:g}/{ev.previous_games}, Wilson upper bound "
                     f"{_versus(upper, NOT_WORSE_SCORE)}")


def _sprt_criterion(spec: GateSpec, ev: Evidence) -> Criterion:
    """The sprt_vs_previous match accepted H1; its LLR against the bound of H1."""
    name, upper = "sprt_vs_previous", SprtParams.parse(spec.sprt_vs_previous).bounds[1]
    if not ev.has_previous:
        return Criterion(name, True, None, upper, "first stage: no previous agent to test against")
    o = ev.previous_sprt
    if o is None:
        return Criterion(name, False, None, upper, "the SPRT match against the previous agent was not played")
    verdict = sprt_verdict(o.decision, spec.sprt_max_games)
    match = f", match {o.match_id}" if o.match_id is not None else ""
    return Criterion(name, o.decision == "H1", o.llr, upper,
                     f"SPRT vs previous agent ({spec.sprt_vs_previous}): {verdict}, LLR {o.llr:+.2f} (H1 at "
                     f"{upper:+.2f}), Elo {o.elo:+.0f} in {o.games} games{match}")


def check_gate(spec: GateSpec, ev: Evidence) -> GateResult:
    """Check every configured criterion; the gate passes iff all of them pass (vacuously with none)."""
    criteria: list[Criterion] = []
    if spec.win_rate_vs_rule is not None:
        criteria.append(_baseline_criterion(spec, "rule", float(spec.win_rate_vs_rule), ev.rule_score, ev.rule_games))
    if spec.win_rate_vs_random is not None:
        criteria.append(_baseline_criterion(spec, "random", float(spec.win_rate_vs_random), ev.random_score,
                                            ev.random_games))
    if spec.min_elo is not None:
        criteria.append(_threshold_criterion("min_elo", "Elo", ev.elo, float(spec.min_elo)))
    if spec.min_trueskill is not None:
        criteria.append(_threshold_criterion("min_trueskill", "TrueSkill mu-3σ", ev.trueskill,
                                             float(spec.min_trueskill)))
    if spec.not_worse_than_previous:
        criteria.append(_previous_criterion(spec, ev))
    if spec.sprt_vs_previous is not None:
        criteria.append(_sprt_criterion(spec, ev))
    return GateResult(all(c.passed for c in criteria), tuple(criteria))
