"""Promotion during training (`promotion.during_training`): after a snapshot's evaluation games, an
SPRT match of the snapshot against its stage's champion (rule while there is none) that promotes it on H1.

The match runs synchronously, right after the evaluation it follows (so at most every
`training.eval_every_snapshots` snapshots), counted as evaluation time in the run's time split:
on a machine of a few cores a match beside the learner would only slow both. Two things keep
it cheap. The evaluation just played a few games against the same opponent, so a snapshot whose
evaluation score rate against it is below `promotion.training_min_score` is not tested at all;
and the match stops at `promotion.training_max_games` (an undecided match leaves the champion).
The decision is recorded like `league promote --sprt`'s, with method 'training'
(arena/promotion.py). A test that cannot be played (the reference retired, the champion changed
during the match) is reported and training goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from arena.promotion import REFERENCE_WITHOUT_CHAMPION, PromotionResult, promote_by_sprt
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry


@dataclass(frozen=True)
class TrainingPromotion:
    """What the test after one evaluation did: its result (None: not tested) and one line saying so."""

    result: PromotionResult | None
    note: str

    def metrics(self) -> dict[str, float]:
        """The metrics row of a test played (empty when none was)."""
        if self.result is None or self.result.match is None:
            return {}
        stats = self.result.match.stats
        return {"promotion/promoted": float(self.result.promoted), "promotion/llr": float(stats.llr or 0.0),
                "promotion/games": float(stats.games)}


def promote_after_evaluation(home: LeagueHome, registry: Registry, cfg: Config, name: str,
                             rates: Mapping[str, float], seed: int, workers: int = 1) -> TrainingPromotion:
    """Test snapshot `name`, whose evaluation scored `rates` (score rate per opponent), against its
    stage's champion when its score against it reaches promotion.training_min_score; promote on H1.
    `seed`: the match's (one per snapshot)."""
    pcfg = cfg.promotion
    champion = registry.champion(cfg.game.team_size)
    reference = champion.name if champion else REFERENCE_WITHOUT_CHAMPION
    score = rates.get(reference)
    if pcfg.training_min_score > 0 and score is None:
        return TrainingPromotion(None, f"promotion: {name} not tested (its evaluation played no games against "
                                       f"{reference})")
    if score is not None and score < pcfg.training_min_score:
        return TrainingPromotion(None, f"promotion: {name} not tested: it scored {score:.0%} against {reference} in "
                                       f"evaluation, below promotion.training_min_score "
                                       f"{pcfg.training_min_score:.0%}")
    try:
        result = promote_by_sprt(home, registry, dataclasses.replace(cfg, seed=seed), name,
                                 max_games=pcfg.training_max_games, method="training", workers=workers)
    except LeagueError as exc:
        return TrainingPromotion(None, f"promotion: {name} not tested: {exc}")
    m = result.match
    if m is None:  # cannot happen for a new snapshot; said rather than assumed
        return TrainingPromotion(result, f"promotion: {name} is already the champion")
    stats = f"LLR {m.stats.llr:+.2f}, Elo {m.stats.elo:+.0f} in {m.stats.games} games (match {m.id})"
    if result.promoted:
        was = f" (was {result.champion_before})" if result.champion_before else ""
        return TrainingPromotion(result, f"promotion: {name} is now the {cfg.stage} champion{was}: H1 accepted "
                                         f"against {reference}, {stats}")
    verdict = "H0 accepted" if m.decision == "H0" else f"no decision within {m.max_games} games"
    return TrainingPromotion(result, f"promotion: {name} not promoted: {verdict} against {reference}, {stats}")
