"""The title round robin: strong agents play every pair, and the one whose worst matchup is best holds the title.

    tid = open_title_round_robin(registry, cfg, ["necto", "element", "se-v96", "sh-v259"], games_per_pair=40, seed=7)
    play_title_round_robin(registry, home, cfg, tid, workers=2)
    crowning = crown(registry, tid)   # crowning.pick, crowning.promotion (None: the title stayed)

Strength among strong snapshots is not a ladder: in a round robin of a league's twelve strongest agents
(docs/runs/distill.md) the champion, which had passed its panel and beaten the title holder of its day,
lost clearly to three of them, and the run's last snapshot, which beat it by 76 Elo, lost to a fourth. A
challenger is tested against the panel of its day; the title holder is never tested again. Here every
entrant (the title holder among them) meets every other on the same games, and the title goes to the
entrant whose worst matchup is best (maximin over the payoff table: the one that loses least to anyone,
the league's closest thing to "no member beats it"), ties to the better score over all its games, then to
the title holder. Only a stage agent can hold the title: a community bot or a baseline may play, and
judge, but not take it. The title holder, when the stage has one, must be an entrant: a round robin
without it says nothing about it.

A title is decided from a finished round robin in which every pair met (`league crown --tournament ID`,
after any `league tournament`), and at the end of a run that promotes during training
(training/judge.py), among the panel and the run's best snapshots.

**The playoff.** Forty games a pair put about 7 points of noise on a score, and the worst of a dozen such
scores is noisier still: in run si's round robin the run's last snapshot and an older one tied at 37.5%, and on
fresh seeds the one the tie-break crowned lost to the other by 60 Elo. When eligible entrants' worst matchups lie
within `panel.playoff_margin` of the best, the best `panel.playoff_contenders` of those contenders play a second round robin
(`open_playoff(registry, cfg, crowning)`) with each one's worst opponents of the first, more games a pair;
only a contender may take the title there (recorded with the playoff, so `league crown --tournament ID` of the
playoff decides the same). The playoff decides on its games and its entrants' games of the round robin together
(league.standings.read_title_matchups): it plays on, it does not start over. Alone, run wa's playoff of 100 games a
pair took the title from wa-v164, the round robin's pick, for wa-v108, which wa-v164 beats by 69 Elo on fresh seeds
(+25 over the 400 games of its SPRT in the run); the 140 games a pair of both crown wa-v164.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.tournament import open_tournament, run_tournament
from arena.tournament_play import GameOutcome
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry
from league.results import Record
from league.standings import read_title_matchups
from league.stores.promotions import Promotion
from league.stores.tournaments import TITLE_PLAYOFF_KEY, round_robin_name

TITLE_NAME = "title round robin"  # in the name of every round robin open_title_round_robin opens


@dataclass(frozen=True)
class Entrant:
    """One entrant of a title round robin: its worst matchup, and its score over all its games."""

    name: str
    worst: float  # its score (wins + draws / 2 over games) against the entrant it did worst against
    worst_against: str
    points: float  # its score over all its games
    games: int
    eligible: bool  # may hold the title: a stage agent (a community bot or a baseline may not)
    records: dict[str, Record] = field(default_factory=dict, compare=False)  # its record against each other entrant

    def key(self) -> tuple[float, float]:
        return self.worst, self.points


@dataclass(frozen=True)
class Crowning:
    """What a title round robin decided: its entrants best first, the pick, and the title's change (if any)."""

    tournament_id: int
    entrants: tuple[Entrant, ...]
    pick: str | None  # the eligible entrant with the best worst matchup (None: no entrant may hold the title)
    held_by: str | None  # the title holder when the title was decided
    promotion: Promotion | None  # None: the title stayed where it was
    playoff_of: int | None = None  # this round robin is the playoff of that one (Tournament.playoff_of)

    @property
    def holder(self) -> str | None:
        """Who holds the title now."""
        return self.promotion.agent if self.promotion else self.held_by

    @property
    def round_robin(self) -> str:
        """The round robin as said ("round robin 158 (the playoff of round robin 157)")."""
        return round_robin_name(self.tournament_id, self.playoff_of)

    def entrant(self, name: str) -> Entrant:
        return next(e for e in self.entrants if e.name == name)

    def summary(self) -> str:
        """One sentence: who holds the title, and its worst matchup."""
        if self.holder is None:
            return f"No entrant of round robin {self.tournament_id} may hold the title; the stage has no champion."
        e = self.entrant(self.holder)
        why = f"worst matchup {e.worst:.0%} (against {e.worst_against}), {e.points:.0%} over {e.games} games"
        what = self.round_robin
        if self.promotion is not None:
            was = f", from {self.held_by}" if self.held_by else ""
            return f"{what[0].upper()}{what[1:]} crowned {self.holder}{was}: {why}."
        return f"The title stays with {self.holder} after {what}: {why}."

    def contenders(self, margin: float, most: int) -> list[str]:
        """The eligible entrants whose worst matchup is within `margin` of the best one's, best first, `most` at most.
        Within means at most `margin` behind: 18 games in 40 are 0.1 behind 22, although 0.55 - 0.1 > 0.45 in floats."""
        eligible = [e for e in self.entrants if e.eligible]
        reach = eligible[0].worst - margin - 1e-9 if eligible else 0.0
        return [e.name for e in eligible if e.worst >= reach][:most]


