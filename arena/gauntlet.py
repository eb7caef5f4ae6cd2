"""A gauntlet: one agent against each of several opponents, a fixed match each, and whether it held.

"The champion scores at least half against every strong agent" is a claim about a table of matches, not
one: a gauntlet plays it. Each opponent is an ordinary match (arena.match: mirrored pairs, recorded and
rated, resumed by the same command), so a gauntlet run again shows the matches it already played and
plays only what is missing:

    rows = [gauntlet_row(registry, match_outcome(registry, match_id)) for match_id in ...]
    verdict = GauntletVerdict.of(name, rows)
    verdict.held          # at least half against every opponent
    verdict.text()        # "run-v92 held: at least half against all 7; worst necto 52.5% (level)."

A score at or above half is what the target asks of every matchup; the 95% interval of the Elo says how
sure each one is: "clearly" behind (or ahead) when the interval lies wholly below (or above) even. Between
near-equals 200 games put about 25 Elo of noise on each matchup, so a table of level matchups can read
below half somewhere by chance; the verdict names those apart from the ones lost clearly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.match import MatchOutcome
from league.registry import Registry
from league.results import Record
from league.standings import read_matchups


@dataclass(frozen=True)
class GauntletRow:
    """The agent's match against one opponent: its record, score and Elo with the 95% interval."""

    opponent: str
    match_id: int
    record: Record
    elo: float
    elo_lo: float
    elo_hi: float

    @property
    def score(self) -> float:
        return self.record.score

    @property
    def clearly(self) -> str:
        """"ahead" or "behind" when the Elo interval lies wholly above or below even; "level" else."""
        return "ahead" if self.elo_lo > 0 else "behind" if self.elo_hi < 0 else "level"


def gauntlet_row(registry: Registry, outcome: MatchOutcome) -> GauntletRow:
    """The row of a played match of the gauntlet's agent (its side A) against side B."""
    records = read_matchups(registry.db, outcome.team_size, outcome.tournament_id)
    record = records.get((outcome.a, outcome.b), Record(0, 0, 0))
    s = outcome.stats
    return GauntletRow(outcome.b, outcome.id, record, s.elo, s.elo_lo, s.elo_hi)


@dataclass(frozen=True)
class GauntletVerdict:
    """Whether `agent` held: at least half against every opponent; the worst matchup and those below half."""

    agent: str
    rows: tuple[GauntletRow, ...]

    @classmethod
    def of(cls, agent: str, rows: Sequence[GauntletRow]) -> GauntletVerdict:
        if not rows:
            raise ValueError("a gauntlet has at least one opponent")
        return cls(agent, tuple(rows))

    @property
    def worst(self) -> GauntletRow:
        return min(self.rows, key=lambda r: (r.score, r.elo))

    @property
    def below_half(self) -> list[GauntletRow]:
        return sorted((r for r in self.rows if r.score < 0.5), key=lambda r: r.score)

    @property
    def held(self) -> bool:
        return not self.below_half

    def text(self) -> str:
        """One sentence: held or not, the worst matchup, and who beat it (clearly or within the noise)."""
        w = self.worst
        worst = f"worst {w.opponent} {w.score:.1%} ({w.clearly})"
        n = len(self.rows)
        if self.held:
            return f"{self.agent} held: at least half against all {n}; {worst}."
        clear = [r.opponent for r in self.below_half if r.clearly == "behind"]
        level = [r.opponent for r in self.below_half if r.clearly != "behind"]
        parts = ([f"clearly behind {', '.join(clear)}"] if clear else []) + \
                ([f"below half but level with {', '.join(level)}"] if level else [])
        return f"{self.agent} did not hold: under half against {len(self.below_half)} of {n} ({'; '.join(parts)}); {worst}."
