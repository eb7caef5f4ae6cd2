"""Tournaments: what was planned, how far it got, and how it ended."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from league.errors import LeagueError
from league.stores.database import Store, row_id, utc_now

TITLE_PLAYOFF_KEY = "title_playoff"  # stored beside a title playoff's config (arena.crown)


def round_robin_name(tournament_id: int, playoff_of: int | None) -> str:
    """A title round robin as said: "round robin ID", and "(the playoff of round robin ID)" after a playoff's."""
    after = f" (the playoff of round robin {playoff_of})" if playoff_of is not None else ""
    return f"round robin {tournament_id}{after}"


@dataclass(frozen=True)
class Tournament:
    """One tournament row: what was planned (entrants, config), how far it got, how it ended."""

    id: int
    name: str
    team_size: int
    status: str
    seed: int
    games_per_pair: int
    planned_games: int
    finished_games: int
    entrants_json: str
    config_json: str
    created: str
    finished: str | None
    message: str

    @property
    def entrants(self) -> list[str]:
        return json.loads(self.entrants_json)

    @property
    def config(self) -> dict[str, Any]:
        """The config the tournament was created with (as stored: a plain dict)."""
        return json.loads(self.config_json)

    @property
    def opening_jitter(self) -> float:
        """game.opening_jitter as the tournament (or match) was created with it; 0 for one created before openings
        existed, whose games opened from the standard spots and so go on doing (a resumed one stays one contest)."""
        return float(self.config.get("game", {}).get("opening_jitter", 0.0))

    @property
    def title_playoff(self) -> dict[str, Any] | None:
        """For a title playoff (arena.crown): {"of": the round robin it follows, "contenders": the entrants that may
        take the title}; None for any other tournament."""
        return self.config.get(TITLE_PLAYOFF_KEY)

    @property
    def playoff_of(self) -> int | None:
        """The id of the round robin this title playoff follows; None for any other tournament."""
        of = (self.title_playoff or {}).get("of")
        return int(of) if of is not None else None


class TournamentStore(Store):
    def create(self, name: str, team_size: int, seed: int, games_per_pair: int,
                          planned_games: int, entrants: Sequence[str], config: dict[str, Any]) -> int:
        with self.transaction():
            cur = self.db.execute(
                """INSERT INTO tournaments (name, team_size, seed, games_per_pair, planned_games,
                       entrants_json, config_json, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                [name, team_size, seed, games_per_pair, planned_games, json.dumps(list(entrants)),
                 json.dumps(config, sort_keys=True), utc_now()],
            )
        return int(cur.lastrowid)

    def get(self, tournament_id: int) -> Tournament:
        rows = list(self.db.query("SELECT * FROM tournaments WHERE id = ?", [row_id(tournament_id, "tournament")]))
        if not rows:
            raise LeagueError(f"No tournament with id {tournament_id}.")
        return Tournament(**rows[0])

    def all(self) -> list[Tournament]:
        return [Tournament(**r) for r in self.db.query("SELECT * FROM tournaments ORDER BY id")]

    def finished_playoff_of(self, tournament_id: int) -> int | None:
        """The id of the finished title playoff of round robin `tournament_id` (arena.crown), if it has one."""
        rows = list(self.db.query(
            f"SELECT id FROM tournaments WHERE status = 'finished' AND "
            f"json_extract(config_json, '$.{TITLE_PLAYOFF_KEY}.of') = ? ORDER BY id DESC LIMIT 1", [tournament_id]))
        return int(rows[0]["id"]) if rows else None

    def count(self) -> int:
        return int(next(self.db.query("SELECT COUNT(*) AS n FROM tournaments"))["n"])

    def abandon(self, tournament_id: int, reason: str) -> Tournament:
        """End an unfinished tournament for good: never resumed again; its finished games stay recorded."""
        with self.transaction():
            t = self.get(tournament_id)
            if t.status in ("finished", "abandoned"):
                raise LeagueError(f"Tournament {tournament_id} is already {t.status}.")
            self.set_status(tournament_id, "abandoned")
            self.db.execute("UPDATE tournaments SET message = ? WHERE id = ?", [reason, tournament_id])
        return self.get(tournament_id)

    def set_status(self, tournament_id: int, status: str) -> None:
        with self.transaction():
            finished = utc_now() if status in ("finished", "abandoned") else None
            self.db.execute(
                """UPDATE tournaments SET status = ?, finished = ?,
                       finished_games = (SELECT COUNT(*) FROM games WHERE tournament_id = ?) WHERE id = ?""",
                [status, finished, tournament_id, tournament_id],
            )
