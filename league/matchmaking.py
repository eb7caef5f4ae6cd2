"""Choosing self-play opponents: pure functions over names, win rates and a random generator.

The structure follows AlphaStar's league: the opponent choice (`pfsp_weights`, a function of
the learner's win rate against each candidate under a named weighting) is kept apart from the
bookkeeping of results (the payoff table in the registry, which answers 0.5 for unplayed
pairs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

UNPLAYED_WIN_RATE = 0.5

# How strongly prioritized fictitious self-play favours opponents the learner struggles with.
PFSP_WEIGHTINGS = {
    "hard": lambda p: (1.0 - p) ** 2,  # AlphaStar's "squared": mostly the opponents that beat us
    "variance": lambda p: p * (1.0 - p),  # the opponents we beat about half the time
    "linear": lambda p: 1.0 - p,
    "even": lambda p: np.ones_like(p),
}

# Opponent sources a mix can name.
SOURCES = ("latest", "past", "pfsp", "rule", "random", "community")


def pfsp_weights(win_rates: Sequence[float], weighting: str = "hard") -> np.ndarray:
    """Sampling probabilities over candidates from the learner's win rates against them.

    Falls back to uniform when every weight is zero (e.g. the learner beats everyone).
    """
    if weighting not in PFSP_WEIGHTINGS:
        raise ValueError(f"unknown PFSP weighting {weighting!r}; expected one of {', '.join(PFSP_WEIGHTINGS)}")
    p = np.clip(np.asarray(win_rates, dtype=np.float64), 0.0, 1.0)
    if p.size == 0:
        return p
    w = np.asarray(PFSP_WEIGHTINGS[weighting](p), dtype=np.float64)
    total = w.sum()
    return w / total if total > 0 else np.full(p.size, 1.0 / p.size)


def win_rate(wins: float, draws: float, games: float) -> float:
    """Score rate with draws as half a win; 0.5 for a pair that has not played."""
    return (wins + 0.5 * draws) / games if games > 0 else UNPLAYED_WIN_RATE


def normalized_mix(mix: Mapping[str, float], available: Mapping[str, bool]) -> dict[str, float]:
    """The configured opponent mix restricted to sources that have candidates, renormalized.

    Self-play against the latest version is always available and takes over the share of
    sources that are empty (e.g. no past versions yet).
    """
    unknown = set(mix) - set(SOURCES)
    if unknown:
        raise ValueError(f"unknown opponent sources {sorted(unknown)}; expected {', '.join(SOURCES)}")
    shares = {s: float(mix.get(s, 0.0)) for s in SOURCES}
    for source, share in list(shares.items()):
        if source != "latest" and not available.get(source, False):
            shares["latest"] += share
            shares[source] = 0.0
    total = sum(shares.values())
    if total <= 0:
        return {"latest": 1.0}
    return {s: v / total for s, v in shares.items() if v > 0}


def sample_opponents(
    n: int,
    mix: Mapping[str, float],
    latest: str,
    past: Sequence[str],
    past_win_rates: Sequence[float],
    baselines: Sequence[str],
    rng: np.random.Generator,
    weighting: str = "hard",
    community: Sequence[str] = (),
) -> list[str]:
    """Names of `n` opponents drawn by the mix: latest self, uniform past, PFSP past, baselines,
    community bots.

    `past` are the learner's earlier (non-retired) versions with the learner's win rate
    against each in `past_win_rates`; `baselines` are the active baseline names available;
    `community` the active community bots that play this team size (one drawn uniformly).
    """
    available = {"past": len(past) > 0, "pfsp": len(past) > 0,
                 "rule": "rule" in baselines, "random": "random" in baselines, "community": len(community) > 0}
    shares = normalized_mix(mix, available)
    sources = list(shares)
    picks = rng.choice(len(sources), size=n, p=np.array([shares[s] for s in sources]))
    out: list[str] = []
    pfsp_p = pfsp_weights(past_win_rates, weighting) if past else None
    for k in picks:
        source = sources[k]
        if source == "latest":
            out.append(latest)
        elif source == "past":
            out.append(past[int(rng.integers(len(past)))])
        elif source == "pfsp":
            out.append(past[int(rng.choice(len(past), p=pfsp_p))])
        elif source == "community":
            out.append(community[int(rng.integers(len(community)))])
        else:
            out.append(source)
    return out
