"""The league registry: one league database opened, with a store for each part of it.

    reg = Registry.open(home.db_path, cfg.ratings)
    reg.agent_store.get("rule"); reg.game_store.rating("rule", 1).elo; reg.tournament_store.all()
    reg.match_store.get(3); reg.promotion_store.for_stage(1)
    with reg.transaction(): ...   # several stores' writes in one transaction

One door: callers reach the database through the stores, as attributes of the Registry
(`agent_store`, `game_store`, `payoff_store`, `run_store`, `curriculum_store`, `tournament_store`,
`match_store`, `promotion_store`, `export_store`, `probe_store`, `role_store`, `panel_store`; league/stores/). Each store owns its table's
reads and writes, its docstrings and its typed rows (frozen dataclasses), so a second door of
one-line Registry methods repeating every store's signature (there were 30, and the match,
promotion and export stores had none, so callers used both doors) only duplicated them. The
Registry itself owns opening the database (creating, migrating, read-only), the one connection
and `transaction()` the stores share, and the read models that span stores (`mle`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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
from league.stores.probes import ProbeStore
from league.stores.panels import PanelStore, PanelTest
from league.stores.roles import RoleStore
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
        self.found_version: int | None = None  # the schema version `create` found (0: there was no league)
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
        self.probe_store = ProbeStore(self.database, self.agent_store)
        self.role_store = RoleStore(self.database, self.agent_store)
        self.match_store = MatchStore(self.database, self.agent_store, self.tournament_store)
        self.promotion_store = PromotionStore(self.database, self.agent_store)
        self.panel_store = PanelStore(self.database, self.agent_store)

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def create(cls, path: Path, ratings_cfg: RatingsConfig | None = None) -> "Registry":
        """Create (or upgrade) the database and make sure the baseline agents exist.

        A read-only folder, an unreadable file and another application's database are refused
        before anything is written.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        require_writable(path)
        db, found = open_league_db(path, readonly=False)  # refuses another application's database, writing nothing
        try:
            with _schema_lock(path):  # two `league init` at once: the second waits, then finds the tables made
                db.execute("PRAGMA journal_mode = WAL")
                migrate(db)
                reg = cls(db, ratings_cfg)
                reg.agent_store.ensure_baselines()
                reg.found_version = found
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

    # ------------------------------------------------------------------ read models over several stores

    def mle(self, team_size: int, names: Sequence[str] | None = None) -> rating_math.MleRatings:
        """Whole-history maximum-likelihood ratings for a team size (league.standings.fit_mle)."""
        return fit_mle(read_pair_records(self.db, team_size), self.ratings_cfg, names=names)
