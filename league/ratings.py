"""Rating math: incremental Elo, TrueSkill, and a whole-history maximum-likelihood fit.

Pure functions over numbers; the registry applies them. A game's result is given as the
score of side A: 1 win, 0.5 draw, 0 loss. In team games a side is a list of members; the
Elo strength of a team is the mean of its members' ratings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import trueskill

from league.config import EloConfig, MleConfig, TrueSkillConfig

WIN, DRAW, LOSS = 1.0, 0.5, 0.0
Z_95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(successes: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a success rate, successes of `games`; (0, 1) with no games."""
    if games <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= games:
        raise ValueError(f"successes must be between 0 and games ({games}), got {successes}")
    p = successes / games
    z2 = z * z
    centre = p + z2 / (2 * games)
    spread = z * math.sqrt(max(p * (1 - p) / games + z2 / (4 * games * games), 0.0))
    denom = 1 + z2 / games
    lo, hi = (centre - spread) / denom, (centre + spread) / denom
    # Rounding can push the bounds a hair past the point estimate or outside [0, 1].
    return min(max(lo, 0.0), p), max(min(hi, 1.0), p)


# 10**x overflows a float above x ~ 308; at |x| = 300 one side's expected score is already 1e-300 from certain.
ELO_EXPONENT_LIMIT = 300.0
# The range a stored rating must lie in (docs/schema.md): Elo and the TrueSkill mean within +-1e6, sigma in
# (0, 1e6]. The configured starting points lie within +-1e4 (league/config.py); a game moves Elo by at most
# k_factor (<= 400), and a league's spread stays in the thousands, so anything beyond is damage, not skill.
STORED_RATING_LIMIT = 1e6


def score_from_goals(goals_a: int, goals_b: int) -> float:
    """Side A's score for a final result in goals."""
    return WIN if goals_a > goals_b else LOSS if goals_a < goals_b else DRAW


# --------------------------------------------------------------------------- Elo


def elo_expected(rating_a: float, rating_b: float, scale: float = 400.0) -> float:
    """Expected score of A against B, for any finite ratings (the exponent is clamped, so a gap of
    1e308 points is a certain result, never an OverflowError)."""
    exponent = (rating_b - rating_a) / scale  # inf when the difference itself overflows: clamped below
    return 1.0 / (1.0 + 10.0 ** min(max(exponent, -ELO_EXPONENT_LIMIT), ELO_EXPONENT_LIMIT))


def elo_update(
    team_a: Sequence[float], team_b: Sequence[float], score_a: float, cfg: EloConfig
) -> tuple[list[float], list[float]]:
    """New Elo ratings for both teams after one game.

    Each member moves by K * (score - expected), the expectation taken between the teams'
    mean ratings, so equal-sized teams exchange exactly the points one wins.
    """
    if not team_a or not team_b:
        raise ValueError("both teams need at least one member")
    if not 0.0 <= score_a <= 1.0:
        raise ValueError(f"score_a must be in [0, 1], got {score_a}")
    expected = elo_expected(float(np.mean(team_a)), float(np.mean(team_b)), cfg.scale)
    delta = cfg.k_factor * (score_a - expected)
    return [r + delta for r in team_a], [r - delta for r in team_b]


# --------------------------------------------------------------------------- TrueSkill


def trueskill_env(cfg: TrueSkillConfig) -> trueskill.TrueSkill:
    """A TrueSkill environment with the configured parameters (never the module global)."""
    return trueskill.TrueSkill(
        mu=cfg.mu, sigma=cfg.sigma, beta=cfg.beta, tau=cfg.tau, draw_probability=cfg.draw_probability
    )