def title_picks(registry: Registry, team_size: int) -> dict[int, str]:
    """Each finished title round robin or playoff (open_title_round_robin's) at `team_size`, newest first, and its
    pick: the agent it crowned, or the holder it kept the title with (an SPRT during training, then the run's round
    robin). Read once per panel, since reading a table reads every game of it."""
    picks: dict[int, str] = {}
    for t in reversed(registry.tournament_store.all()):
        titled = TITLE_NAME in t.name or t.title_playoff is not None
        if t.status != "finished" or t.team_size != team_size or not titled:
            continue
        try:
            pick = next((e.name for e in title_table(registry, t.id) if e.eligible), None)
        except LeagueError:  # a pair never met: it decides nothing
            continue
        if pick is not None:
            picks[t.id] = pick
    return picks


def latest_title(picks: dict[int, str], agent: str) -> int | None:
    """The newest title round robin of `picks` (title_picks) whose pick was `agent`; None when none was."""
    return next((tid for tid, pick in picks.items() if pick == agent), None)


@dataclass(frozen=True)
class KeptTitle:
    """A title round robin that kept the title with its holder, and the holder's record against each entrant."""

    tournament_id: int
    name: str  # as said ("round robin 211 (the playoff of round robin 210)")
    created: str
    records: dict[str, Record]


def title_kept(registry: Registry, agent: str, team_size: int, crowned_in: int | None) -> KeptTitle | None:
    """The newest title round robin (or playoff) at `team_size` whose pick was `agent`, when it is not the one that
    crowned it (`crowned_in`): the round robin that kept the title with it (an SPRT promoted it during a run, then
    the run's round robin kept it); None when none did. Reads every title round robin (title_picks)."""
    kept = latest_title(title_picks(registry, team_size), agent)
    if kept is None or kept == crowned_in:
        return None
    t = registry.tournament_store.get(kept)
    records = {b: r for (a, b), r in read_title_matchups(registry.db, t).items() if a == agent}
    return KeptTitle(kept, round_robin_name(kept, t.playoff_of), t.created, records)


def title_table(registry: Registry, tournament_id: int) -> list[Entrant]:
    """The entrants of finished round robin `tournament_id`, best first (see the module notes); a LeagueError when
    it is unfinished, of mixed teams, or a pair of its entrants never met."""
    t = registry.tournament_store.get(tournament_id)
    if t.status != "finished":
        raise LeagueError(f"Tournament {tournament_id} is {t.status}: a title is decided from a finished round robin.")
    if any("+" in name for name in t.entrants):
        raise LeagueError(f"Tournament {tournament_id} is a round robin of mixed teams; a title goes to one agent.")
    if len(t.entrants) < 2:
        raise LeagueError(f"Tournament {tournament_id} has {len(t.entrants)} entrant; a title needs two or more.")
    matchups = read_title_matchups(registry.db, t)
    unmet = [(a, b) for a in t.entrants for b in t.entrants if a != b and (a, b) not in matchups]
    if unmet:
        raise LeagueError(f"In tournament {tournament_id} {unmet[0][0]} never met {unmet[0][1]}: a title needs every "
                          "pair of entrants to have played.")
    contenders = (t.title_playoff or {}).get("contenders")
    table = []
    for name in t.entrants:
        records = {b: matchups[name, b] for b in t.entrants if b != name}
        worst = min(records, key=lambda b: records[b].score)
        total = sum(records.values(), Record(0, 0, 0))
        agent = registry.agent_store.get(name)
        table.append(Entrant(name, records[worst].score, worst, total.score, total.games,
                             agent.team_size == t.team_size and (contenders is None or name in contenders), records))
    return sorted(table, key=Entrant.key, reverse=True)


