"""Pruning a stage: which of its agents add nothing to the league, and why.

`plan_prune` is pure: it takes the agents, the stage's whole-history maximum-likelihood fit and
the curricula's start and final agents, and decides. `prune_stage` reads those from the league,
plans, and (unless it is a dry run) retires the plan's agents in one transaction. A retired
agent keeps its games, ratings and history; `league reactivate` brings it back. docs/prune.md
states the rules for people; in short:

Who is judged
    The pool is the stage's own agents that are not retired; the baselines play every stage and
    are never candidates. A pool agent with fewer than `min_games` rated games in the stage is
    kept, said so, and judged by nobody.

The reference
    The stage's champion; a stage without one is pruned against its best-rated judged agent.

What makes an agent a candidate for retirement
    below        its MLE rating is more than `margin` below the reference's, and the likelihood
                 that the reference is stronger (LOS) is at least `confidence`;
    duplicate    a newer version of its run (RUN-vN with a larger N), judged and not retired
                 before this prune, has a rating at least its own and a 95% interval that
                 overlaps its own. The newer version may be retired by the same prune: the older
                 one is then no better than something that is itself not worth keeping.

What keeps a candidate
    the reference; the `keep` best judged pool agents by MLE (so a stage keeps at least that many
    agents with enough games, however often it is pruned); and lineage anchors: an agent a
    curriculum stage started from or ended with, and the parent of an agent of another run that
    stays (is not retired, now or by this prune): where a run or a curriculum stage branched
    off. Within a run every version is the previous one's child, and the lineage graph keeps
    retired versions, so that link alone anchors nothing (else no run could ever be pruned);
    nor is a run's first version an anchor by itself (`random` and the other baselines hold
    the weak end of the league).

Properties (tests/test_prune.py): the reference, the baselines, the top `keep`, anchors and
agents with too few games are never retired; every retired agent meets its stated criterion;
pruning again with the same games retires nothing more; a larger margin, a higher confidence or
a larger `keep` never retires an agent a smaller one kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from league.errors import LeagueError
from league.lineage import build_lineage
from league.names import split_version
from league.ratings import MleRatings
from league.stores.agents import BASELINES
from league.stores.curricula import StageAgent

DEFAULT_KEEP = 5
DEFAULT_MARGIN = 100.0  # Elo: about a 64% expected score for the stronger side
DEFAULT_CONFIDENCE = 0.95
DEFAULT_MIN_GAMES = 10
MAX_KEEP = 1_000_000
MAX_MARGIN = 4000.0  # Elo: beyond any gap the fit can measure
MAX_MIN_GAMES = 1_000_000

# What a verdict's `because` says: why an agent is retired, or why a candidate is kept.
BELOW, DUPLICATE = "below", "duplicate"
TOO_FEW_GAMES, TOP, ANCHOR = "too-few-games", "top", "anchor"


@dataclass(frozen=True)
class PruneAgent:
    """What pruning needs to know of an agent (any stage, any status)."""

    name: str
    team_size: int | None  # None: a baseline that plays every stage
    status: str
    parent: str | None = None


@dataclass(frozen=True)
class Verdict:
    """One agent's line of a plan: its fit and why it goes (or why a candidate stays)."""

    name: str
    rating: float
    interval: tuple[float, float]  # 95%
    games: int
    because: str  # BELOW or DUPLICATE (retire); TOO_FEW_GAMES, TOP or ANCHOR (keep); "reference"
    reason: str


@dataclass(frozen=True)
class PrunePlan:
    team_size: int
    reference: Verdict | None  # the champion (because "champion") or the best-rated judged agent
    retire: tuple[Verdict, ...]
    keep: tuple[Verdict, ...]  # candidates kept, and agents with too few games to judge

    @property
    def retire_names(self) -> list[str]:
        return [v.name for v in self.retire]