def trueskill_update(
    env: trueskill.TrueSkill,
    team_a: Sequence[tuple[float, float]],
    team_b: Sequence[tuple[float, float]],
    score_a: float,
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """New (mu, sigma) for every member of both teams after one game.

    TrueSkill adds `tau` to every sigma before a game so ratings stay responsive; we cap the
    result at the pre-game sigma so that a single game never makes a rating *less* certain.
    """
    ranks = [0, 1] if score_a > 0.5 else [1, 0] if score_a < 0.5 else [0, 0]
    try:
        rated = _rate(env, team_a, team_b, ranks)
    except (ArithmeticError, ValueError):
        # At extreme ratios of sigma to beta, float64 loses the factor graph's messages (a negative precision,
        # "math domain error"); arbitrary precision does not. Slower, so only where float64 failed.
        precise = _precise(env)
        if precise is None:
            raise
        rated = _rate(precise, team_a, team_b, ranks)
    out = []
    for before, after in zip((team_a, team_b), rated):
        out.append([(float(r.mu), min(float(r.sigma), sigma)) for (_, sigma), r in zip(before, after)])
    return out[0], out[1]


def _rate(env: trueskill.TrueSkill, team_a, team_b, ranks: list[int]):
    groups = [[env.create_rating(mu, sigma) for mu, sigma in team] for team in (team_a, team_b)]
    return env.rate(groups, ranks=ranks)


def _precise(env: trueskill.TrueSkill) -> trueskill.TrueSkill | None:
    """The same TrueSkill environment computed with mpmath (None where mpmath is not installed)."""
    try:
        return trueskill.TrueSkill(mu=env.mu, sigma=env.sigma, beta=env.beta, tau=env.tau,
                                   draw_probability=env.draw_probability, backend="mpmath")
    except ImportError:
        return None


def rating_problem(elo: float, mu: float, sigma: float) -> str | None:
    """What makes (elo, mu, sigma) unfit to store or to rate from (None: nothing): a value that is not a
    finite number, or one outside the stored range (STORED_RATING_LIMIT; sigma above 0)."""
    named = {"Elo": elo, "TrueSkill mu": mu, "TrueSkill sigma": sigma}
    for name, value in named.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{name} is {value!r}, not a finite number"
        if abs(value) > STORED_RATING_LIMIT:
            return f"{name} is {value:.6g}, outside -{STORED_RATING_LIMIT:,.0f} to {STORED_RATING_LIMIT:,.0f}"
    if sigma <= 0:
        return f"TrueSkill sigma is {sigma:.6g}, not above 0"
    return None


def conservative(mu: float, sigma: float) -> float:
    """The usual TrueSkill leaderboard value: mu - 3 sigma."""
    return mu - 3.0 * sigma


# --------------------------------------------------------------------------- maximum likelihood


@dataclass(frozen=True)
class MleRatings:
    """Result of a whole-history fit: ratings on the Elo scale with their covariance."""

    names: tuple[str, ...]
    ratings: np.ndarray  # [n] Elo-scale ratings, anchor pinned
    covariance: np.ndarray  # [n, n] Elo-scale covariance (anchor row/column zero)
    anchor: str | None  # the pinned agent, or None when it has not played (a virtual anchor)
    games: np.ndarray  # [n] games each agent played

    def index(self, name: str) -> int:
        return self.names.index(name)

    def rating(self, name: str) -> float:
        return float(self.ratings[self.index(name)])

    def stderr(self, name: str) -> float:
        i = self.index(name)
        return float(math.sqrt(max(self.covariance[i, i], 0.0)))

    def interval(self, name: str, z: float = Z_95) -> tuple[float, float]:
        """The confidence interval (95% by default) of an agent's rating."""
        r, se = self.rating(name), self.stderr(name)
        return r - z * se, r + z * se

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the probability that A is stronger than B."""
        i, j = self.index(a), self.index(b)
        diff = self.ratings[i] - self.ratings[j]
        var = self.covariance[i, i] + self.covariance[j, j] - 2.0 * self.covariance[i, j]
        if var <= 0.0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def mle_fit(
    games: Sequence[tuple[str, str, float]],
    cfg: MleConfig,
    scale: float = 400.0,
    names: Sequence[str] | None = None,
    max_iter: int = 100,
    team_games: Sequence[tuple[Sequence[str], Sequence[str], float]] = (),
) -> MleRatings:
    """Bradley-Terry (Elo-logistic) maximum-likelihood ratings over all games at once.

    Each game is (agent_a, agent_b, score_a); a draw counts as half a win, as in Ordo. Each of
    `team_games` is (members_a, members_b, score_a), a game of mixed teams: a team's strength is
    the mean of its members' ratings, and each member counts the game as played. The
    anchor agent is pinned at `cfg.anchor_rating`; when it has not played, a virtual player
    is pinned there instead. `cfg.prior_draws` virtual draws between every agent and the
    anchor keep agents that never lost (or never won) finite. The result does not depend
    on game order: games are reduced to per-pair score totals before fitting.
    """
    listed = list(names) if names is not None else []
    seen = dict.fromkeys(listed)
    for a, b, _ in games:
        seen.setdefault(a)
        seen.setdefault(b)
    for side_a, side_b, _ in team_games:
        for member in (*side_a, *side_b):
            seen.setdefault(member)
    players = list(seen)
    real_anchor = cfg.anchor_agent in seen
    # Index 0 is always the pinned point: the real anchor agent or a virtual one.
    order = ([cfg.anchor_agent] if real_anchor else ["<anchor>"]) + [p for p in players if p != cfg.anchor_agent]
    index = {p: i for i, p in enumerate(order)}
    n = len(order)

    wins = np.zeros((n, n))  # wins[i, j]: score i earned against j
    count = np.zeros((n, n))
    played = np.zeros(n)
    for a, b, s in games:
        i, j = index[a], index[b]
        if i == j:
            continue
        wins[i, j] += s
        wins[j, i] += 1.0 - s
        count[i, j] += 1.0
        count[j, i] += 1.0
        played[i] += 1
        played[j] += 1
    # Team games, reduced to totals per pair of teams: design rows of +1/|A| over A's members and -1/|B|
    # over B's, so a row times the ratings is the difference of the teams' mean ratings.
    team_totals: dict[tuple[tuple[str, ...], tuple[str, ...]], list[float]] = {}
    for side_a, side_b, s in team_games:
        t = team_totals.setdefault((tuple(side_a), tuple(side_b)), [0.0, 0.0])
        t[0] += s
        t[1] += 1.0
    design = np.zeros((len(team_totals), n))
    team_score, team_count = np.zeros(len(team_totals)), np.zeros(len(team_totals))
    for k, ((side_a, side_b), (s, c)) in enumerate(team_totals.items()):
        for side, sign in ((side_a, 1.0), (side_b, -1.0)):
            for member in side:
                design[k, index[member]] += sign / len(side)
                played[index[member]] += c
        team_score[k], team_count[k] = s, c
    # Virtual draws against the anchor regularize every free player.
    count[0, 1:] += cfg.prior_draws
    count[1:, 0] += cfg.prior_draws
    wins[0, 1:] += 0.5 * cfg.prior_draws
    wins[1:, 0] += 0.5 * cfg.prior_draws

    unit = math.log(10.0) / scale  # natural-log units per Elo point
    x = np.zeros(n)
    for _ in range(max_iter):
        diff = x[:, None] - x[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (wins - count * p).sum(axis=1)
        w = count * p * (1.0 - p)
        hess = np.diag(w.sum(axis=1)) - w  # negative Hessian of the log-likelihood
        if len(team_totals):
            grad, hess = _with_teams(grad, hess, x, design, team_score, team_count)
        free = slice(1, n)
        if n == 1:
            break
        h = hess[free, free]
        try:
            step = np.linalg.solve(h, grad[free])
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(h, grad[free], rcond=None)[0]
        step = np.clip(step, -3.0, 3.0)  # at most ~520 Elo per iteration: keeps Newton stable
        x[free] += step
        if np.max(np.abs(step)) < 1e-10:
            break

    diff = x[:, None] - x[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    w = count * p * (1.0 - p)
    hess = np.diag(w.sum(axis=1)) - w
    if len(team_totals):
        _, hess = _with_teams(np.zeros(n), hess, x, design, team_score, team_count)
    cov = np.zeros((n, n))
    if n > 1:
        cov[1:, 1:] = np.linalg.pinv(hess[1:, 1:]) / unit**2
    ratings = cfg.anchor_rating + x / unit
    keep = list(range(n)) if real_anchor else list(range(1, n))
    return MleRatings(
        names=tuple(order[i] for i in keep),
        ratings=ratings[keep],
        covariance=cov[np.ix_(keep, keep)],
        anchor=cfg.anchor_agent if real_anchor else None,
        games=played[keep],
    )


def _with_teams(grad: np.ndarray, hess: np.ndarray, x: np.ndarray, design: np.ndarray, score: np.ndarray,
                count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gradient and negative Hessian of the log-likelihood with the team games' terms added (in natural-log
    units, as the pairwise terms): each team pair's logit is its design row times the ratings."""
    p = 1.0 / (1.0 + np.exp(-(design @ x)))
    w = count * p * (1.0 - p)
    return grad + design.T @ (score - count * p), hess + design.T @ (w[:, None] * design)


def reanchor(fit: MleRatings, name: str, rating: float) -> MleRatings:
    """The same fit pinned on `name` at `rating` instead of its own anchor.

    Bradley-Terry ratings are defined only up to a constant, so pinning is a choice of origin:
    every rating moves by one constant (`name` lands exactly on `rating`, every difference and
    likelihood of superiority stays as it was), and the covariance becomes that of each rating
    relative to `name` (cov of r_i - r_name), so `name`'s interval has zero width, as the
    anchor's always has. The fit itself (and its prior draws against the configured anchor) is
    unchanged; `name` must be one of `fit.names` (ValueError otherwise).
    """
    i = fit.index(name)
    ratings = fit.ratings - fit.ratings[i] + rating
    ratings[i] = rating  # exact, whatever the float rounding above
    cov = fit.covariance
    col = cov[:, i]
    covariance = cov - col[:, None] - col[None, :] + cov[i, i]
    covariance[i, :] = 0.0
    covariance[:, i] = 0.0
    return MleRatings(names=fit.names, ratings=ratings, covariance=covariance, anchor=name, games=fit.games)
