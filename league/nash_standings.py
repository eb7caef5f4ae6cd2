"""The Nash leaderboard, assembled once: `league leaderboard --by nash [--tournament ID]` and the
dashboard's Nash averaging page both read it here.

Who is weighed
    Over a stage's games: the agents its leaderboard lists (league.standings), mixed-team games left
    out of the meta-game (a team is no listed agent). Over one tournament's games: its entrants, as
    the tournament names them, so a round robin of mixed teams is a meta-game of those teams.

How full the payoff matrix is
    A pair of members that never met counts as even (league.nash). `fill` is the share of the
    members' pairs that met at least once; below SPARSE_BELOW the matrix is mostly guesses of
    "even": the support then holds agents nobody tested, and every support member scores 0 by
    construction, so the ranking means little. `round_robins` names the tournaments of the stage
    whose games form a full round robin (every pair of at least three entrants met), where the
    matrix is full.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sqlite_utils

from league.config import RatingsConfig, stage_of
from league.errors import LeagueError
from league.nash import NashAverage, meta_game, nash_average
from league.standings import (PairRecord, Standing, Standings, read_agent_ratings, read_pair_records,
                              read_standings, read_title_pair_records, standings)
from league.stores.database import Database
from league.stores.tournaments import Tournament, TournamentStore

# A payoff matrix with fewer than this share of its members' pairs played is too sparse to mean anything.
SPARSE_BELOW = 0.5
ROUND_ROBIN_ENTRANTS = 3  # fewer entrants make no meta-game worth weighing (a match is a two-entrant tournament)


@dataclass(frozen=True)
class NashRow:
    """One member of the meta-game, best first: its Nash weight and score, its record against the other
    members, and its standing in the stage or tournament (None for a mixed team, which has none)."""

    rank: int
    name: str
    weight: float
    score: float  # rounded to 9 places, never -0.0
    games: int  # against the other members
    wins: int
    draws: int
    losses: int
    standing: Standing | None


@dataclass(frozen=True)
class NashStandings:
    """Nash averaging of a stage's listed agents, or of one tournament's entrants (see the module's docstring)."""

    team_size: int
    nash: NashAverage
    board: Standings  # the stage's (or the tournament's) standings: ratings and whole records
    records: tuple[PairRecord, ...]  # the games counted, per pair
    tournament: Tournament | None = None

    @property
    def where(self) -> str:
        """In words: the stage, or the tournament (a title playoff's with the round robin it plays on from)."""
        t = self.tournament
        if t is None:
            return stage_of(self.team_size)
        of = t.playoff_of
        return f"tournament #{t.id} {t.name}" + (f" and its entrants' games of round robin {of}" if of is not None else "")

    @property
    def pairs(self) -> int:
        """Pairs of members (each unordered pair once)."""
        n = len(self.nash.members)
        return n * (n - 1) // 2

    @property
    def met_pairs(self) -> int:
        return self.pairs - len(self.nash.unplayed_pairs)

    @property
    def fill(self) -> float:
        """The share of the members' pairs that met (1 with fewer than two members)."""
        return self.met_pairs / self.pairs if self.pairs else 1.0

    @property
    def too_sparse(self) -> bool:
        return self.fill < SPARSE_BELOW

    @property
    def support(self) -> tuple[str, ...]:
        """The support, heaviest first (the ranking's order)."""
        return tuple(r.name for r in self.rows() if r.weight > 0)

    def rows(self) -> tuple[NashRow, ...]:
        """One row per member, best first (NashAverage.ranking)."""
        nash = self.nash
        index = {m: i for i, m in enumerate(nash.members)}
        record = {m: [0, 0, 0] for m in nash.members}
        for r in self.records:
            if r.agent in index and r.opponent in index and r.agent != r.opponent:
                for name, (w, d, l) in ((r.agent, (r.wins, r.draws, r.losses)),
                                        (r.opponent, (r.losses, r.draws, r.wins))):
                    record[name] = [a + b for a, b in zip(record[name], (w, d, l))]
        by_name = {row.name: row for row in self.board.rows}
        return tuple(
            NashRow(rank=rank, name=nash.members[i], weight=nash.weights[i],
                    score=round(nash.scores[i], 9) or 0.0, games=sum(record[nash.members[i]]),
                    wins=record[nash.members[i]][0], draws=record[nash.members[i]][1],
                    losses=record[nash.members[i]][2], standing=by_name.get(nash.members[i]))
            for rank, i in enumerate(nash.ranking(), 1))


@dataclass(frozen=True)
class RoundRobin:
    """A tournament whose games form a full round robin: every pair of its entrants met."""

    id: int
    name: str
    entrants: int
    games: int  # games between its entrants
    status: str


def read_nash(db: sqlite_utils.Database, team_size: int | None, cfg: RatingsConfig, *,
              include_retired: bool = False, tournament_id: int | None = None,
              anchor: tuple[str, float] | None = None) -> NashStandings:
    """Nash averaging over a stage's games (`team_size`) or one tournament's (`tournament_id`; its team
    size is the tournament's, and a different `team_size` is a LeagueError; a title playoff's with its entrants'
    games of the round robin it follows, as the title was decided: read_title_pair_records). The MLE of the
    standings is pinned on `anchor` (NAME, ELO) when given."""
    if tournament_id is None:
        if team_size is None:
            raise ValueError("read_nash needs a team size or a tournament")
        board = read_standings(db, team_size, cfg, include_retired=include_retired, anchor=anchor)
        records = read_pair_records(db, team_size)
        nash = nash_average([r.name for r in board.rows], records)
        return NashStandings(team_size, nash, board, tuple(records))
    tournament = _tournament(db, tournament_id)
    if team_size is not None and team_size != tournament.team_size:
        raise LeagueError(f"Tournament {tournament_id} was played in {stage_of(tournament.team_size)}, not "
                          f"{stage_of(team_size)}; leave --stage out or give {stage_of(tournament.team_size)}.")
    records = read_title_pair_records(db, tournament)
    entrants = tournament.entrants
    board = standings(read_agent_ratings(db, tournament.team_size, cfg), records, cfg, tournament.team_size,
                      by="points", entrants=entrants, anchor=anchor)
    return NashStandings(tournament.team_size, nash_average(entrants, records), board, tuple(records), tournament)


def _tournament(db: sqlite_utils.Database, tournament_id: int) -> Tournament:
    store = TournamentStore(Database(db))
    try:
        return store.get(tournament_id)
    except LeagueError:
        ids = [t.id for t in store.all()]
        known = (f"; tournaments here: {', '.join(map(str, ids[-12:]))}" if ids
                 else "; there are none here yet (`league tournament` plays one)")
        raise LeagueError(f"No tournament with id {tournament_id}{known}.") from None


def round_robins(db: sqlite_utils.Database, team_size: int) -> list[RoundRobin]:
    """The tournaments of `team_size` with at least ROUND_ROBIN_ENTRANTS entrants whose every pair of
    entrants met at least once, newest first."""
    found = []
    for t in reversed(TournamentStore(Database(db)).all()):
        entrants = list(dict.fromkeys(t.entrants))
        if t.team_size != team_size or len(entrants) < ROUND_ROBIN_ENTRANTS or not t.finished_games:
            continue
        _, games = meta_game(entrants, read_pair_records(db, team_size, t.id))
        upper = games[np.triu_indices(len(entrants), k=1)]
        if upper.all():
            found.append(RoundRobin(t.id, t.name, len(entrants), int(upper.sum()), t.status))
    return found
