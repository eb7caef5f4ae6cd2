"""Matches: head-to-heads between two agents (`league match A B`), each played as a two-entrant
tournament whose games are that tournament's, with where its statistics stand.

A side may be a mixed team (`league match "A+necto" "B+C" --stage 2v2`, league.teams): the match's
`a` and `b` are then the sides as its tournament's entrants name them, and its a_agent_id and
b_agent_id the sides' first members."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from league.errors import LeagueError
from league.sprt_params import SprtParams
from league.stores.agents import AgentStore
from league.stores.database import Database, Store, row_id, utc_now
from league.stores.tournaments import TournamentStore
from league.teams import members

# The openings a match plays, kept in its tournament's config (0: made before openings, the standard spots).
_OPENING_JITTER = "COALESCE(json_extract(t.config_json, '$.game.opening_jitter'), 0.0)"
# A side's name is its tournament entrant's: the agent's name, or a mixed team's "A+B".
_SELECT = f"""SELECT m.*, COALESCE(json_extract(t.entrants_json, '$[0]'), a.name) AS a,
                    COALESCE(json_extract(t.entrants_json, '$[1]'), b.name) AS b, t.seed AS seed, t.message AS message,
                    {_OPENING_JITTER} AS opening_jitter
             FROM matches m JOIN agents a ON a.id = m.a_agent_id JOIN agents b ON b.id = m.b_agent_id
             JOIN tournaments t ON t.id = m.tournament_id"""


@dataclass(frozen=True)
class MatchSettings:
    """What a match plays; two requests with equal settings are the same match."""

    a: str
    b: str
    team_size: int
    mode: str  # "sprt" or "fixed"
    params_json: str | None  # the SPRT parameters (canonical JSON); None for a fixed match
    max_games: int
    game_seconds: float
    seed: int
    deterministic: bool = True  # network agents play their most likely action; False: they sample
    opening_jitter: float = 0.0  # game.opening_jitter (kept in the match's tournament's config)


@dataclass(frozen=True)
class MatchStats:
    """The statistics of a match's complete pairs (A's view): pentanomial counts, Elo, LOS, LLR."""

    counts: tuple[int, ...]
    games: int
    llr: float | None
    elo: float
    elo_lo: float
    elo_hi: float
    nelo: float
    nelo_lo: float
    nelo_hi: float
    los: float


@dataclass(frozen=True)
class Match:
    """One match as stored, with its agents' names (`a`, `b`) and its tournament's seed and message;
    `params` and `stats` read its JSON columns and statistics columns back."""

    id: int
    tournament_id: int
    a_agent_id: int
    b_agent_id: int
    team_size: int
    mode: str
    params_json: str | None
    max_games: int
    batch_pairs: int
    game_seconds: float
    status: str
    decision: str | None
    llr: float | None
    counts_json: str
    elo: float | None
    elo_lo: float | None
    elo_hi: float | None
    nelo: float | None
    nelo_lo: float | None
    nelo_hi: float | None
    los: float | None
    games: int
    created: str
    finished: str | None
    a: str
    b: str
    seed: int
    message: str
    deterministic: int = 1  # 1: network agents play their most likely action (argmax); 0: they sample
    opening_jitter: float = 0.0  # game.opening_jitter as its tournament keeps it; 0 for one made before openings

    @property
    def params(self) -> SprtParams | None:
        return SprtParams(**json.loads(self.params_json)) if self.params_json else None

    @property
    def stats(self) -> MatchStats:
        return MatchStats(tuple(json.loads(self.counts_json)), self.games, self.llr, self.elo, self.elo_lo,
                          self.elo_hi, self.nelo, self.nelo_lo, self.nelo_hi, self.los)


class MatchStore(Store):
    def __init__(self, database: Database, agents: AgentStore, tournaments: TournamentStore):
        super().__init__(database)
        self.agents = agents
        self.tournaments = tournaments

    def open(self, settings: MatchSettings, batch_pairs: int, config: dict[str, Any]) -> tuple[Match, bool]:
        """The newest match with these settings that is not abandoned (to resume, or finished), or a
        new one with its tournament; and whether it was created. One transaction, so two commands
        asking at once get the same match."""
        s = settings
        with self.transaction():
            a_id, b_id = (self.agents.get(members(side)[0]).id for side in (s.a, s.b))
            rows = list(self.db.query(
                f"""{_SELECT} WHERE m.a_agent_id = ? AND m.b_agent_id = ? AND m.team_size = ? AND m.mode = ?
                        AND m.params_json IS ? AND m.max_games = ? AND m.game_seconds = ? AND t.seed = ?
                        AND m.deterministic = ? AND json_extract(t.entrants_json, '$[0]') = ? AND json_extract(t.entrants_json, '$[1]') = ?
                        AND {_OPENING_JITTER} = ?
                    ORDER BY m.id DESC LIMIT 1""",
                [a_id, b_id, s.team_size, s.mode, s.params_json, s.max_games, s.game_seconds, s.seed,
                 int(s.deterministic), s.a, s.b, s.opening_jitter]))
            if rows and rows[0]["status"] == "abandoned":
                raise LeagueError(f"Match {rows[0]['id']} with these settings was abandoned; give another --seed "
                                  "to play a new one.")
            if rows:
                return Match(**rows[0]), False
            # The openings the match plays are the settings', whatever the config says (one record of them).
            config = {**config, "game": {**config.get("game", {}), "opening_jitter": s.opening_jitter}}
            kind = ("SPRT" if s.mode == "sprt" else f"{s.max_games} games") + ("" if s.deterministic else ", sampled")
            tid = self.tournaments.create(f"match {s.a} vs {s.b} ({kind})", s.team_size, s.seed, s.max_games,
                                          s.max_games, [s.a, s.b], config)
            cur = self.db.execute(
                """INSERT INTO matches (tournament_id, a_agent_id, b_agent_id, team_size, mode, params_json,
                       max_games, batch_pairs, game_seconds, deterministic, created)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [tid, a_id, b_id, s.team_size, s.mode, s.params_json, s.max_games, batch_pairs, s.game_seconds,
                 int(s.deterministic), utc_now()])
            return self.get(int(cur.lastrowid)), True

    def get(self, match_id: int) -> Match:
        rows = list(self.db.query(f"{_SELECT} WHERE m.id = ?", [row_id(match_id, "match")]))
        if not rows:
            raise LeagueError(f"No match with id {match_id}.")
        return Match(**rows[0])

    def all(self) -> list[Match]:
        return [Match(**r) for r in self.db.query(f"{_SELECT} ORDER BY m.id")]

    def for_tournament(self, tournament_id: int) -> Match | None:
        """The match that tournament `tournament_id` is, if it is one."""
        rows = list(self.db.query(f"{_SELECT} WHERE m.tournament_id = ?", [tournament_id]))
        return Match(**rows[0]) if rows else None

    def tournament_ids(self) -> set[int]:
        return {row["tournament_id"] for row in self.db.query("SELECT tournament_id FROM matches")}

    def set_status(self, match_id: int, status: str) -> None:
        """'running' or 'interrupted', for the match and its tournament together."""
        with self.transaction():
            m = self.get(match_id)
            self.db.execute("UPDATE matches SET status = ? WHERE id = ?", [status, match_id])
            self.tournaments.set_status(m.tournament_id, status)

    def save_stats(self, match_id: int, stats: MatchStats) -> None:
        with self.transaction():
            self.db.execute(
                """UPDATE matches SET counts_json = ?, games = ?, llr = ?, elo = ?, elo_lo = ?, elo_hi = ?,
                       nelo = ?, nelo_lo = ?, nelo_hi = ?, los = ? WHERE id = ?""",
                [json.dumps(list(stats.counts)), stats.games, stats.llr, stats.elo, stats.elo_lo, stats.elo_hi,
                 stats.nelo, stats.nelo_lo, stats.nelo_hi, stats.los, match_id])

    def finish(self, match_id: int, decision: str | None, stats: MatchStats, message: str) -> Match:
        """End the match with its final statistics, and its tournament as finished with `message`;
        a tournament stopped early by the SPRT has its plan cut to the games played."""
        with self.transaction():
            m = self.get(match_id)
            self.save_stats(match_id, stats)
            self.db.execute("UPDATE matches SET status = 'finished', decision = ?, finished = ? WHERE id = ?",
                            [decision, utc_now(), match_id])
            self.tournaments.set_status(m.tournament_id, "finished")
            self.db.execute("UPDATE tournaments SET message = ?, planned_games = finished_games WHERE id = ?",
                            [message, m.tournament_id])
        return self.get(match_id)

    def abandon(self, match_id: int, reason: str) -> Match:
        """End an unfinished match for good (never resumed); its games stay recorded and rated."""
        with self.transaction():
            m = self.get(match_id)
            if m.status in ("finished", "abandoned"):
                raise LeagueError(f"Match {match_id} is already {m.status}.")
            self.db.execute("UPDATE matches SET status = 'abandoned', finished = ? WHERE id = ?",
                            [utc_now(), match_id])
            self.tournaments.abandon(m.tournament_id, reason)
        return self.get(match_id)