def crown(registry: Registry, tournament_id: int) -> Crowning:
    """Decide the title from finished round robin `tournament_id` (see the module notes) and record it: the pick
    becomes its stage's champion unless it already is, or the title holder does at least as well."""
    t = registry.tournament_store.get(tournament_id)
    table = title_table(registry, tournament_id)
    playoff = registry.tournament_store.finished_playoff_of(tournament_id)
    if playoff is not None:  # crowning the round robin again would undo what its playoff decided
        raise LeagueError(f"Round robin {tournament_id} went to a playoff, round robin {playoff}, which decides "
                          f"its title: `league crown --tournament {playoff}`; to play on: `league crown --tournament "
                          f"{playoff} --playoff --games N`.")
    champion = registry.agent_store.champion(t.team_size)
    held_by = champion.name if champion else None
    if held_by is not None and held_by not in t.entrants:
        raise LeagueError(f"Round robin {tournament_id} does not hold the {champion.stage} champion {held_by}: a title "
                          "round robin must include the title holder.")
    pick = next((e for e in table if e.eligible), None)
    promotion = None
    if pick is not None and pick.name != held_by:
        holder = next((e for e in table if e.name == held_by), None)
        if holder is None or pick.key() > holder.key():
            promotion = registry.promotion_store.crown(pick.name, tournament_id, held_by)
    return Crowning(tournament_id, tuple(table), pick.name if pick else None, held_by, promotion,
                    t.playoff_of)


def playoff_entrants(crowning: Crowning, margin: float, most: int,
                     opponents: int = 2) -> tuple[list[str], list[str]] | None:
    """(contenders, entrants) of the playoff after `crowning`: the best `most` eligible entrants within `margin` of
    the best worst matchup, and beside them each one's `opponents` worst opponents of the round robin (a contender's
    weakness must be measured again, not only its rivals); None when fewer than two contend, or when the best worst
    matchup is nil: every contender lost every game to someone (a run of a few minutes against Necto), and more
    games would only measure noise at the floor, at minutes of games (1,000 in such a run's playoff of five)."""
    contenders = crowning.contenders(margin, most)
    if len(contenders) < 2 or crowning.entrant(contenders[0]).worst <= 0.0:
        return None
    return contenders, list(dict.fromkeys([*contenders, *(b for c in contenders
                                                            for b in _worst_opponents(crowning, c, opponents))]))


@dataclass(frozen=True)
class Playoff:
    """A title playoff opened after a round robin: its tournament, who may take the title, and who plays."""

    id: int
    contenders: list[str]
    entrants: list[str]


def open_playoff(registry: Registry, cfg: Config, crowning: Crowning) -> Playoff | None:
    """The playoff of `crowning`'s round robin (`cfg.panel.playoff_*`, at `cfg`'s seed and game clock), opened or
    found unfinished; None when fewer than two entrants contend."""
    panel = cfg.panel
    chosen = playoff_entrants(crowning, panel.playoff_margin, panel.playoff_contenders)
    if chosen is None:
        return None
    contenders, entrants = chosen
    pid = open_title_round_robin(registry, cfg, entrants, games_per_pair=panel.playoff_games, seed=cfg.seed,
                                 playoff_of=crowning.tournament_id, contenders=contenders)
    return Playoff(pid, contenders, entrants)


def _worst_opponents(crowning: Crowning, name: str, n: int) -> list[str]:
    records = crowning.entrant(name).records
    return sorted(records, key=lambda b: records[b].score)[:n]


def open_title_round_robin(registry: Registry, cfg: Config, entrants: Sequence[str], *, games_per_pair: int,
                           seed: int, playoff_of: int | None = None, contenders: Sequence[str] = ()) -> int:
    """The id of a round robin of `entrants` at `cfg`'s team size and game clock, `games_per_pair` games a pair
    (mirrored); the same call after an interruption finds the unfinished one. With `playoff_of`, it is that
    round robin's playoff, where only `contenders` may take the title."""
    team_size = cfg.game.team_size
    registry.game_store.check_usable(team_size, list(entrants))
    name = f"{team_size}v{team_size} {TITLE_NAME}"
    extra = None
    if playoff_of is not None:
        name = f"{team_size}v{team_size} title playoff of round robin {playoff_of}"
        extra = {TITLE_PLAYOFF_KEY: {"of": playoff_of, "contenders": list(contenders)}}
    tid, _ = open_tournament(registry, cfg, team_size, games_per_pair, seed, list(entrants), name=name, extra=extra)
    return tid


def play_title_round_robin(registry: Registry, home: LeagueHome, cfg: Config, tournament_id: int, *, workers: int,
                           on_game: Callable[[GameOutcome], None] | None = None) -> None:
    """Play the pending games of round robin `tournament_id`, every game recorded with its replay (an interrupted
    one is resumed here, or by `league tournament --resume ID`)."""
    for outcome in run_tournament(registry, home, tournament_id, workers, cfg.game.game_seconds, cfg.game.tick_skip):
        if on_game is not None:
            on_game(outcome)
