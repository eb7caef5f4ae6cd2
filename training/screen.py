"""The title screen: the snapshots whose panel test the clock's share put off, a short match each before the title
round robin, so the run's late snapshots can still enter it.

The panel's share (panel.max_share) is spent by the middle of a 42-minute run when a candidate is level with a member
(one test took 980 games); every later snapshot then goes untested and cannot enter the title round robin, and in
run rb the two it never tested (rb-v120, rb-v126) were the only ones past Necto (+100, +87 over 200 games):

    opponents = screen_opponents(registry, 1, run="rb", teacher="necto", z=cfg.panel.z)
    # the teacher, the stage's champion, the run's best other snapshot that held its panel test
    result = play_screen(registry, [Player("rb-v120", ...), ...], [player(...) for o in opponents],
                         cfg.panel.screen_games, ...)
    result.entering(cfg.panel.screened)  # the best by mean score, at least half: they join the round robin

Every pair plays at once on one runner, argmax, recorded as evaluation games (the whole-history fit sees them). A
snapshot enters on its mean score over the opponents (each weighs the same; 20 games against each of three is about
45 Elo of noise, where snapshots of a run differ by 50-100), and only at half or more: the round robin's worst
matchup decides the title, and one below half against these three would not take it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.pairings import MatchResult
from league.config import OPENING_JITTER
from league.registry import Registry
from league.results import Record
from training.evaluation import Player, play_recorded
from training.panel import FALLBACK_MEMBER, best_held, best_tested


def screen_opponents(registry: Registry, team_size: int, *, run: str, teacher: str | None, z: float) -> list[str]:
    """Who the screen plays: the teacher, the stage's champion, and run `run`'s best snapshot other than the
    champion: the snapshots no member clearly beat in their panel tests (margin `z`) first, by the league's
    whole-history rating (`best_held`), then the others by Elo against their own tests. Active agents, each once.
    With none of them (no teacher, no champion, no test), the fallback member the panel has then."""
    active = {a.name for a in registry.agent_store.all(team_size)}
    champion = registry.agent_store.champion(team_size)
    chosen = list(dict.fromkeys(n for n in (teacher, champion.name if champion else None) if n and n in active))
    held = best_held(registry, team_size, run, active, z)
    ranked = [*held, *(n for n in best_tested(registry, run, active) if n not in held)]
    chosen += [n for n in ranked if n not in chosen][:1]  # the run's best is often the champion: then its next
    return chosen or [FALLBACK_MEMBER]


@dataclass(frozen=True)
class Screened:
    """One snapshot's screen: its record against each opponent."""

    name: str
    records: dict[str, Record]

    @property
    def score(self) -> float:
        """Its mean score over the opponents, each weighing the same."""
        scores = [r.score for r in self.records.values() if r.games]
        return sum(scores) / len(scores) if scores else 0.0


@dataclass(frozen=True)
class ScreenResult:
    screened: list[Screened]  # best first

    def entering(self, k: int) -> list[Screened]:
        """The `k` best that scored at least half: those that enter the title round robin."""
        return [s for s in self.screened if s.score >= 0.5][:k]

    @property
    def games(self) -> int:
        return sum(r.games for s in self.screened for r in s.records.values())


def play_screen(registry: Registry, candidates: Sequence[Player], opponents: Sequence[Player], games: int, *,
                team_size: int, game_seconds: float, seed: int, tick_skip: int = 8,
                workers: int | None = None, on_game: Callable[[MatchResult], None] | None = None,
                opening_jitter: float = OPENING_JITTER) -> ScreenResult:
    """`games` argmax games of every candidate against every opponent (none against itself), all on one runner,
    recorded as evaluation games; the candidates best first by mean score (ties: the later snapshot first, as
    `candidates` come oldest first). `on_game`: called with each game as it ends."""
    matchups = [(c, o) for c in candidates for o in opponents if c.name != o.name]
    goals = play_recorded(registry, matchups, games, team_size, game_seconds, seed, tick_skip, workers,
                          deterministic=True, on_game=on_game, opening_jitter=opening_jitter) if matchups and games else [[] for _ in matchups]
    records: dict[str, dict[str, Record]] = {c.name: {} for c in candidates}
    for (c, o), g in zip(matchups, goals):
        records[c.name][o.name] = Record.from_goals(g)
    screened = [Screened(c.name, records[c.name]) for c in reversed(candidates)]
    return ScreenResult(sorted(screened, key=lambda s: s.score, reverse=True))
