"""Gated promotion: a candidate becomes its stage's champion only when an SPRT match against the
champion accepts H1 ("the candidate is at least elo1 better").

    result = promote_by_sprt(home, registry, cfg, "ppo-1v1-v13")   # SPRT and cap from cfg.promotion
    result.promoted, result.match.decision, result.promotion        # the promotions row

The match is an ordinary `league match CANDIDATE CHAMPION --sprt ...` (arena/match.py: recorded,
rated, resumable; its game clock is `promotion.game_seconds`). A stage without a champion is
tested against `rule`, the league's anchor baseline: a first champion must at least beat the
rule bot. H1 promotes; H0 and an inconclusive end leave the champion in place; either way the
decision, with the match and its statistics, is one `promotions` row written in the same
transaction as the status change (league/stores/promotions.py). `league promote NAME --sprt`
and training (training/selfplay.py, with `promotion.during_training`) both come here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass


from arena.match import MatchOutcome, MatchRun, match_outcome, start_or_resume_match
from arena.tournament import MAX_ARENAS_PER_WORKER
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Promotion, Registry, SprtTest
from league.sprt import SprtParams

REFERENCE_WITHOUT_CHAMPION = "rule"  # what a candidate is tested against in a stage with no champion


@dataclass(frozen=True)
class PromotionResult:
    """What a promotion test did: the match (None when the candidate already was the champion)
    and the promotions row recording its decision."""

    candidate: str
    opponent: str  # the champion tested against, or REFERENCE_WITHOUT_CHAMPION
    champion_before: str | None
    match: MatchOutcome | None
    promotion: Promotion | None
    is_champion: bool  # whether the candidate is its stage's champion now (what `league promote`'s exit code says)
    already_recorded: bool = False  # this very match was decided and recorded before (nothing was played)

    @property
    def promoted(self) -> bool:
        """Whether this test's H1 made the candidate champion."""
        return self.promotion is not None and self.promotion.promoted

    @property
    def already_champion(self) -> bool:
        return self.match is None


def _play_quietly(run: MatchRun) -> None:
    for _ in run.batches:
        pass


def promotion_config(cfg: Config, seed: int | None = None) -> Config:
    """`cfg` with the game clock of a promotion match (`promotion.game_seconds`) and, given, another seed."""
    game = dataclasses.replace(cfg.game, game_seconds=cfg.promotion.game_seconds)
    return dataclasses.replace(cfg, game=game, seed=cfg.seed if seed is None else seed)


def sprt_test(match: MatchOutcome) -> SprtTest:
    """The statistics a promotions row keeps of a finished SPRT match."""
    if match.decision is None:
        raise LeagueError(f"Match {match.id} has not ended ({match.status}); run it to its end first.")
    s = match.stats
    return SprtTest(match.id, match.decision, s.llr, s.elo, s.elo_lo, s.elo_hi, s.los, s.games)


def promote_by_sprt(home: LeagueHome, registry: Registry, cfg: Config, name: str, params: SprtParams | None = None,
                    max_games: int | None = None, *, method: str = "sprt", batch_pairs: int | None = None,
                    workers: int = 1, max_arenas: int = MAX_ARENAS_PER_WORKER,
                    play: Callable[[MatchRun], object] | None = None) -> PromotionResult:
    """Test agent `name` against its stage's champion (rule when there is none) in an SPRT match,
    `params` and `max_games` defaulting to `cfg.promotion`'s, the game clock promotion.game_seconds,
    the seed cfg.seed; promote it on H1. Records the decision ('sprt' from the command, 'training'
    from a training run). Asked again with the same arguments, it resumes an interrupted match, or
    returns the decision already recorded for the finished one without playing. `play` plays the
    match's batches (`league promote` shows them); by default they are played quietly."""
    params = params if params is not None else SprtParams.parse(cfg.promotion.sprt)
    max_games = max_games if max_games is not None else cfg.promotion.max_games
    agent = registry.agent(name)
    if agent.team_size is None:
        raise LeagueError(f"{name!r} is a baseline that plays every stage; only a stage's own agents can be champion.")
    if agent.team_size != cfg.game.team_size:
        raise LeagueError(f"{name!r} is a {agent.stage} agent, but the config is for {cfg.stage}.")
    champion = registry.champion(agent.team_size)
    if champion is not None and champion.name == name:
        return PromotionResult(name, name, name, None, None, is_champion=True)
    before = champion.name if champion else None
    opponent = before or REFERENCE_WITHOUT_CHAMPION
    # What run_sprt_match does, with the batches handed to `play`.
    run = start_or_resume_match(registry, home, promotion_config(cfg), name, opponent, params=params,
                                max_games=max_games, batch_pairs=batch_pairs, workers=workers, max_arenas=max_arenas)
    (play or _play_quietly)(run)
    match = match_outcome(registry, run.id)
    recorded = registry.promotion_store.for_match(match.id)
    if recorded is None:
        promotion = registry.promotion_store.record_test(name, method, sprt_test(match), before)
    else:
        promotion = recorded
    return PromotionResult(name, opponent, before, match, promotion, registry.agent(name).status == "champion",
                           already_recorded=recorded is not None)
