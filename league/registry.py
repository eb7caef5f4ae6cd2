"""The league registry: one league database opened, with a store for each part of it.

    reg = Registry.open(home.db_path, cfg.ratings)
    reg.agent_store.get("rule"); reg.game_store.rating("rule", 1).elo; reg.tournament_store.all()
    reg.match_store.get(3); reg.promotion_store.for_stage(1)

The stores (league/stores/) share one connection and one `transaction()`. The methods below are
a thin facade over them for callers that use several parts at once; each is one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from league import ratings as rating_math
from league.config import RatingsConfig
from league.errors import LeagueError
from league.locks import wait_for
from league.schema import latest_version, migrate
from league.standings import fit_mle, read_pair_records
from league.stores.agents import BASELINES, Agent, AgentStore
from league.stores.curricula import Curriculum, CurriculumStage, CurriculumStore, GateCheck, StageAgent
from league.stores.database import Database, connect, open_league_db, require_writable, utc_now
from league.stores.exports import ExportRecord, ExportStore
from league.stores.games import Game, GameRecord, GameStore, Rating, RatingChange, RatingsRebuilt
from league.stores.matches import Match, MatchSettings, MatchStats, MatchStore
from league.stores.payoff import PayoffRecord, PayoffStore
from league.stores.promotions import Promotion, PromotionStore, SprtTest
from league.stores.runs import RunStore, TrainingRun
from league.stores.tournaments import Tournament, TournamentStore

__all__ = ["BASELINES", "Agent", "Curriculum", "CurriculumStage", "ExportRecord", "Game", "GameRecord", "GateCheck",
           "Match", "MatchSettings", "MatchStats", "PayoffRecord", "Promotion", "Rating", "RatingChange",
           "RatingsRebuilt", "Registry", "SprtTest", "StageAgent", "Tournament", "TrainingRun", "connect", "utc_now"]


def _schema_lock(db_path: Path):
    """Held while the database is created or upgraded, so two commands never apply one migration twice."""
    return wait_for(db_path.parent, "schema", "league-db", f"The league database {db_path}")


class Registry:
    """The league database. Open with `Registry.open(path)`; create with `Registry.create(path)`."""

    def __init__(self, db, ratings_cfg: RatingsConfig | None = None):
        self.db = db
        self.ratings_cfg = ratings_cfg or RatingsConfig()
        self.database = Database(db)
        self.transaction = self.database.transaction
        self.agent_store = AgentStore(self.database)
        self.game_store = GameStore(self.database, self.agent_store, self.ratings_cfg)
        self.payoff_store = PayoffStore(self.database, self.agent_store)
        self.run_store = RunStore(self.database)
        self.curriculum_store = CurriculumStore(self.database, self.agent_store)
        self.tournament_store = TournamentStore(self.database)
        self.export_store = ExportStore(self.database, self.agent_store)
        self.match_store = MatchStore(self.database, self.agent_store, self.tournament_store)
        self.promotion_store = PromotionStore(self.database, self.agent_store)

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def create(cls, path: Path, ratings_cfg: RatingsConfig | None = None) -> "Registry":
        """Create (or upgrade) the database and make sure the baseline agents exist.

        A read-only folder, an unreadable file and another application's database are refused
        before anything is written.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        require_writable(path)
        db, _ = open_league_db(path, readonly=False)  # refuses another application's database, writing nothing
        try:
            with _schema_lock(path):  # two `league init` at once: the second waits, then finds the tables made
                db.execute("PRAGMA journal_mode = WAL")
                migrate(db)
                reg = cls(db, ratings_cfg)
                reg.agent_store.ensure_baselines()
        except BaseException:
            db.conn.close()
            raise
        return reg

    @classmethod
    def open(cls, path: Path, ratings_cfg: RatingsConfig | None = None, readonly: bool = False) -> "Registry":
        """Open an existing database, applying pending migrations unless read-only.

        Read-only opens work on a home this user cannot write (and never write); the others
        refuse such a home up front. Either refuses what is not a league database.
        """
        if not path.is_file():
            raise LeagueError(f"No league database at {path}; create one with `league init`.")
        if not readonly:
            require_writable(path)
        db, version = open_league_db(path, readonly)
        if readonly and version == 0:
            db.conn.close()
            raise LeagueError(f"{path} has no league tables yet; run `league init --home {path.parent}`.")
        if not readonly and version < latest_version():
            try:
                with _schema_lock(path):
                    migrate(db)  # pending migrations are read again under the lock: applied once
            except BaseException:
                db.conn.close()
                raise
        return cls(db, ratings_cfg)

    def close(self) -> None:
        self.database.close()

    # ------------------------------------------------------------------ agents

    def names(self) -> list[str]:
        return self.agent_store.names()

    def agent(self, name: str) -> Agent:
        return self.agent_store.get(name)

    def agent_by_id(self, agent_id: int) -> Agent:
        return self.agent_store.by_id(agent_id)

    def agents(self, team_size: int | None = None, include_retired: bool = False) -> list[Agent]:
        return self.agent_store.all(team_size, include_retired)

    def add_agent(self, name: str, kind: str, team_size: int | None, **details: Any) -> Agent:
        return self.agent_store.add(name, kind, team_size, **details)

    def set_status(self, name: str, status: str) -> Agent:
        return self.agent_store.set_status(name, status)

    def champion(self, team_size: int) -> Agent | None:
        return self.agent_store.champion(team_size)

    # ------------------------------------------------------------------ games and ratings

    def rating(self, name: str, team_size: int) -> Rating:
        return self.game_store.rating(name, team_size)

    def record_game(self, game: GameRecord) -> int:
        return self.game_store.record(game)

    def games(self, team_size: int | None = None, tournament_id: int | None = None) -> list[Game]:
        return self.game_store.games(team_size, tournament_id)

    def rating_history(self, name: str, team_size: int | None = None) -> list[RatingChange]:
        return self.game_store.rating_history(name, team_size)

    def recompute_ratings(self, team_size: int) -> dict[str, tuple[float, float, float]]:
        return self.game_store.recompute_ratings(team_size)

    def rebuild_ratings(self, team_size: int) -> RatingsRebuilt:
        """Replace the stored ratings and rating history of a team size by those its recorded games make."""
        return self.game_store.rebuild(team_size)

    def check_ratings_usable(self, team_size: int, names: Sequence[str]) -> None:
        """A LeagueError naming `league ratings rebuild` if any of `names` has damaged ratings in the team size."""
        self.game_store.check_usable(team_size, tuple(names))

    def mle(self, team_size: int, names: Sequence[str] | None = None) -> rating_math.MleRatings:
        """Whole-history maximum-likelihood ratings for a team size (league.standings.fit_mle)."""
        return fit_mle(read_pair_records(self.db, team_size), self.ratings_cfg, names=names)

    # ------------------------------------------------------------------ payoff and training runs

    def record_payoff(self, learner: str, team_size: int, results: dict[str, PayoffRecord], decay: float = 1.0) -> None:
        self.payoff_store.record(learner, team_size, results, decay)

    def payoff(self, learner: str, team_size: int) -> dict[str, PayoffRecord]:
        return self.payoff_store.get(learner, team_size)

    def record_run_metrics(self, run: str, team_size: int, steps: int, metrics: dict[str, float]) -> None:
        self.run_store.record(run, team_size, steps, metrics)

    def training_runs(self) -> list[TrainingRun]:
        return self.run_store.all()

    # ------------------------------------------------------------------ curricula

    def start_curriculum(self, name: str, spec: dict[str, Any], source: str,
                         stages: Sequence[tuple[str, int, str]]) -> Curriculum:
        return self.curriculum_store.start(name, spec, source, stages)

    def curricula(self) -> list[Curriculum]:
        return self.curriculum_store.all()

    def curriculum(self, name: str) -> Curriculum:
        return self.curriculum_store.get(name)

    def update_curriculum(self, name: str, **values: Any) -> None:
        self.curriculum_store.update(name, **values)

    def update_curriculum_stage(self, name: str, index: int, **values: Any) -> None:
        self.curriculum_store.update_stage(name, index, **values)

    def record_gate_check(self, name: str, index: int, agent: str, steps: int, passed: bool,
                          criteria: list[dict[str, Any]]) -> int:
        return self.curriculum_store.record_gate_check(name, index, agent, steps, passed, criteria)

    def gate_checks(self, name: str, index: int | None = None) -> list[GateCheck]:
        return self.curriculum_store.gate_checks(name, index)

    # ------------------------------------------------------------------ tournaments

    def create_tournament(self, name: str, team_size: int, seed: int, games_per_pair: int,
                          planned_games: int, entrants: Sequence[str], config: dict[str, Any]) -> int:
        return self.tournament_store.create(name, team_size, seed, games_per_pair, planned_games, entrants, config)

    def tournament(self, tournament_id: int) -> Tournament:
        return self.tournament_store.get(tournament_id)

    def tournaments(self) -> list[Tournament]:
        return self.tournament_store.all()

    def abandon_tournament(self, tournament_id: int, reason: str) -> Tournament:
        return self.tournament_store.abandon(tournament_id, reason)

    def set_tournament_status(self, tournament_id: int, status: str) -> None:
        self.tournament_store.set_status(tournament_id, status)
