"""Gated promotion, the whole workflow: a candidate becomes its stage's champion only when an SPRT
match against the champion accepts H1 ("the candidate is at least elo1 better").

    result = promote_by_sprt(home, registry, cfg, "ppo-1v1-v13")   # SPRT and cap from cfg.promotion
    result.promoted, result.match.decision, result.promotion        # the promotions row

The match is an ordinary `league match CANDIDATE CHAMPION --sprt ...` (arena/match.py: recorded,
rated, resumable; its game clock is `promotion.game_seconds`). A stage without a champion is
tested against `rule`, the league's anchor baseline: a first champion must at least beat the
rule bot. H1 promotes; H0 and an inconclusive end leave the champion in place; either way the
decision, with the match and its statistics, is one `promotions` row written in the same
transaction as the status change (league/stores/promotions.py, the store). `league promote NAME
--sprt` comes here, and so does training (training/selfplay.py, with `promotion.during_training`)
through `promote_after_evaluation`.

Promotion during training: after a snapshot's evaluation games, the same test of the snapshot,
run synchronously, right after the evaluation it follows (so at most every
`training.eval_every_snapshots` snapshots), counted as evaluation time in the run's time split:
on a machine of a few cores a match beside the learner would only slow both. Two things keep
it cheap. The evaluation just played a few games against the same opponent, so a snapshot whose
evaluation score rate against it is below `promotion.training_min_score` is not tested at all;
and the match stops at `promotion.training_max_games` (an undecided match leaves the champion).
The decision is recorded with method 'training'. A test that cannot be played (the reference
retired, the champion changed during the match) is reported and training goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from arena.match import MatchOutcome, MatchRun, match_outcome, start_or_resume_match
from arena.tournament import MAX_ARENAS_PER_WORKER
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Agent, Promotion, Registry, SprtTest
from league.sprt import SprtParams
from league.sprt_verdict import sprt_verdict

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


def candidate(registry: Registry, name: str) -> Agent:
    """Agent `name`, which may be tested for its stage's champion: a baseline, which plays every
    stage, is refused."""
    agent = registry.agent_store.get(name)
    if agent.team_size is None:
        raise LeagueError(agent.not_champion())
    return agent


def exploitability_gate(registry: Registry, agent: Agent, most: float) -> None:
    """Refuse, in one sentence, a candidate whose latest probe (league probe) won more than `most` of its games
    against it, or that has no probe while the gate is on (`most` < 1: promotion.max_exploitability)."""
    if most >= 1.0:
        return
    probe = registry.probe_store.latest(agent.name, agent.team_size)
    if probe is None:
        raise LeagueError(f"promotion.max_exploitability is {most:g} and {agent.name!r} has no exploitability probe; "
                          f"run `league probe {agent.name}` first.")
    if probe.win_rate > most:
        raise LeagueError(f"{agent.name!r} is too exploitable to promote: its probe {probe.probe} won "
                          f"{probe.wins} of {probe.games} games ({probe.win_rate:.0%}), above "
                          f"promotion.max_exploitability {most:.0%}.")


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
    agent = candidate(registry, name)
    if agent.team_size != cfg.game.team_size:
        raise LeagueError(f"{name!r} is a {agent.stage} agent, but the config is for {cfg.stage}.")
    exploitability_gate(registry, agent, cfg.promotion.max_exploitability)
    champion = registry.agent_store.champion(agent.team_size)
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
    is_champion = registry.agent_store.get(name).status == "champion"
    return PromotionResult(name, opponent, before, match, promotion, is_champion,
                           already_recorded=recorded is not None)


# --------------------------------------------------------------------------- during training


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


def training_gate(registry: Registry, cfg: Config, name: str, rates: Mapping[str, float]) -> str | None:
    """Why snapshot `name`, whose evaluation scored `rates` (score rate per opponent), is not tested during
    training (its score against the champion, rule when there is none, below promotion.training_min_score),
    as a note; None: it is tested."""
    pcfg = cfg.promotion
    champion = registry.agent_store.champion(cfg.game.team_size)
    reference = champion.name if champion else REFERENCE_WITHOUT_CHAMPION
    score = rates.get(reference)
    if pcfg.training_min_score > 0 and score is None:
        return f"promotion: {name} not tested (its evaluation played no games against {reference})"
    if score is not None and score < pcfg.training_min_score:
        return (f"promotion: {name} not tested: it scored {score:.0%} against {reference} in evaluation, below "
                f"promotion.training_min_score {pcfg.training_min_score:.0%}")
    return None


def promote_after_evaluation(home: LeagueHome, registry: Registry, cfg: Config, name: str,
                             rates: Mapping[str, float], seed: int, workers: int = 1) -> TrainingPromotion:
    """Test snapshot `name`, whose evaluation scored `rates` (score rate per opponent), against its
    stage's champion when it passes the training gate (training_gate); promote on H1.
    `seed`: the match's (one per snapshot)."""
    note = training_gate(registry, cfg, name, rates)
    if note is not None:
        return TrainingPromotion(None, note)
    return promote_in_training(home, registry, cfg, name, seed, workers)


def promote_in_training(home: LeagueHome, registry: Registry, cfg: Config, name: str, seed: int,
                        workers: int = 1, max_games: int | None = None) -> TrainingPromotion:
    """The SPRT of snapshot `name` against its stage's champion (rule when there is none), capped at `max_games`
    (promotion.training_max_games when None: the run's share of the clock can leave less), recorded with method
    'training'; H1 promotes. `seed`: the match's."""
    pcfg = cfg.promotion
    champion = registry.agent_store.champion(cfg.game.team_size)
    reference = champion.name if champion else REFERENCE_WITHOUT_CHAMPION
    try:
        cap = pcfg.training_max_games if max_games is None else max_games
        result = promote_by_sprt(home, registry, dataclasses.replace(cfg, seed=seed), name, max_games=cap,
                                 method="training", workers=workers)
    except LeagueError as exc:
        return TrainingPromotion(None, f"promotion: {name} not tested: {exc}")
    m = result.match
    if m is None:  # cannot happen for a new snapshot; said rather than assumed
        return TrainingPromotion(result, f"promotion: {name} is already the champion")
    verdict = sprt_verdict(m.decision, m.max_games)
    stats = f"LLR {m.stats.llr:+.2f}, Elo {m.stats.elo:+.0f} in {m.stats.games} games (match {m.id})"
    if result.promoted:
        was = f" (was {result.champion_before})" if result.champion_before else ""
        return TrainingPromotion(result, f"promotion: {name} is now the {cfg.stage} champion{was}: {verdict} "
                                         f"against {reference}, {stats}")
    return TrainingPromotion(result, f"promotion: {name} not promoted: {verdict} against {reference}, {stats}")
