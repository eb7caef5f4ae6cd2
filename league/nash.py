"""Nash averaging (Balduzzi et al., 2018, "Re-evaluating evaluation"): who a league's members must
answer, and how each fares against that answer. Pure: values in, values out (numpy and scipy).

The meta-game
    A[i][j] = p(i beats j) - 1/2 over every counted game between members i and j, from either
    side, a draw counting half (a record whose side is no member, such as a mixed team "A+B",
    counts for nobody). A is antisymmetric (A[j][i] = -A[i][j], A[i][i] = 0). A pair that
    never met counts 0, as if even: NashAverage.unplayed_pairs names them, and callers say so. A
    member with no game against any other member is left out (NashAverage.left_out): it would be
    even with everyone, and so part of every answer.

The equilibrium
    The symmetric zero-sum game on A has value 0; its Nash equilibria are the mixtures p with
    (A p)[i] <= 0 for every member i (no member beats the mixture). Of those, Nash averaging takes
    the one of maximum entropy, which is unique: it spreads weight over every member that some
    equilibrium uses. Members whose rows of A are identical (exact copies in the meta-game) count
    as one strategy, whose weight they share equally. Where the equilibrium is unique this
    changes nothing; where there are several, it keeps a copy from drawing weight to its strategy
    (the plain maximum-entropy choice would give a strategy with two copies 2/3 of a tie between
    two strategies), so adding copies never moves any other member's score.

The scores
    A member's Nash-averaged score is (A p)[i], its expected payoff against the Nash mixture: 0
    for every member of the support (weight > 0), below 0 for the others, and the further below,
    the more the mixture beats it. It is a score rate against the mixture minus 1/2.

How it is computed
    The payoffs are scaled by the largest (a payoff below PAYOFF_RESOLUTION of it is a tie) and
    the copies merged. One linear program (HiGHS) finds an equilibrium that is strictly
    complementary (Goldman and Tucker: every strategy has weight, or scores below 0 against it),
    which tells the support of every equilibrium. On the support, the equalities (A p)[i] = 0 are
    solved exactly by a null-space parametrisation and SLSQP maximises the entropy from that
    equilibrium; Newton's method on the binding constraints (an active set) finishes it to machine
    precision. Deterministic: no random start, and the same game gives the same answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import linprog, minimize

# A score within this of 0 counts as 0 (the support's, up to rounding), when ranking and checking.
SCORE_TOLERANCE = 1e-6
# A payoff smaller than this fraction of the largest one is a tie (no realistic number of games
# shows such a difference), so the linear program never has to tell a margin from its tolerance.
PAYOFF_RESOLUTION = 1e-6
# HiGHS at its tightest tolerances, where margins can be small; its presolve then now and then calls a
# feasible program infeasible, so without it first, and at its defaults if that fails.
_LP_ATTEMPTS = ({"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10, "presolve": False},
                {})
# Singular values below this (relative) are null directions of the support's equalities.
_RANK_TOLERANCE = 1e-10
_NEWTON_STEPS = 50
# Off the support, a (scaled) score above -_ACTIVE_GUESS at SLSQP's answer may bind the equilibrium,
# and one above _BINDING is a violation.
_ACTIVE_GUESS, _BINDING = 1e-5, 1e-9


class PairResult(Protocol):
    """What `agent` scored against `opponent` over some games (league.standings.PairRecord is one)."""

    agent: str
    opponent: str
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class NashAverage:
    """The meta-game of some members and its maximum-entropy Nash equilibrium (see the module's docstring).

    `members` keep the order they were given in; every per-member tuple follows it.
    """

    members: tuple[str, ...]
    payoff: tuple[tuple[float, ...], ...]  # A[i][j] = p(i beats j) - 1/2; 0 for a pair that never met
    games: tuple[tuple[int, ...], ...]  # games between i and j, from either side
    weights: tuple[float, ...]  # the Nash mixture: weights >= 0 that sum to 1
    scores: tuple[float, ...]  # (A p)[i]: <= 0, and 0 on the support
    left_out: tuple[str, ...] = ()  # members given with no game against another member

    @property
    def support(self) -> tuple[str, ...]:
        """The members the equilibrium plays (weight > 0), in the members' order."""
        return tuple(m for m, w in zip(self.members, self.weights) if w > 0)

    @property
    def unplayed_pairs(self) -> tuple[tuple[str, str], ...]:
        """The pairs of members that never met, whose payoff counts 0."""
        n = len(self.members)
        return tuple((self.members[i], self.members[j]) for i in range(n) for j in range(i + 1, n)
                     if not self.games[i][j])

    def ranking(self) -> tuple[int, ...]:
        """Member indices best first: by Nash-averaged score, then by weight, then in the members'
        order (scores and weights within SCORE_TOLERANCE count as equal, so rounding orders nothing)."""
        def key(i: int) -> tuple[float, float, int]:
            return -round(self.scores[i] / SCORE_TOLERANCE), -round(self.weights[i] / SCORE_TOLERANCE), i
        return tuple(sorted(range(len(self.members)), key=key))

    def weight(self, name: str) -> float:
        return self.weights[self.members.index(name)]

    def score(self, name: str) -> float:
        return self.scores[self.members.index(name)]


def meta_game(members: Sequence[str], records: Iterable[PairResult]) -> tuple[np.ndarray, np.ndarray]:
    """(A, games) of `members` from the records (several records of one pair, from either side, add
    up; records of an agent against itself or involving a non-member are ignored)."""
    index = {name: i for i, name in enumerate(members)}
    n = len(index)
    points, games = np.zeros((n, n)), np.zeros((n, n), dtype=np.int64)
    for r in records:
        i, j = index.get(r.agent), index.get(r.opponent)
        if i is None or j is None or i == j:
            continue
        played = r.wins + r.draws + r.losses
        points[i, j] += r.wins + 0.5 * r.draws
        points[j, i] += r.losses + 0.5 * r.draws
        games[i, j] += played
        games[j, i] += played
    payoff = np.divide(points, games, out=np.full((n, n), 0.5), where=games > 0) - 0.5
    return (payoff - payoff.T) / 2, games  # the same matrix, antisymmetric to the last bit


def nash_average(members: Sequence[str], records: Iterable[PairResult]) -> NashAverage:
    """Nash averaging of `members` (distinct names) over the records of their games."""
    names = list(dict.fromkeys(members))
    records = list(records)
    _, games = meta_game(names, records)
    kept = [name for name, row in zip(names, games) if row.any()]
    payoff, games = meta_game(kept, records)
    weights = max_entropy_nash(payoff)
    scores = payoff @ weights
    return NashAverage(
        members=tuple(kept), payoff=tuple(map(tuple, payoff.tolist())), games=tuple(map(tuple, games.tolist())),
        weights=tuple(weights.tolist()), scores=tuple(scores.tolist()),
        left_out=tuple(n for n in names if n not in kept))


def max_entropy_nash(payoff: np.ndarray) -> np.ndarray:
    """The maximum-entropy Nash equilibrium of the symmetric zero-sum game on the antisymmetric
    `payoff`, exact copies (identical rows) sharing their strategy's weight equally."""
    a = np.asarray(payoff, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or not np.all(np.isfinite(a)):
        raise ValueError(f"The payoff must be a finite square matrix, not one of shape {a.shape}.")
    n = len(a)
    if not np.allclose(a, -a.T, rtol=0.0, atol=1e-12):
        raise ValueError("The payoff must be antisymmetric (A[j][i] = -A[i][j]).")
    if n == 0:
        return np.zeros(0)
    scale = np.abs(a).max()
    if scale > 0:  # the equilibria do not change; the solvers' tolerances see payoffs of order 1
        a = np.where(np.abs(a) < PAYOFF_RESOLUTION * scale, 0.0, a / scale)
    strategy_of, firsts = _strategies(a)
    strategy_weights = _max_entropy_equilibrium(a[np.ix_(firsts, firsts)])
    copies = np.bincount(strategy_of, minlength=len(firsts))
    return strategy_weights[strategy_of] / copies[strategy_of]


def _strategies(a: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Each member's strategy (members with identical rows share one) and each strategy's first member."""
    first_of: dict[bytes, int] = {}
    strategy_of, firsts = np.zeros(len(a), dtype=np.int64), []
    for i, row in enumerate(a):
        key = (row + 0.0).tobytes()  # + 0.0 turns -0.0 into 0.0, so equal rows have equal bytes
        if key not in first_of:
            first_of[key] = len(firsts)
            firsts.append(i)
        strategy_of[i] = first_of[key]
    return strategy_of, firsts


def _max_entropy_equilibrium(a: np.ndarray) -> np.ndarray:
    """The maximum-entropy equilibrium of a game whose strategies are distinct."""
    n = len(a)
    if not a.any():  # every pair even: every mixture is an equilibrium
        return np.full(n, 1.0 / n)
    start = _strictly_complementary(a)
    support = start > -(a @ start)
    p = np.zeros(n)
    p[support] = _max_entropy_on_support(a, support, start[support] / start[support].sum())
    return p


def _strictly_complementary(a: np.ndarray) -> np.ndarray:
    """An equilibrium p in which every strategy has weight or scores below 0 (Goldman and Tucker:
    one exists for an antisymmetric game): it maximises t subject to p >= 0, sum(p) = 1,
    A p <= 0 and p[i] - (A p)[i] >= t for every i."""
    n = len(a)
    eye = np.eye(n)
    a_ub = np.block([[a, np.zeros((n, 1))], [a - eye, np.ones((n, 1))]])
    a_eq = np.append(np.ones(n), 0.0)[None, :]
    cost = np.append(np.zeros(n), -1.0)
    for options in _LP_ATTEMPTS:
        result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(2 * n), A_eq=a_eq, b_eq=[1.0],
                         bounds=[(0.0, None)] * n + [(None, None)], method="highs", options=options)
        if result.status == 0 and -result.fun > 0:
            break
    else:  # one exists for every antisymmetric game: a solver failure
        raise ArithmeticError(f"No strictly complementary equilibrium found: {result.message}")
    p = np.clip(result.x[:n], 0.0, None)
    return p / p.sum()


def _max_entropy_on_support(a: np.ndarray, support: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The maximum-entropy point q > 0 of {sum(q) = 1, A[S, S] q = 0, A[O, S] q <= 0} (S the
    support, O the others), from `start` in it: q = start + N z with N the null space of the
    equalities, so only the inequalities are left to the optimiser."""
    inside, outside = a[np.ix_(support, support)], a[np.ix_(~support, support)]
    m = len(start)
    equalities = np.vstack([inside, np.ones((1, m))])
    basis = null_space(equalities, rcond=_RANK_TOLERANCE)
    if basis.shape[1] == 0:  # the equalities leave one point
        return start

    def point(z: np.ndarray) -> np.ndarray:
        return start + basis @ z

    def neg_entropy(z: np.ndarray) -> float:
        q = np.clip(point(z), 1e-300, None)
        return float(q @ np.log(q))

    def neg_entropy_grad(z: np.ndarray) -> np.ndarray:
        return basis.T @ (np.log(np.clip(point(z), 1e-300, None)) + 1.0)

    bound = np.vstack([basis, -(outside @ basis)])  # q >= 0 and -(A[O, S] q) >= 0, in z
    offset = np.concatenate([start, -(outside @ start)])
    constraints = [{"type": "ineq", "fun": lambda z: offset + bound @ z, "jac": lambda z: bound}]
    result = minimize(neg_entropy, np.zeros(basis.shape[1]), jac=neg_entropy_grad, method="SLSQP",
                      constraints=constraints, options={"ftol": 1e-15, "maxiter": 1000})
    q = point(result.x) if _feasible(point(result.x), inside, outside) else start
    polished = _active_set_newton(q, inside, outside)
    if polished is not None and _feasible(polished, inside, outside) and _entropy(polished) >= _entropy(q) - 1e-12:
        q = polished
    q = np.clip(q, 0.0, None)
    return q / q.sum()


def _entropy(q: np.ndarray) -> float:
    return float(-(q @ np.log(q)))


def _feasible(q: np.ndarray, inside: np.ndarray, outside: np.ndarray) -> bool:
    return bool(np.all(q > 0) and np.all(np.abs(inside @ q) <= _BINDING) and np.all(outside @ q <= _BINDING))


def _active_set_newton(q: np.ndarray, inside: np.ndarray, outside: np.ndarray) -> np.ndarray | None:
    """SLSQP's answer (good to about 1e-7) taken to machine precision: Newton's method on the
    entropy with the support's equalities and a guess of the binding inequalities as equalities
    (those near 0 at q), the guess corrected until it is consistent: a violated inequality joins
    it, one whose multiplier has the wrong sign leaves it. None if no guess is consistent."""
    m = len(q)
    base = np.vstack([inside, np.ones((1, m))])
    base_rhs = np.append(np.zeros(len(inside)), 1.0)
    active = set(np.flatnonzero(outside @ q > -_ACTIVE_GUESS).tolist())
    tried: set[frozenset[int]] = set()
    while frozenset(active) not in tried:
        tried.add(frozenset(active))
        rows = sorted(active)
        x, multipliers = _newton(q, np.vstack([base, outside[rows]]), np.append(base_rhs, np.zeros(len(rows))))
        if x is None:
            return None
        violated = np.flatnonzero(outside @ x > _BINDING)
        if len(violated):
            active |= set(violated.tolist())
            continue
        wrong = multipliers[len(base_rhs):]
        if len(wrong) and wrong.min() < -1e-9:
            active.discard(rows[int(np.argmin(wrong))])
            continue
        return x
    return None


def _newton(q: np.ndarray, equalities: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """The minimum of sum(x log x) subject to equalities @ x = rhs, by Newton's method from q (which
    need not satisfy them), steps shortened to keep x > 0: (x, the equalities' multipliers), or
    (None, ...) if it does not converge."""
    x, k = q.copy(), len(rhs)
    multipliers = np.zeros(k)
    for _ in range(_NEWTON_STEPS):
        kkt = np.block([[np.diag(1.0 / x), equalities.T], [equalities, np.zeros((k, k))]])
        step = np.linalg.lstsq(kkt, np.concatenate([-(np.log(x) + 1.0), rhs - equalities @ x]), rcond=None)[0]
        dx, multipliers = step[:len(x)], step[len(x):]
        shrinking = dx < 0
        length = min(1.0, 0.9 * float(np.min(x[shrinking] / -dx[shrinking]))) if shrinking.any() else 1.0
        x = x + length * dx
        if length == 1.0 and np.abs(dx).max() < 1e-14:
            return x, multipliers
    return (x, multipliers) if np.abs(equalities @ x - rhs).max() < 1e-12 else (None, multipliers)
