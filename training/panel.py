"""The evaluation panel: a snapshot against the league's strongest members, enough games to tell them apart.

Six games a baseline (training.evaluation) place a snapshot on the ladder; at a teacher's level they
carry an interval of about 200 Elo, and a snapshot that beats its teacher may be weak against
everything else. The panel is who a champion must not lose to:

    members = panel_members(registry, team_size, "dn-v40", run="dn", teacher="necto", cfg=cfg.panel)
    # ["necto", "element", <the champion>, <its worst matchups in the round robin that crowned it>,
    #  <past champions>, <the run's best snapshots>, <other runs' best>]
    outcome = play_panel(registry, Player("dn-v40", policy), [player(...) for m in members], cfg.panel, ...)
    outcome.passed, outcome.beaten_by, outcome.records["necto"]

Games go in rounds of `panel.batch_games` against every member still in play, all on one runner,
argmax (as league games and the RLBot export play), recorded as evaluation games. After each round a
member against which the candidate scores below 50% by more than `panel.z` standard errors has beaten
it, and the test ends there (a weak snapshot costs a round or two); a member that has had
`panel.games` games leaves play, and so does one the candidate clearly beats (above 50% by more
than `panel.z` standard errors: the same margin, the other way). Simulated (docs/runs/distill.md),
that leaves the rule's pass rates as they were and plays 2-3.5 times fewer games in a passing test
against a panel of strong and weaker members, so the clock's share tests more snapshots. The
candidate passes when, all games played, it scored at least half against every member (the worst
matchup decides, never one opponent alone); the member it did worst against below that beat it too.
Whether it becomes the champion is then an SPRT against the champion (arena.promotion): the panel
says it loses to no one, the SPRT that it is better than the title holder.

The best snapshots are chosen among those whose own panel test (league.stores.panels) no member clearly
beat (passed, or out of games a little below half against one), by the league's whole-history rating
(every recorded game, panel games included), which compares snapshots that met different panels. A
league with no strong member yet (no community bot, no champion, no test) has rule-pro, the strongest
scripted baseline, on its panel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from arena.crown import latest_title, title_picks
from league.config import OPENING_JITTER, PanelConfig
from league.profile import crowning_of
from league.ratings import MleRatings
from league.registry import Registry
from league.results import Record
from league.sprt import elo_estimate
from league.standings import read_matchups
from league.stores.agents import Agent
from league.stores.panels import PanelTest
from training.evaluation import Player, play_recorded
from training.seeds import derived_seed

FALLBACK_MEMBER = "rule-pro"  # a panel with no strong member yet
TRAINED_KINDS = ("mlp", "lstm")


def beaten(record: Record, z: float) -> bool:
    """Whether `record` (the candidate's) says the member clearly beats it: its score is below 50% by more
    than `z` standard errors (league.sprt.elo_estimate's, over wins, draws and losses)."""
    if not record.games:
        return False
    return record.score + z * elo_estimate([record.losses, record.draws, record.wins]).score_se < 0.5


def outplayed(record: Record, z: float) -> bool:
    """Whether `record` (the candidate's) says it clearly beats the member: its score is above 50% by more than
    `z` standard errors. Such a member leaves play: more games would only confirm it."""
    if not record.games:
        return False
    return record.score - z * elo_estimate([record.losses, record.draws, record.wins]).score_se > 0.5


def held(test: PanelTest, z: float) -> bool:
    """Whether `test`'s candidate held its panel: no member clearly beat it (`beaten`). It passed, or its games ran
    out a little below half against a member (in run se, the champion se-v96 lost by 106 Elo to sc-v272, whose test
    had ended at 48% against one member over 200 games, and which therefore never sat on its panel)."""
    return test.passed or (test.total.games > 0 and not any(beaten(r, z) for r in test.records.values()))


def _rating(fit: MleRatings | None, name: str) -> float:
    """`name`'s whole-history rating in `fit`; below everyone's when it has none (no fit, or no game in it)."""
    return fit.rating(name) if fit is not None and name in fit.names else -math.inf


def _ranked(tests: Sequence[PanelTest], fit: MleRatings | None) -> list[str]:
    """Agents of `tests`, best first: by the league's whole-history rating (`fit`, every recorded game, panel games
    included: comparable across panels), then by Elo against their panel (latest test each). Elo against the panel
    each met alone favours early snapshots that met few and weaker members: in run se's home `sa-v64` (+174
    against two members) outranked `sc-v272` (+84 against seven), which the fit puts 100 Elo above it."""
    latest = {t.agent: t for t in tests}

    def strength(t: PanelTest) -> tuple[float, float]:
        return (_rating(fit, t.agent), t.elo)

    return [t.agent for t in sorted(latest.values(), key=strength, reverse=True)]


def panel_members(registry: Registry, team_size: int, candidate: str, *, run: str, teacher: str | None,
                  cfg: PanelConfig) -> list[str]:
    """Who `candidate` of training run `run` meets: its teacher, the community bots that play `team_size`,
    the stage's champion and its `cfg.past_champions` most recent past champions, each one's `cfg.nemeses`
    (the agents that did best against it in the title round robin that crowned it), the run's
    `cfg.best_snapshots` best and other runs' `cfg.other_runs` best by the league's rating (`_ranked`; of
    those no member clearly beat in their own test, `held`: passed, or ran out of games a little below half
    against a member; active agents, each once, never the candidate); rule-pro when none of these is there. A
    snapshot a member clearly beat never joins: the panel is the strong, and its games would be spent on the
    weak."""
    agents = {a.name: a for a in registry.agent_store.all(team_size)}  # active ones
    members: list[str] = []

    def add(name: str | None) -> None:
        if name and name != candidate and name in agents and name not in members:
            members.append(name)

    add(teacher)
    for a in agents.values():
        if a.kind == "community" and a.plays(team_size):
            add(a.name)
    champion = registry.agent_store.champion(team_size)
    add(champion.name if champion else None)
    picks = title_picks(registry, team_size) if cfg.nemeses else {}  # read once for every holder below
    for name in (nemeses(registry, champion, cfg.nemeses, picks) if champion else []):
        add(name)
    past = dict.fromkeys(p.agent for p in reversed(registry.promotion_store.for_stage(team_size)) if p.promoted)
    recent = [n for n in past if n in agents and n not in members and n != candidate][:cfg.past_champions]
    for name in recent:
        add(name)
    for name in recent:  # their weak spots too: a new champion that beats the holder's forgets theirs
        for nemesis in nemeses(registry, agents[name], cfg.nemeses, picks):
            add(nemesis)
    tests = [t for t in registry.panel_store.for_stage(team_size) if held(t, cfg.z)]
    fit: MleRatings | None = None  # the whole-history fit, made only when there is more than one to choose from
    for mine, k in ((True, cfg.best_snapshots), (False, cfg.other_runs)):
        pool = [t for t in tests if (t.run == run) == mine and t.agent in agents and t.agent not in members
                and t.agent != candidate]
        if fit is None and k and len({t.agent for t in pool}) > k:
            fit = registry.mle(team_size)
        for name in _ranked(pool, fit)[:k]:
            add(name)
    if not members:
        add(FALLBACK_MEMBER)
    return members


def nemeses(registry: Registry, champion: Agent, k: int, picks: dict[int, str] | None = None) -> list[str]:
    """The `k` agents that scored best against `champion` in the latest title round robin it took or kept the title
    in (`picks`: arena.crown.title_picks, read here when not given; else the round robin a promotion names, `league
    crown` of any round robin) and its playoff (the round robin a playoff was of, or the playoff of a round robin;
    records added up): active ones, the weakest matchup first. A champion no round robin crowned or kept has none.
    Champions form cycles (`sc-v272` < `si-v244` < `sa-v100` < `sc-v272` on fresh seeds), so who beats the holder
    belongs on the panel as much as the holder does."""
    if not k:
        return []
    if picks is None:
        picks = title_picks(registry, champion.team_size)
    held = latest_title(picks, champion.name)
    if held is None:
        crowned, _, _ = crowning_of(registry, champion)
        held = crowned.tournament_id if crowned is not None else None
    if held is None:
        return []
    tournaments = registry.tournament_store
    playoff_of = tournaments.get(held).playoff_of
    records: dict[str, Record] = {}
    for tid in (held, playoff_of if playoff_of is not None else tournaments.finished_playoff_of(held)):
        if tid is None:
            continue
        for (a, b), record in read_matchups(registry.db, champion.team_size, int(tid)).items():
            if a == champion.name:
                records[b] = records.get(b, Record(0, 0, 0)) + record
    active = {a.name for a in registry.agent_store.all(champion.team_size)}
    worst = sorted((r.score, name) for name, r in records.items() if name in active and name != champion.name)
    return [name for _, name in worst[:k]]


def best_held(registry: Registry, team_size: int, run: str, active: set[str], z: float) -> list[str]:
    """Run `run`'s snapshots among `active` whose own panel test no member clearly beat (`held`), best first by the
    league's whole-history rating (`_ranked`), as the panel chooses its best snapshots. Elo against the members each
    test met is no measure across tests: in the chunk that crowned sb-v128 the run's best by it was its last, beaten
    snapshot sb-v140, which sb-v128 beats by 203 Elo on fresh seeds."""
    pool = [t for t in registry.panel_store.for_run(run) if t.agent in active and held(t, z)]
    return _ranked(pool, registry.mle(team_size) if len({t.agent for t in pool}) > 1 else None)


def best_tested(registry: Registry, run: str, active: set[str]) -> list[str]:
    """Run `run`'s snapshots among `active` by Elo against their own panel tests (latest test each), best first."""
    latest = {t.agent: t for t in registry.panel_store.for_run(run)}
    return [t.agent for t in sorted(latest.values(), key=lambda t: t.elo, reverse=True) if t.agent in active]


class TitleField(NamedTuple):
    """Who plays a run's title round robin (`entrants`), and the panel members the bound left out (`left_out`)."""

    entrants: list[str]
    left_out: list[str]


def title_entrants(registry: Registry, team_size: int, last: str, *, run: str, teacher: str | None,
                   cfg: PanelConfig, screened: Sequence[str] = ()) -> TitleField:
    """Who plays the title round robin at the end of training run `run` (arena/crown.py): the panel its last
    snapshot `last` met (`panel_members`, the champion among them), `last` itself, the run's `cfg.title_snapshots`
    best by Elo against their own panel tests (`best_tested`), beaten or not, and the snapshots the title screen let
    in (`screened`: training.screen); active agents, each once. A snapshot a member beat may still lose least to
    everyone else: every snapshot of run sh met a member that beat it, yet its last won the round robin of the
    league's twelve strongest by points.

    At most `cfg.title_entrants` of them (0: no bound; a round robin's games grow with the square of its entrants):
    the run's own, the title holder, the teacher and the stage's community bots always play, and the rest of the
    panel by the league's whole-history rating, best first, fill the places left. At 2v2 the panel had grown to
    twelve, and a round robin of 16 entrants cost more than the 22 minutes of training before it, while its weakest
    members (the chain's past champions and their nemeses) decided no pick: read again without the weakest by rating,
    its table and the 12 entrants' before it crown the same snapshot down to 10 entrants (docs/runs/distill.md,
    thirtieth round)."""
    members = panel_members(registry, team_size, last, run=run, teacher=teacher, cfg=cfg)
    active = {a.name: a for a in registry.agent_store.all(team_size)}
    own = [last, *best_tested(registry, run, set(active))[:cfg.title_snapshots], *screened]
    names = list(dict.fromkeys(n for n in [*members, *own] if n == last or n in active))
    if not cfg.title_entrants or len(names) <= cfg.title_entrants:
        return TitleField(names, [])
    champion = registry.agent_store.champion(team_size)
    always = {*own, teacher, champion.name if champion else None,
              *(n for n, a in active.items() if a.kind == "community" and a.plays(team_size))}
    fit = registry.mle(team_size)
    rest = sorted((n for n in names if n not in always), key=lambda n: _rating(fit, n), reverse=True)
    places = max(0, cfg.title_entrants - sum(n in always for n in names))
    kept = {n for n in names if n in always} | set(rest[:places])
    return TitleField([n for n in names if n in kept], rest[places:])


@dataclass(frozen=True)
class PanelOutcome:
    """What a candidate's panel test gave: its record against each member, and who (if anyone) beat it."""

    records: dict[str, Record]
    beaten_by: str | None
    rounds: int
    cut_short: bool = False  # ended undecided, its run's share of the clock spent (play_panel's `stop`)

    @property
    def passed(self) -> bool:
        return self.beaten_by is None and not self.cut_short

    @property
    def games(self) -> int:
        return sum(r.games for r in self.records.values())


def play_panel(registry: Registry, candidate: Player, members: Sequence[Player], cfg: PanelConfig, *,
               team_size: int, game_seconds: float, seed: int, tick_skip: int = 8,
               workers: int | None = None, opening_jitter: float = OPENING_JITTER,
               stop: Callable[[], bool] | None = None) -> PanelOutcome:
    """Play `candidate` against every member in rounds until one beats it or each has had `cfg.games` games
    (see the module notes); every game recorded as an evaluation game. `seed`: this test's (each round
    plays its own, derived from it). `stop`, asked after each round: whether the test must end there, undecided
    (`cut_short`, not passed): its run's share of the clock is spent (panel.max_share)."""
    records = {m.name: Record(0, 0, 0) for m in members}
    in_play = [m for m in members if cfg.games]
    rounds = 0
    while in_play:
        n = min(cfg.batch_games, cfg.games - max(records[m.name].games for m in in_play))
        goals = play_recorded(registry, [(candidate, m) for m in in_play], n, team_size, game_seconds,
                              derived_seed(seed, "panel round", rounds), tick_skip, workers, deterministic=True,
                              opening_jitter=opening_jitter)
        rounds += 1
        for m, g in zip(in_play, goals):
            records[m.name] = records[m.name] + Record.from_goals(g)
        beaters = [m.name for m in in_play if beaten(records[m.name], cfg.z)]
        if beaters:
            return PanelOutcome(records, min(beaters, key=lambda name: records[name].score), rounds)
        in_play = [m for m in in_play if records[m.name].games < cfg.games and not outplayed(records[m.name], cfg.z)]
        if in_play and stop is not None and stop():
            return PanelOutcome(records, None, rounds, cut_short=True)
    worst = min(records, key=lambda name: records[name].score, default=None)
    held = worst is not None and records[worst].score < 0.5  # it must score half against every member
    return PanelOutcome(records, worst if held else None, rounds)
