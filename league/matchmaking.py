"""Choosing self-play opponents: pure functions over names, scores and a random generator.

The structure follows AlphaStar's league: the opponent choice (`pfsp_weights`, a function of
the learner's score against each candidate under a named weighting: a draw half a win, as
league.results counts it) is kept apart from the bookkeeping of results (the payoff table in
the registry, whose records score league.results.UNPLAYED_SCORE, 0.5, for unplayed pairs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

# How strongly prioritized fictitious self-play favours opponents the learner struggles with.
PFSP_WEIGHTINGS = {
    "hard": lambda p: (1.0 - p) ** 2,  # AlphaStar's "squared": mostly the opponents that beat us
    "variance": lambda p: p * (1.0 - p),  # the opponents we beat about half the time
    "linear": lambda p: 1.0 - p,
    "even": lambda p: np.ones_like(p),
}

# Opponent sources a mix can name.
SOURCES = ("latest", "past", "pfsp", "rule", "random", "community", "panel")


def pfsp_weights(scores: Sequence[float], weighting: str = "hard") -> np.ndarray:
    """Sampling probabilities over candidates from the learner's scores against them.

    Falls back to uniform when every weight is zero (e.g. the learner beats everyone).
    """
    if weighting not in PFSP_WEIGHTINGS:
        raise ValueError(f"unknown PFSP weighting {weighting!r}; expected one of {', '.join(PFSP_WEIGHTINGS)}")
    p = np.clip(np.asarray(scores, dtype=np.float64), 0.0, 1.0)
    if p.size == 0:
        return p
    w = np.asarray(PFSP_WEIGHTINGS[weighting](p), dtype=np.float64)
    total = w.sum()
    return w / total if total > 0 else np.full(p.size, 1.0 / p.size)


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
    past_scores: Sequence[float],
    baselines: Sequence[str],
    rng: np.random.Generator,
    weighting: str = "hard",
    community: Sequence[str] = (),
    panel: Sequence[str] = (),
    panel_scores: Sequence[float] = (),
) -> list[str]:
    """Names of `n` opponents drawn by the mix: latest self, uniform past, PFSP past, baselines,
    community bots, PFSP over the evaluation panel.

    `past` are the learner's earlier (non-retired) versions with the learner's score
    against each in `past_scores`; `baselines` are the active baseline names available;
    `community` the active community bots that play this team size (one drawn uniformly);
    `panel` the evaluation panel's members with the learner's score against each in `panel_scores`.
    """
    available = {"past": len(past) > 0, "pfsp": len(past) > 0, "rule": "rule" in baselines,
                 "random": "random" in baselines, "community": len(community) > 0, "panel": len(panel) > 0}
    shares = normalized_mix(mix, available)
    sources = list(shares)
    picks = rng.choice(len(sources), size=n, p=np.array([shares[s] for s in sources]))
    out: list[str] = []
    pfsp_p = pfsp_weights(past_scores, weighting) if past else None
    panel_p = pfsp_weights(panel_scores, weighting) if panel else None
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
        elif source == "panel":
            out.append(panel[int(rng.choice(len(panel), p=panel_p))])
        else:
            out.append(source)
    return out