def check_options(keep: int, margin: float, confidence: float, min_games: int) -> None:
    """Refuse, in one sentence, options outside their range."""
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= MAX_KEEP:
        raise LeagueError(f"--keep (the best agents always kept) must be a whole number from 0 to {MAX_KEEP}, "
                          f"got {keep!r}.")
    if not isinstance(margin, (int, float)) or not math.isfinite(margin) or not 0 <= margin <= MAX_MARGIN:
        raise LeagueError(f"--margin must be from 0 to {MAX_MARGIN:.0f} Elo, got {margin!r}.")
    if not isinstance(confidence, (int, float)) or not 0.5 <= confidence <= 1:  # NaN fails the comparison
        raise LeagueError(f"--confidence (the likelihood of superiority required) must be from 0.5 to 1, "
                          f"got {confidence!r}.")
    if isinstance(min_games, bool) or not isinstance(min_games, int) or not 1 <= min_games <= MAX_MIN_GAMES:
        raise LeagueError(f"--min-games must be a whole number from 1 to {MAX_MIN_GAMES}, got {min_games!r}.")


def run_of(name: str) -> str:
    """The run an agent belongs to: RUN for a version RUN-vN, else the agent's own name."""
    version = split_version(name)
    return version[0] if version else name


def plan_prune(agents: Sequence[PruneAgent], team_size: int, fit: MleRatings,
               curriculum_anchors: Mapping[str, str] | None = None, *, keep: int = DEFAULT_KEEP,
               margin: float = DEFAULT_MARGIN, confidence: float = DEFAULT_CONFIDENCE,
               min_games: int = DEFAULT_MIN_GAMES) -> PrunePlan:
    """Which of the stage's agents to retire and which candidates to keep (see the module's docstring).

    `agents` are every agent of the league in creation order (a parent before its children);
    `fit` is the stage's fit with every pool agent in it; `curriculum_anchors` maps an agent a
    curriculum stage started from or ended with to a few words saying which.
    """
    check_options(keep, margin, confidence, min_games)
    curriculum_anchors = curriculum_anchors or {}
    position = {}
    for i, a in enumerate(agents):
        if a.name in position:
            raise ValueError(f"agent {a.name!r} is listed twice")
        position[a.name] = i
    for a in agents:
        if a.parent is not None and position.get(a.parent, -1) >= position[a.name]:
            raise ValueError(f"the parent of {a.name!r} must come before it")
    pool = [a for a in agents if a.team_size == team_size and a.status != "retired" and a.name not in BASELINES]
    absent = [a.name for a in pool if a.name not in fit.names]
    if absent:
        raise ValueError(f"the fit has no rating for {absent[0]!r}")

    def verdict(name: str, because: str, reason: str) -> Verdict:
        return Verdict(name, fit.rating(name), fit.interval(name), int(fit.games[fit.index(name)]), because, reason)

    judged = [a for a in pool if fit.games[fit.index(a.name)] >= min_games]
    judged_names = {a.name for a in judged}
    # Best first; equal ratings go to more games, then to the newer agent (as the duplicate rule does).
    ranked = sorted(judged, key=lambda a: (-fit.rating(a.name), -fit.games[fit.index(a.name)], -position[a.name]))
    top = {a.name: i for i, a in enumerate(ranked[:keep], 1)}
    champion = next((a.name for a in pool if a.status == "champion"), None)
    reference = champion or (ranked[0].name if ranked else None)
    title = "champion" if champion else "best-rated"
    children: dict[str, list[PruneAgent]] = {}
    for a in agents:
        if a.parent is not None:
            children.setdefault(a.parent, []).append(a)

    retired: set[str] = set()
    retire: list[Verdict] = []
    kept: list[Verdict] = []
    for a in reversed(pool):  # newest first: an agent's children are decided before it
        if a.name == reference:
            continue
        if a.name not in judged_names:
            games = int(fit.games[fit.index(a.name)])
            kept.append(verdict(a.name, TOO_FEW_GAMES, f"too few rated games to judge ({games} of {min_games})"))
            continue
        criteria = []
        if reference is not None:
            gap, los = fit.rating(reference) - fit.rating(a.name), fit.los(reference, a.name)
            if gap > margin and los >= confidence:
                criteria.append((BELOW, f"below {title} {reference} by {gap:.0f} Elo, LOS {_floor3(los)}"))
        newer = _newer_equals(a, pool, judged_names, fit)
        if newer:
            staying = [b for b in newer if b not in retired]
            twin = (staying or newer)[0]
            criteria.append((DUPLICATE, f"near-duplicate of {twin} at {fit.rating(twin):.0f} (intervals overlap)"))
        if not criteria:
            continue
        why = "; ".join(text for _, text in criteria)
        protections = []
        if a.name in top:
            protections.append((TOP, f"#{top[a.name]} of the {keep} best by MLE"))
        anchor = curriculum_anchors.get(a.name) or next(
            (f"parent of {c.name}" for c in children.get(a.name, ())
             if c.status != "retired" and c.name not in retired and run_of(c.name) != run_of(a.name)), None)
        if anchor:
            protections.append((ANCHOR, f"lineage anchor ({anchor})"))
        if protections:
            kept.append(verdict(a.name, protections[0][0], f"{why}; kept: " + ", ".join(t for _, t in protections)))
        else:
            retired.add(a.name)
            retire.append(verdict(a.name, criteria[0][0], why))
    order = {a.name: i for i, a in enumerate(ranked)}  # best first; unjudged agents last, newest first
    key = lambda v: order.get(v.name, len(order))  # noqa: E731
    return PrunePlan(team_size=team_size,
                     reference=verdict(reference, "reference", title) if reference else None,
                     retire=tuple(sorted(retire, key=key)), keep=tuple(sorted(kept, key=key)))


