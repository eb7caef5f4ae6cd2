"""The statistics of an SPRT match: is agent A at least `elo1` better than B, or no better than `elo0`?

Chess engine testing (Fishtest, OpenBench, fastchess, cutechess) plays games in *pairs* (same
opening, colours swapped) until a sequential probability ratio test decides. Here a pair is two
mirrored games between A and B (same seed, sides swapped). This module is the pure arithmetic:
no I/O, no database; the match runner feeds it counts and asks for a decision.

Counts
  pentanomial (pairs): [n0, n1, n2, n3, n4], n_k = pairs whose mean A-score is k/4 (LL, LD,
                       WL+DD, WD, WW: a win scores 1, a draw 0.5, a loss 0);
  trinomial (games):   [losses, draws, wins] of A, for unpaired games.

The log-likelihood ratio (the generalized SPRT)
  Followed: official-stockfish/fishtest `server/fishtest/stats/LLRcalc.py` (`LLR_normalized`,
  `MLE_t_value`, `LLR_logistic`, `MLE_expected`, `secular`, `regularize`), which OpenBench
  (AndyGrant/OpenBench `OpenBench/stats.py`, `PentanomialSPRT`) and fastchess
  (Disservin/fastchess `app/src/matchmaking/sprt/sprt.cpp`, `getLLR_normalized`) implement too;
  theory in M. Van den Bergh, "Comments on Normalized Elo" (cantate.be/Fishtest/
  normalized_elo_practical.pdf, section 4.1) and "support_MLE_multinomial.pdf" (Proposition 1.1).

  For each hypothesis the *constrained maximum-likelihood* distribution is the multinomial on the
  same outcomes closest (in KL divergence from the empirical one) to the empirical distribution
  p-hat among those meeting the hypothesis, and

      LLR = N * sum_i p-hat_i * log(p1_i / p0_i).

  normalized model (the default): the hypothesis fixes the t-value t = (mu - 1/2) / sigma of the
  per-pair (or per-game) score, t = sqrt(2) * nelo / (800 / ln 10) for pairs and
  t = nelo / (800 / ln 10) for games. p_MLE is found by Fishtest's fixed-point iteration:
  start uniform; with mu, sigma of the current estimate put
  phi_i = a_i - 1/2 - t * sigma * (1 + ((mu - a_i) / sigma)^2) / 2, solve the secular equation
  sum_i p-hat_i phi_i / (1 + x phi_i) = 0 for x, set p_i = p-hat_i / (1 + x phi_i); at most 10
  rounds, stopping when no probability moves by 1e-9 (Fishtest's numbers).
  logistic model: the hypothesis fixes the expected score s = 1 / (1 + 10^(-elo/400)); one
  secular equation with phi_i = a_i - s.
  The secular equation is solved here by a bracketed Newton iteration, vectorised over many
  count vectors at once (the simulations step hundreds of runs in lock step), where Fishtest
  calls scipy's brentq per equation; both stop at the root to about 1e-13.

Zero counts are regularised exactly as Fishtest (`LLRcalc.regularize`), OpenBench
(`max(1e-3, x)`) and fastchess (`regularize`) do: every zero count is replaced by 1e-3 before
the empirical distribution is formed (N is then the regularised total), so every log is finite
and a distribution with all results on one side still has a positive variance. One deliberate
difference: no results at all (N = 0) gives LLR = 0 (no evidence), where Fishtest would return
the tiny value of five regularised counts.

Bounds and decision (Wald): lower = ln(beta / (1 - alpha)), upper = ln((1 - beta) / alpha);
LLR >= upper accepts H1 ("A is at least elo1 better"), LLR <= lower accepts H0 ("A is no better
than elo0"), else continue. alpha = beta = 0.05 gives +-2.944.

Elo estimate (as fastchess `app/src/matchmaking/elo/elo_pentanomial.cpp` and OpenBench `Elo`
report it): the mean per-game score s; its standard error from the per-pair variance (pairs:
var_pair / N, which keeps the correlation of a pair's two games) or the per-game variance
(games); logistic Elo -400 log10(1/s - 1) at s and at s -+ 1.96 se; LOS = Phi((s - 1/2) / se).
Where every pair (or game) ended alike, one pair included, the sample variance is 0 and says
nothing; the standard error then takes the largest variance a game can have (1/4 per game, 1/8
per pair), so one won pair is not reported as a certainty with an interval of zero width.
Scores are clamped to [1e-3, 1 - 1e-3] before converting (as OpenBench's `logistic_elo`), so the
Elo stays within +-ELO_CLAMP (about 1200) when one side won everything. Normalized Elo:
(s - 1/2) / sigma * 800 / ln 10 with sigma = sqrt(2 var_pair) per game for pairs (sqrt(var)
for games), computed on the regularised distribution like the LLR (finite when every pair
ended alike); its 95% interval is +-1.96 * (800 / ln 10) / sqrt(games).

Simulation model (for calibration and tests): a game is won, drawn or lost by A with
probabilities w = s - d/2, d, l = 1 - s - d/2 (expected score s, draw ratio d). The two games of a
pair are positively correlated with coefficient rho: with probability rho the mirrored game repeats
the first game's result, otherwise it is drawn independently (the marginals stay (l, d, w); the
Pearson correlation of the two game scores is rho). `pentanomial_distribution` picks s so that
the resulting pentanomial has the asked Elo in the asked model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
from scipy import optimize

# The parameters live in a module without numpy or scipy (the config checks an SPRT text at load);
# they are this module's names too.
from league.sprt_params import MAX_ELO as MAX_ELO
from league.sprt_params import MODELS as MODELS
from league.sprt_params import Model as Model
from league.sprt_params import SprtParams as SprtParams
from league.sprt_params import sprt_bounds as sprt_bounds

Decision = Literal["H1", "H0"] | None

NELO_PER_T = 800.0 / math.log(10.0)  # normalized Elo per unit of t-value (per game): 347.4...
REGULARIZATION = 1e-3  # what a zero count becomes (Fishtest, OpenBench, fastchess)
PENTANOMIAL_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
TRINOMIAL_SCORES = np.array([0.0, 0.5, 1.0])
GAME_SCORES = (0.0, 0.5, 1.0)  # loss, draw, win
Z95 = NormalDist().inv_cdf(0.975)  # 1.95996...
GAME_VARIANCE_CEILING = 0.25  # the largest variance a game's score (0, 1/2, 1) can have: all wins and losses
SCORE_CLAMP = 1e-3  # scores are clamped to [SCORE_CLAMP, 1 - SCORE_CLAMP] before converting to Elo

_MLE_ROUNDS = 10  # Fishtest: for i in range(10)
_MLE_TOLERANCE = 1e-9  # Fishtest: stop when no probability moves by more than this
_NEWTON_ROUNDS = 100


def logistic_score(elo: float) -> float:
    """The expected score of a player `elo` logistic Elo stronger: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def logistic_elo(score: float) -> float:
    """The logistic Elo difference of a mean score, the score clamped to [1e-3, 1 - 1e-3]."""
    if score < 0.5:  # computed on the winning side, so that the two sides mirror exactly
        return -logistic_elo(1.0 - score)
    s = min(score, 1.0 - SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0  # + 0.0: an even score is 0.0, not -0.0


ELO_CLAMP = logistic_elo(1.0)  # 1199.87...: the largest Elo this module reports


# --------------------------------------------------------------------------- the decision


def decide(llr: float, params: SprtParams) -> Decision:
    """"H1" once the LLR reaches the upper bound, "H0" once it reaches the lower, else None."""
    lower, upper = params.bounds
    if llr >= upper:
        return "H1"
    if llr <= lower:
        return "H0"
    return None


# --------------------------------------------------------------------------- counting


def pair_score(score_game1: float, score_game2: float) -> int:
    """The pentanomial index 0..4 of a pair from A's scores in its two games (1, 0.5 or 0 each)."""
    for s in (score_game1, score_game2):
        if s not in GAME_SCORES:
            raise ValueError(f"a game score is 0, 0.5 or 1, not {s!r}")
    return int(round(2 * (score_game1 + score_game2)))


def pentanomial_counts(pairs: Iterable[tuple[float, float]]) -> list[int]:
    """[n0, n1, n2, n3, n4] from A's (game 1, game 2) scores of each pair."""
    counts = [0] * 5
    for first, second in pairs:
        counts[pair_score(first, second)] += 1
    return counts


def trinomial_counts(scores: Iterable[float]) -> list[int]:
    """[losses, draws, wins] from A's per-game scores."""
    counts = [0] * 3
    for s in scores:
        if s not in GAME_SCORES:
            raise ValueError(f"a game score is 0, 0.5 or 1, not {s!r}")
        counts[int(round(2 * s))] += 1
    return counts


def _count_rows(counts: Sequence[float] | np.ndarray) -> np.ndarray:
    """Counts as a (rows, 3 or 5) float array, checked: non-negative and finite."""
    rows = np.atleast_2d(np.asarray(counts, dtype=float))
    if rows.ndim != 2 or rows.shape[1] not in (3, 5):
        raise ValueError(f"counts are [losses, draws, wins] or [n0..n4], not shape {np.shape(counts)}")
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise ValueError(f"counts must be finite and non-negative: {counts!r}")
    return rows


def _scores_for(width: int) -> np.ndarray:
    return PENTANOMIAL_SCORES if width == 5 else TRINOMIAL_SCORES


# --------------------------------------------------------------------------- the LLR


def _secular_root(phat: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Per row, the x with sum_i phat_i phi_i / (1 + x phi_i) = 0 on (-1/max phi, -1/min phi).

    The left side falls strictly from +inf to -inf on that interval, so Newton steps kept inside
    a shrinking bracket (bisection when a step would leave it) converge for every row."""
    lo = -1.0 / phi.max(axis=1)
    hi = -1.0 / phi.min(axis=1)
    x = np.zeros(len(phat))  # 0 always lies inside: 1 + 0 * phi = 1 > 0
    done = np.zeros(len(phat), dtype=bool)
    for _ in range(_NEWTON_ROUNDS):
        denom = 1.0 + x[:, None] * phi
        term = phat * phi / denom
        f = term.sum(axis=1)
        df = -(term * phi / denom).sum(axis=1)
        lo = np.where(f > 0, x, lo)
        hi = np.where(f < 0, x, hi)
        step = f / df
        nxt = x - step
        outside = ~((nxt > lo) & (nxt < hi))
        nxt = np.where(outside, 0.5 * (lo + hi), nxt)
        converged = (np.abs(nxt - x) <= 1e-14 * (1.0 + np.abs(x))) | (f == 0)
        x = np.where(done, x, nxt)
        done |= converged
        if done.all():
            break
    return x


def _mle_expected(phat: np.ndarray, scores: np.ndarray, s: float) -> np.ndarray:
    """Fishtest's MLE_expected: the distribution closest to phat whose mean is s."""
    phi = np.broadcast_to(scores - s, phat.shape)
    x = _secular_root(phat, phi)
    return phat / (1.0 + x[:, None] * phi)


def _mle_t_value(phat: np.ndarray, scores: np.ndarray, t: float, ref: float = 0.5) -> np.ndarray:
    """Fishtest's MLE_t_value: the distribution closest to phat with (mu - ref) / sigma = t."""
    p = np.full_like(phat, 1.0 / phat.shape[1])
    for _ in range(_MLE_ROUNDS):
        mu = (p * scores).sum(axis=1, keepdims=True)
        sigma = np.sqrt((p * (scores - mu) ** 2).sum(axis=1, keepdims=True))
        phi = scores - ref - t * sigma * (1.0 + ((mu - scores) / sigma) ** 2) / 2.0
        x = _secular_root(phat, phi)
        previous, p = p, phat / (1.0 + x[:, None] * phi)
        if np.max(np.abs(p - previous)) < _MLE_TOLERANCE:
            break
    return p


def _hypothesis_t(params: SprtParams, width: int) -> tuple[float, float]:
    factor = math.sqrt(2.0) if width == 5 else 1.0  # a pair's t-value is sqrt(2) times a game's
    return factor * params.elo0 / NELO_PER_T, factor * params.elo1 / NELO_PER_T


def llr_many(counts: Sequence[Sequence[float]] | np.ndarray, params: SprtParams) -> np.ndarray:
    """The LLR of each row of counts (all pentanomial or all trinomial), as `llr` computes it."""
    rows = _count_rows(counts)
    width = rows.shape[1]
    scores = _scores_for(width)
    regularised = np.where(rows == 0, REGULARIZATION, rows)
    total = regularised.sum(axis=1)
    phat = regularised / total[:, None]
    if params.model == "normalized":
        t0, t1 = _hypothesis_t(params, width)
        p0, p1 = _mle_t_value(phat, scores, t0), _mle_t_value(phat, scores, t1)
    else:
        s0, s1 = logistic_score(params.elo0), logistic_score(params.elo1)
        p0, p1 = _mle_expected(phat, scores, s0), _mle_expected(phat, scores, s1)
    out = np.where(rows.sum(axis=1) == 0, 0.0, total * (phat * (np.log(p1) - np.log(p0))).sum(axis=1))
    if not np.all(np.isfinite(out)):  # not seen within MAX_ELO; loud rather than a silent NaN decision
        raise ValueError(f"the constrained MLE did not converge for counts {rows[~np.isfinite(out)][0].tolist()}")
    return out


def llr(counts: Sequence[float], params: SprtParams) -> float:
    """The generalized log-likelihood ratio of H1 against H0 for pentanomial counts [n0..n4]
    (pairs) or trinomial counts [losses, draws, wins] (games)."""
    return float(llr_many([counts], params)[0])


# --------------------------------------------------------------------------- Elo estimate


@dataclass(frozen=True)
class EloEstimate:
    """A's Elo advantage over B from the counts: logistic Elo with its 95% interval and the
    likelihood of superiority, the mean score, and normalized Elo with its 95% interval."""

    score: float
    score_se: float
    elo: float
    elo_95: tuple[float, float]
    los: float
    nelo: float
    nelo_95: tuple[float, float]


def elo_estimate(counts: Sequence[float]) -> EloEstimate:
    """Elo, its 95% interval and LOS from pentanomial or trinomial counts (see the module notes)."""
    rows = _count_rows(counts)
    if rows.shape[0] != 1:
        raise ValueError("elo_estimate takes one count vector")
    raw = rows[0]
    width = len(raw)
    scores = _scores_for(width)
    n = raw.sum()
    if n == 0:
        return EloEstimate(0.5, math.inf, 0.0, (-ELO_CLAMP, ELO_CLAMP), 0.5, 0.0, (-ELO_CLAMP, ELO_CLAMP))
    p = raw / n
    score = float((p * scores).sum())
    games_per_row = 2.0 if width == 5 else 1.0
    var = float((p * (scores - score) ** 2).sum())  # per pair (pentanomial) or per game
    if var == 0.0:  # every pair (game) ended alike, one pair included: the sample says nothing of the spread
        var = GAME_VARIANCE_CEILING / games_per_row  # a game's widest spread; a pair averages two such games
    se = math.sqrt(var / n)
    los = 0.5 * math.erfc(-(score - 0.5) / se / math.sqrt(2.0))
    elo = logistic_elo(score)
    elo_95 = (logistic_elo(score - Z95 * se), logistic_elo(score + Z95 * se))
    reg = np.where(raw == 0, REGULARIZATION, raw)
    reg_p = reg / reg.sum()
    reg_mu = float((reg_p * scores).sum())
    reg_sigma = math.sqrt(games_per_row * float((reg_p * (scores - reg_mu) ** 2).sum()))
    nelo = (reg_mu - 0.5) / reg_sigma * NELO_PER_T
    half = Z95 * NELO_PER_T / math.sqrt(games_per_row * n)
    return EloEstimate(score, se, elo, elo_95, los, nelo, (nelo - half, nelo + half))


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True)
class SprtResult:
    """Where an SPRT stands after `counts`: the LLR against its bounds, the decision ("H1": A is
    at least elo1 better, "H0": no better than elo0, None: play on) and the Elo estimate."""

    params: SprtParams
    counts: tuple[int, ...]
    llr: float
    lower: float
    upper: float
    decision: Decision
    pairs: int | None  # None for trinomial (unpaired) counts
    games: int
    score: float
    elo: float
    elo_95: tuple[float, float]
    los: float
    nelo: float
    nelo_95: tuple[float, float]


def sprt_result(counts: Sequence[int], params: SprtParams) -> SprtResult:
    """The SPRT state for pentanomial counts [n0..n4] or trinomial counts [losses, draws, wins]."""
    rows = _count_rows(counts)
    if rows.shape[0] != 1:
        raise ValueError("sprt_result takes one count vector")
    value = llr(counts, params)
    lower, upper = params.bounds
    n = int(rows[0].sum())
    estimate = elo_estimate(counts)
    paired = rows.shape[1] == 5
    return SprtResult(
        params=params, counts=tuple(int(c) for c in rows[0]), llr=value, lower=lower, upper=upper,
        decision=decide(value, params), pairs=n if paired else None, games=2 * n if paired else n,
        score=estimate.score, elo=estimate.elo, elo_95=estimate.elo_95, los=estimate.los,
        nelo=estimate.nelo, nelo_95=estimate.nelo_95)


# --------------------------------------------------------------------------- distributions


def game_probabilities(score: float, draw_ratio: float) -> np.ndarray:
    """[loss, draw, win] probabilities of one game with expected score `score` and draw ratio d."""
    if not 0.0 <= draw_ratio < 1.0:
        raise ValueError(f"draw_ratio must lie in [0, 1), not {draw_ratio!r}")
    w, l = score - draw_ratio / 2.0, 1.0 - score - draw_ratio / 2.0
    if w < -1e-12 or l < -1e-12:
        raise ValueError(f"a score of {score!r} is impossible with a draw ratio of {draw_ratio!r}")
    return np.array([max(l, 0.0), draw_ratio, max(w, 0.0)])


def pentanomial_from_games(game: Sequence[float], correlation: float = 0.0) -> np.ndarray:
    """The pair distribution [p0..p4] when each game is [loss, draw, win] ~ `game` and, with
    probability `correlation`, the mirrored game repeats the first one's result."""
    if not 0.0 <= correlation < 1.0:
        raise ValueError(f"correlation must lie in [0, 1), not {correlation!r}")
    q = np.asarray(game, dtype=float)
    independent = np.convolve(q, q)  # index i + j: pair score (i + j) / 4
    repeated = np.zeros(5)
    repeated[[0, 2, 4]] = q
    return (1.0 - correlation) * independent + correlation * repeated


def distribution_stats(probs: Sequence[float]) -> tuple[float, float]:
    """(mean per-game score, variance per row) of a pentanomial or trinomial distribution."""
    p = np.asarray(probs, dtype=float)
    scores = _scores_for(len(p))
    mu = float((p * scores).sum())
    return mu, float((p * (scores - mu) ** 2).sum())


def distribution_elo(probs: Sequence[float], model: Model = "normalized") -> float:
    """The Elo difference a pentanomial or trinomial distribution has, in `model` units."""
    mu, var = distribution_stats(probs)
    if model == "logistic":
        return -400.0 * math.log10(1.0 / mu - 1.0)
    sigma = math.sqrt((2.0 if len(probs) == 5 else 1.0) * var)
    return (mu - 0.5) / sigma * NELO_PER_T


def pentanomial_distribution(elo: float, model: Model = "normalized", draw_ratio: float = 0.2,
                             correlation: float = 0.0) -> np.ndarray:
    """A pair distribution [p0..p4] whose Elo in `model` units is `elo`, under the simulation
    model of the module notes (draw ratio per game, pair correlation)."""
    if model == "logistic":
        return pentanomial_from_games(game_probabilities(logistic_score(elo), draw_ratio), correlation)
    if elo == 0.0:
        return pentanomial_from_games(game_probabilities(0.5, draw_ratio), correlation)
    lo, hi = draw_ratio / 2.0, 1.0 - draw_ratio / 2.0  # the achievable expected scores
    margin = 1e-9

    def gap(score: float) -> float:
        return distribution_elo(pentanomial_from_games(game_probabilities(score, draw_ratio), correlation)) - elo

    a, b = (0.5, hi - margin) if elo > 0 else (lo + margin, 0.5)
    if gap(a) * gap(b) > 0:
        raise ValueError(f"no pair distribution of normalized Elo {elo!r} with draw ratio {draw_ratio!r}")
    score = optimize.brentq(gap, a, b, xtol=1e-14)
    return pentanomial_from_games(game_probabilities(score, draw_ratio), correlation)


# --------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class SimulatedRuns:
    """Many simulated SPRT runs: each one's decision ("H1", "H0", or None when it reached
    `max_pairs` undecided) and the number of pairs it played."""

    decisions: tuple[Decision, ...]
    pairs: tuple[int, ...]

    @property
    def runs(self) -> int:
        return len(self.decisions)

    def rate(self, decision: Decision) -> float:
        return sum(d == decision for d in self.decisions) / self.runs

    @property
    def mean_pairs(self) -> float:
        return float(np.mean(self.pairs))

    @property
    def median_pairs(self) -> float:
        return float(np.median(self.pairs))


def simulate_runs(probs: Sequence[float], params: SprtParams, runs: int, rng: np.random.Generator,
                  max_pairs: int = 100_000) -> SimulatedRuns:
    """`runs` independent SPRTs, each drawing pairs from the pentanomial `probs` and checking the
    LLR after every pair until a decision or `max_pairs`. The runs advance in lock step, one
    vectorised LLR per pair for all runs still going."""
    p = np.asarray(probs, dtype=float)
    if p.shape != (5,) or np.any(p < 0) or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise ValueError(f"probs must be a pentanomial distribution, not {probs!r}")
    lower, upper = params.bounds
    cumulative = np.cumsum(p / p.sum())
    counts = np.zeros((runs, 5))
    active = np.arange(runs)
    decisions: list[Decision] = [None] * runs
    used = np.full(runs, max_pairs)
    for played in range(1, max_pairs + 1):
        if len(active) == 0:
            break
        outcome = np.minimum(np.searchsorted(cumulative, rng.random(len(active)), side="right"), 4)
        counts[active, outcome] += 1
        values = llr_many(counts[active], params)
        finished = (values >= upper) | (values <= lower)
        for run, value in zip(active[finished], values[finished]):
            decisions[run] = "H1" if value >= upper else "H0"
            used[run] = played
        active = active[~finished]
    return SimulatedRuns(tuple(decisions), tuple(int(u) for u in used))


def simulate_sprt(probs: Sequence[float], params: SprtParams, rng: np.random.Generator,
                  max_pairs: int = 100_000) -> tuple[Decision, int]:
    """One simulated SPRT: (decision, pairs played)."""
    result = simulate_runs(probs, params, 1, rng, max_pairs)
    return result.decisions[0], result.pairs[0]


@dataclass(frozen=True)
class Calibration:
    """Simulated SPRTs at true Elo elo0, midway and elo1 (in the params' model units)."""

    params: SprtParams
    draw_ratio: float
    correlation: float
    at_elo0: SimulatedRuns
    midway: SimulatedRuns
    at_elo1: SimulatedRuns

    @property
    def false_positive_rate(self) -> float:
        """Observed H1 acceptances at elo0: to compare with alpha."""
        return self.at_elo0.rate("H1")

    @property
    def false_negative_rate(self) -> float:
        """Observed H0 acceptances at elo1: to compare with beta."""
        return self.at_elo1.rate("H0")


def calibrate(params: SprtParams, runs: int, rng: np.random.Generator, *, draw_ratio: float = 0.2,
              correlation: float = 0.0, max_pairs: int = 100_000) -> Calibration:
    """Simulate `runs` SPRTs at each of elo0, (elo0 + elo1) / 2 and elo1 (true pair distributions
    from `pentanomial_distribution`) and return the observed decisions and lengths."""
    def at(elo: float) -> SimulatedRuns:
        probs = pentanomial_distribution(elo, params.model, draw_ratio, correlation)
        return simulate_runs(probs, params, runs, rng, max_pairs)

    return Calibration(params, draw_ratio, correlation, at(params.elo0),
                       at((params.elo0 + params.elo1) / 2.0), at(params.elo1))