def _newer_equals(agent: PruneAgent, pool: Sequence[PruneAgent], judged: set[str], fit: MleRatings) -> list[str]:
    """The judged pool versions of `agent`'s run newer than it, rated at least as high, whose 95%
    interval overlaps its own: newest first."""
    version = split_version(agent.name)
    if version is None:
        return []
    run, k = version
    rating, (low, high) = fit.rating(agent.name), fit.interval(agent.name)
    found = []
    for b in pool:
        vb = split_version(b.name)
        if vb is None or vb[0] != run or vb[1] <= k or b.name not in judged:
            continue
        b_low, b_high = fit.interval(b.name)
        if fit.rating(b.name) >= rating and b_low <= high and low <= b_high:
            found.append((vb[1], b.name))
    return [name for _, name in sorted(found, reverse=True)]


def _floor3(p: float) -> str:
    """A probability to three decimals, rounded down: 0.9996 shows as 0.999, never as a certain 1.000."""
    return f"{math.floor(p * 1000) / 1000:.3f}"


# --------------------------------------------------------------------------- the league


def curriculum_anchor_names(rows: Sequence[StageAgent]) -> dict[str, str]:
    """Agent -> which curriculum stage started from or ended with it (CurriculumStore.stage_agents)."""
    anchors: dict[str, str] = {}
    for r in rows:
        anchors.setdefault(r.agent, f"{r.role} agent of curriculum {r.curriculum}, stage {r.stage}")
    return anchors


def prune_stage(registry, team_size: int, *, keep: int = DEFAULT_KEEP, margin: float = DEFAULT_MARGIN,
                confidence: float = DEFAULT_CONFIDENCE, min_games: int = DEFAULT_MIN_GAMES,
                dry_run: bool = False) -> PrunePlan:
    """Plan the pruning of a stage of `registry` (a league.registry.Registry) and, unless `dry_run`,
    retire the plan's agents. A real run reads and writes in one transaction, so the plan is made
    from the league as it is when the agents are retired; a dry run writes nothing (a read-only
    registry will do)."""
    check_options(keep, margin, confidence, min_games)
    with nullcontext() if dry_run else registry.transaction():
        everyone = registry.agent_store.all(include_retired=True)
        graph = build_lineage(everyone)
        agents = [PruneAgent(a.name, a.team_size, a.status, next(iter(graph.predecessors(a.name)), None))
                  for a in everyone]
        pool = [a.name for a in agents if a.team_size == team_size and a.status != "retired"]
        plan = plan_prune(agents, team_size, registry.mle(team_size, names=pool),
                          curriculum_anchor_names(registry.curriculum_store.stage_agents()),
                          keep=keep, margin=margin, confidence=confidence, min_games=min_games)
        if not dry_run:
            for name in plan.retire_names:
                registry.agent_store.set_status(name, "retired")
    return plan
