"""The versioned agent registry: agents, games, ratings, rating history and tournaments.

SQLite through sqlite-utils, in WAL mode with foreign keys on. Every multi-row write runs in
one `BEGIN IMMEDIATE` transaction, so concurrent writers queue instead of failing and a
failure part-way leaves nothing half-written.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from league import ratings as rating_math
from league.config import RatingsConfig
from league.errors import LeagueError, unknown_name
from league.names import check_name
from league.schema import RESULTS, STATUSES, is_foreign, latest_version, migrate, schema_version
from league.standings import fit_mle, read_pair_records, read_standings

BASELINES = {
    "random": "Uniformly random actions from the action table.",
    "rule": "Scripted bot: drives behind the ball, shoots, falls back to defend.",
}
BUSY_TIMEOUT_SECONDS = 60.0


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    kind: str
    team_size: int | None  # None: plays every stage (baselines)
    status: str
    parent_id: int | None
    created: str
    checkpoint_path: str | None
    checkpoint_sha256: str | None
    config_json: str | None
    steps_trained: int
    notes: str

    @property
    def stage(self) -> str:
        return f"{self.team_size}v{self.team_size}" if self.team_size else "any"

    @property
    def config(self) -> dict[str, Any] | None:
        return json.loads(self.config_json) if self.config_json else None


@dataclass(frozen=True)
class GameRecord:
    """One finished game, as a runner reports it. A side is one agent (a team is its copies)."""

    blue: str
    orange: str
    team_size: int
    seed: int
    blue_goals: int
    orange_goals: int
    length_seconds: float
    origin: str = "manual"
    tournament_id: int | None = None
    schedule_index: int | None = None
    replay_path: str | None = None

    @property
    def result(self) -> str:
        if self.blue_goals > self.orange_goals:
            return "blue"
        return "orange" if self.orange_goals > self.blue_goals else "draw"


def connect(path: Path, readonly: bool = False) -> sqlite_utils.Database:
    """A sqlite-utils Database on `path` (read-only connections never write or migrate)."""
    if readonly:
        uri = Path(path).absolute().as_uri()  # percent-encoded: a '?' or '#' in a folder name stays a name
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # SQLite opens lazily: fail here
        except sqlite3.OperationalError:
            conn.close()
            wal = Path(f"{path}-wal")
            if os.access(Path(path).parent, os.W_OK) or (wal.is_file() and wal.stat().st_size > 0):
                raise
            # Reading a WAL database takes its -shm file, which mode=ro cannot create in a folder
            # it may not write (a read-only share or mount, another user's home). With no WAL
            # content beside it (the last connection to close folds the WAL into the main file
            # and removes it), the main file holds every commit, so reading it as immutable is
            # exact. What such a reader gives up: a writer with rights to the folder that starts
            # later is not seen, which a read-only view of a league can live with.
            conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=BUSY_TIMEOUT_SECONDS,
                                   check_same_thread=False)
    else:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS)
    conn.execute("PRAGMA foreign_keys = ON")
    return sqlite_utils.Database(conn)


def _require_writable(path: Path) -> None:
    """Refuse, in one sentence, a write to a database (or its folder) this user may not write.

    SQLite would open it read-only without a word and fail at the first write; in WAL mode a
    writer also creates the -wal and -shm files next to the database, so the folder counts.
    """
    for target in (path.parent, path) if path.exists() else (path.parent,):
        if not os.access(target, os.W_OK):
            which = "" if target == path.parent else f" ({target.name} cannot be written)"
            raise LeagueError(f"The league home {path.parent} is read-only{which}, so this command cannot run; "
                              "the commands that only read the league still work.")


def _open_league_db(path: Path, readonly: bool) -> tuple[sqlite_utils.Database, int]:
    """A connection to a league database (or an empty one) and its schema version.

    Refuses, closing the connection, a file SQLite cannot read, one it cannot open, and another
    application's database, whose tables a migration would otherwise be added to.
    """
    if path.exists() and not os.access(path, os.R_OK):
        raise LeagueError(f"Cannot read the league database {path}: permission denied.")
    db = None
    try:
        db = connect(path, readonly=readonly)
        foreign = is_foreign(db)
        version = schema_version(db)
    except sqlite3.OperationalError as exc:  # the file is there but cannot be opened (permissions, locks, I/O)
        if db is not None:
            db.conn.close()
        raise LeagueError(f"Cannot read the league database {path}: {exc}.") from None
    except sqlite3.DatabaseError:  # SQLite's own verdict: not a database, or a corrupt one
        if db is not None:
            db.conn.close()
        raise LeagueError(f"{path} is not a league database (it cannot be read as SQLite).") from None
    if foreign:
        db.conn.close()
        raise LeagueError(f"{path} is another application's SQLite database (it has tables, but none of "
                          "rl-league's), so it was left untouched; choose another league home.")
    if version > latest_version():
        db.conn.close()
        raise LeagueError(
            f"{path} has schema version {version}, newer than this rl-league understands ({latest_version()}); "
            "upgrade rl-league."
        )
    return db, version


class Registry:
    """The league database. Open with `Registry.open(path)`; create with `Registry.create(path)`."""

    def __init__(self, db: sqlite_utils.Database, ratings_cfg: RatingsConfig | None = None):
        self.db = db
        self.ratings_cfg = ratings_cfg or RatingsConfig()
        self._ts_env = rating_math.trueskill_env(self.ratings_cfg.trueskill)

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def create(cls, path: Path, ratings_cfg: RatingsConfig | None = None) -> "Registry":
        """Create (or upgrade) the database and make sure the baseline agents exist.

        A read-only folder, an unreadable file and another application's database are refused
        before anything is written.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        _require_writable(path)
        db, _ = _open_league_db(path, readonly=False)
        db.execute("PRAGMA journal_mode = WAL")
        migrate(db)
        reg = cls(db, ratings_cfg)
        with reg.transaction():
            for name, notes in BASELINES.items():
                if not reg._agent_row(name):
                    reg._insert_agent(name=name, kind=name, team_size=None, notes=notes)
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
            _require_writable(path)
        db, version = _open_league_db(path, readonly)
        if readonly and version == 0:
            db.conn.close()
            raise LeagueError(f"{path} has no league tables yet; run `league init --home {path.parent}`.")
        if not readonly and version < latest_version():
            try:
                migrate(db)
            except BaseException:
                db.conn.close()
                raise
        return cls(db, ratings_cfg)

    def close(self) -> None:
        self.db.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested calls join the outer one."""
        conn = self.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    # ------------------------------------------------------------------ agents

    def _agent_row(self, name: str) -> dict[str, Any] | None:
        rows = list(self.db.query("SELECT * FROM agents WHERE name = ?", [name]))
        return rows[0] if rows else None

    def _insert_agent(self, **values: Any) -> int:
        values.setdefault("created", utc_now())
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        cur = self.db.execute(f"INSERT INTO agents ({cols}) VALUES ({marks})", list(values.values()))
        return int(cur.lastrowid)

    def names(self) -> list[str]:
        return [r["name"] for r in self.db.query("SELECT name FROM agents ORDER BY id")]

    def agent(self, name: str) -> Agent:
        row = self._agent_row(name)
        if row is None:
            raise unknown_name("agent", name, self.names())
        return Agent(**row)

    def agent_by_id(self, agent_id: int) -> Agent:
        rows = list(self.db.query("SELECT * FROM agents WHERE id = ?", [agent_id]))
        if not rows:
            raise LeagueError(f"No agent with id {agent_id}.")
        return Agent(**rows[0])

    def agents(self, team_size: int | None = None, include_retired: bool = False) -> list[Agent]:
        """Agents in creation order; with `team_size`, those of that stage plus the all-stage baselines."""
        where, args = [], []
        if team_size is not None:
            where.append("(team_size = ? OR team_size IS NULL)")
            args.append(team_size)
        if not include_retired:
            where.append("status != 'retired'")
        sql = "SELECT * FROM agents" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return [Agent(**r) for r in self.db.query(sql, args)]

    def add_agent(
        self,
        name: str,
        kind: str,
        team_size: int | None,
        parent: str | None = None,
        checkpoint_path: str | None = None,
        checkpoint_sha256: str | None = None,
        config: dict[str, Any] | None = None,
        steps_trained: int = 0,
        notes: str = "",
    ) -> Agent:
        """Register a new agent version."""
        check_name(name)
        with self.transaction():
            if self._agent_row(name):
                raise LeagueError(f"An agent named {name!r} already exists; choose another name.")
            parent_id = self.agent(parent).id if parent else None
            self._insert_agent(
                name=name,
                kind=kind,
                team_size=team_size,
                parent_id=parent_id,
                checkpoint_path=checkpoint_path,
                checkpoint_sha256=checkpoint_sha256,
                config_json=json.dumps(config, sort_keys=True) if config is not None else None,
                steps_trained=steps_trained,
                notes=notes,
            )
        return self.agent(name)

    def set_status(self, name: str, status: str) -> Agent:
        """Set an agent's status; promoting demotes the stage's previous champion to active."""
        if status not in STATUSES:
            raise LeagueError(f"Unknown status {status!r}; expected one of {', '.join(STATUSES)}.")
        with self.transaction():
            agent = self.agent(name)
            if status == "champion":
                if agent.team_size is None:
                    raise LeagueError(f"{name!r} is a baseline that plays every stage; only a stage's own agents can be champion.")
                self.db.execute(
                    "UPDATE agents SET status = 'active' WHERE status = 'champion' AND team_size = ? AND id != ?",
                    [agent.team_size, agent.id],
                )
            self.db.execute("UPDATE agents SET status = ? WHERE id = ?", [status, agent.id])
        return self.agent(name)

    def champion(self, team_size: int) -> Agent | None:
        rows = list(self.db.query("SELECT * FROM agents WHERE status = 'champion' AND team_size = ?", [team_size]))
        return Agent(**rows[0]) if rows else None

    # ------------------------------------------------------------------ ratings

    def _rating_row(self, agent_id: int, team_size: int) -> dict[str, Any]:
        rows = list(self.db.query("SELECT * FROM ratings WHERE agent_id = ? AND team_size = ?", [agent_id, team_size]))
        if rows:
            return rows[0]
        ts = self.ratings_cfg.trueskill
        return {"agent_id": agent_id, "team_size": team_size, "elo": self.ratings_cfg.elo.initial,
                "mu": ts.mu, "sigma": ts.sigma, "games": 0, "wins": 0, "draws": 0, "losses": 0,
                "goals_for": 0, "goals_against": 0, "last_played": None}

    def rating(self, name: str, team_size: int) -> dict[str, Any]:
        """Current rating row of an agent in a team size (defaults if it has not played)."""
        return self._rating_row(self.agent(name).id, team_size)

    def record_game(self, game: GameRecord) -> int:
        """Record a finished game and its rating updates in one transaction; returns the game id."""
        if game.result not in RESULTS:
            raise LeagueError(f"Bad game result {game.result!r}.")
        with self.transaction():
            blue, orange = self.agent(game.blue), self.agent(game.orange)
            played = utc_now()
            cur = self.db.execute(
                """INSERT INTO games (origin, tournament_id, schedule_index, team_size, blue_agent_id,
                       orange_agent_id, seed, blue_goals, orange_goals, result, length_seconds, replay_path, played)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [game.origin, game.tournament_id, game.schedule_index, game.team_size, blue.id, orange.id,
                 game.seed, game.blue_goals, game.orange_goals, game.result, game.length_seconds,
                 game.replay_path, played],
            )
            game_id = int(cur.lastrowid)
            if game.tournament_id is not None:
                self.db.execute("UPDATE tournaments SET finished_games = finished_games + 1 WHERE id = ?",
                                [game.tournament_id])
            if blue.id != orange.id:  # a mirror match says nothing about strength
                self._apply_ratings(game_id, game, blue.id, orange.id, played)
        return game_id

    def _rate_pair(self, blue: tuple[float, float, float], orange: tuple[float, float, float],
                   score: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """(elo, mu, sigma) of both sides after one game; `score` is blue's."""
        (elo_b,), (elo_o,) = rating_math.elo_update([blue[0]], [orange[0]], score, self.ratings_cfg.elo)
        (ts_b,), (ts_o,) = rating_math.trueskill_update(self._ts_env, [blue[1:]], [orange[1:]], score)
        return (elo_b, *ts_b), (elo_o, *ts_o)

    def _apply_ratings(self, game_id: int, game: GameRecord, blue_id: int, orange_id: int, played: str) -> None:
        before_b = self._rating_row(blue_id, game.team_size)
        before_o = self._rating_row(orange_id, game.team_size)
        score = rating_math.score_from_goals(game.blue_goals, game.orange_goals)
        after_b, after_o = self._rate_pair((before_b["elo"], before_b["mu"], before_b["sigma"]),
                                           (before_o["elo"], before_o["mu"], before_o["sigma"]), score)
        for before, (elo, mu, sigma), s, gf, ga in (
            (before_b, after_b, score, game.blue_goals, game.orange_goals),
            (before_o, after_o, 1.0 - score, game.orange_goals, game.blue_goals),
        ):
            after = dict(before, elo=elo, mu=mu, sigma=sigma, games=before["games"] + 1,
                         wins=before["wins"] + (s == 1.0), draws=before["draws"] + (s == 0.5),
                         losses=before["losses"] + (s == 0.0), goals_for=before["goals_for"] + gf,
                         goals_against=before["goals_against"] + ga, last_played=played)
            self.db["ratings"].upsert(after, pk=("agent_id", "team_size"))
            self.db["rating_history"].insert({
                "game_id": game_id, "agent_id": before["agent_id"], "team_size": game.team_size,
                "elo_before": before["elo"], "elo_after": elo, "mu_before": before["mu"], "mu_after": mu,
                "sigma_before": before["sigma"], "sigma_after": sigma, "played": played,
            })

    def leaderboard(self, team_size: int, include_retired: bool = False) -> list[dict[str, Any]]:
        """The team size's standings (league.standings.read_standings) by Elo, one dict per row."""
        return [dataclasses.asdict(row) for row in
                read_standings(self.db, team_size, self.ratings_cfg, include_retired=include_retired).rows]

    def games(self, team_size: int | None = None, tournament_id: int | None = None) -> list[dict[str, Any]]:
        """Games in recorded order, with agent names."""
        where, args = [], []
        if team_size is not None:
            where.append("g.team_size = ?")
            args.append(team_size)
        if tournament_id is not None:
            where.append("g.tournament_id = ?")
            args.append(tournament_id)
        sql = """SELECT g.*, b.name AS blue, o.name AS orange FROM games g
                 JOIN agents b ON b.id = g.blue_agent_id JOIN agents o ON o.id = g.orange_agent_id"""
        if where:
            sql += " WHERE " + " AND ".join(where)
        return list(self.db.query(sql + " ORDER BY g.id", args))

    def mle(self, team_size: int, names: Sequence[str] | None = None) -> rating_math.MleRatings:
        """Whole-history maximum-likelihood ratings for a team size (league.standings.fit_mle)."""
        return fit_mle(read_pair_records(self.db, team_size), self.ratings_cfg, names=names)

    def rating_history(self, name: str, team_size: int | None = None) -> list[dict[str, Any]]:
        agent = self.agent(name)
        sql = "SELECT * FROM rating_history WHERE agent_id = ?"
        args: list[Any] = [agent.id]
        if team_size is not None:
            sql += " AND team_size = ?"
            args.append(team_size)
        return list(self.db.query(sql + " ORDER BY id", args))

    def recompute_ratings(self, team_size: int) -> dict[str, tuple[float, float, float]]:
        """(elo, mu, sigma) per agent name from replaying every recorded game in order.

        Used to check that the stored ratings lost or doubled no update.
        """
        cfg = self.ratings_cfg
        initial = (cfg.elo.initial, cfg.trueskill.mu, cfg.trueskill.sigma)
        state: dict[str, tuple[float, float, float]] = {}
        for g in self.games(team_size):
            if g["blue"] == g["orange"]:
                continue
            score = rating_math.score_from_goals(g["blue_goals"], g["orange_goals"])
            state[g["blue"]], state[g["orange"]] = self._rate_pair(
                state.get(g["blue"], initial), state.get(g["orange"], initial), score)
        return state

    # ------------------------------------------------------------------ payoff

    def record_payoff(self, learner: str, team_size: int, results: dict[str, tuple[float, float, float]],
                      decay: float = 1.0) -> None:
        """Add (wins, draws, games) per opponent name to the learner's payoff, decaying old counts first."""
        with self.transaction():
            now = utc_now()
            for opponent, (wins, draws, games) in results.items():
                opp = self.agent(opponent)
                self.db.execute(
                    """INSERT INTO payoff (learner, opponent_id, team_size, wins, draws, games, updated)
                       VALUES (?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT (learner, opponent_id, team_size) DO UPDATE SET
                           wins = wins * ? + excluded.wins, draws = draws * ? + excluded.draws,
                           games = games * ? + excluded.games, updated = excluded.updated""",
                    [learner, opp.id, team_size, wins, draws, games, now, decay, decay, decay],
                )

    def payoff(self, learner: str, team_size: int) -> dict[str, tuple[float, float, float]]:
        """(wins, draws, games) per opponent name for a learner."""
        rows = self.db.query(
            """SELECT a.name, p.wins, p.draws, p.games FROM payoff p JOIN agents a ON a.id = p.opponent_id
               WHERE p.learner = ? AND p.team_size = ?""", [learner, team_size])
        return {r["name"]: (r["wins"], r["draws"], r["games"]) for r in rows}

    # ------------------------------------------------------------------ training runs

    def record_run_metrics(self, run: str, team_size: int, steps: int, metrics: dict[str, float]) -> None:
        """Keep a training run's latest headline metrics (merged over earlier ones)."""
        with self.transaction():
            rows = list(self.db.query("SELECT metrics_json FROM training_runs WHERE run = ?", [run]))
            merged = {**(json.loads(rows[0]["metrics_json"]) if rows else {}), **metrics}
            now = utc_now()
            self.db.execute(
                """INSERT INTO training_runs (run, team_size, started, updated, steps, metrics_json)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT (run) DO UPDATE SET updated = excluded.updated, steps = excluded.steps,
                       metrics_json = excluded.metrics_json""",
                [run, team_size, now, now, steps, json.dumps(merged, sort_keys=True)])

    def training_runs(self) -> list[dict[str, Any]]:
        rows = list(self.db.query("SELECT * FROM training_runs ORDER BY updated DESC"))
        return [dict(r, metrics=json.loads(r["metrics_json"])) for r in rows]

    # ------------------------------------------------------------------ curricula

    def start_curriculum(self, name: str, spec: dict[str, Any], source: str,
                         stages: Sequence[tuple[str, int, str]]) -> dict[str, Any]:
        """Create a curriculum's progress rows, or check that a resumed one has the same stages.

        `stages`: (stage name, team size, run name) in order. A resumed curriculum keeps its
        progress and takes the new spec (budgets and gates may change; the stages may not).
        """
        with self.transaction():
            now = utc_now()
            known = [(r["name"], r["team_size"], r["run"]) for r in self.db.query(
                "SELECT name, team_size, run FROM curriculum_stages WHERE curriculum = ? ORDER BY stage_index", [name])]
            if known and known != [tuple(s) for s in stages]:
                raise LeagueError(
                    f"Curriculum {name!r} was started with the stages {', '.join(n for n, _, _ in known)}; "
                    "resume it with the same stages, or start a new one with --name.")
            if known:
                self.db.execute("UPDATE curricula SET spec_json = ?, source = ?, updated = ? WHERE name = ?",
                                [json.dumps(spec, sort_keys=True), source, now, name])
            else:
                self.db.execute(
                    """INSERT INTO curricula (name, status, stage_index, spec_json, source, started, updated)
                       VALUES (?, 'running', 0, ?, ?, ?, ?)""", [name, json.dumps(spec, sort_keys=True), source, now, now])
                for i, (stage, team_size, run) in enumerate(stages):
                    self.db.execute(
                        """INSERT INTO curriculum_stages (curriculum, stage_index, name, team_size, run)
                           VALUES (?, ?, ?, ?, ?)""", [name, i, stage, team_size, run])
        return self.curriculum(name)

    def curricula(self) -> list[dict[str, Any]]:
        """Every curriculum, most recently updated first."""
        return [dict(r, spec=json.loads(r["spec_json"]))
                for r in self.db.query("SELECT * FROM curricula ORDER BY updated DESC, name")]

    def curriculum(self, name: str) -> dict[str, Any]:
        """One curriculum with its spec and its `stages` (agent ids resolved to names)."""
        rows = list(self.db.query("SELECT * FROM curricula WHERE name = ?", [name]))
        if not rows:
            raise unknown_name("curriculum", name, [r["name"] for r in self.db.query("SELECT name FROM curricula")])
        stages = list(self.db.query(
            """SELECT s.*, a.name AS start_agent, f.name AS final_agent FROM curriculum_stages s
               LEFT JOIN agents a ON a.id = s.start_agent_id LEFT JOIN agents f ON f.id = s.final_agent_id
               WHERE s.curriculum = ? ORDER BY s.stage_index""", [name]))
        return dict(rows[0], spec=json.loads(rows[0]["spec_json"]), stages=stages)

    def update_curriculum(self, name: str, **values: Any) -> None:
        """Set `status`, `stage_index` and/or `message` of a curriculum."""
        allowed = {"status", "stage_index", "message"}
        if not values or set(values) - allowed:
            raise ValueError(f"update_curriculum takes {sorted(allowed)}, got {sorted(values)}")
        sets = ", ".join(f"{k} = ?" for k in values)
        with self.transaction():
            self.db.execute(f"UPDATE curricula SET {sets}, updated = ? WHERE name = ?",
                            [*values.values(), utc_now(), name])

    def update_curriculum_stage(self, name: str, index: int, **values: Any) -> None:
        """Set a stage's `status`, `steps`, `start_steps`, `started`, `finished`, `start_agent`
        and/or `final_agent` (agent names)."""
        allowed = {"status", "steps", "start_steps", "started", "finished", "start_agent", "final_agent"}
        if not values or set(values) - allowed:
            raise ValueError(f"update_curriculum_stage takes {sorted(allowed)}, got {sorted(values)}")
        with self.transaction():
            cols = {}
            for key, value in values.items():
                if key in ("start_agent", "final_agent"):
                    cols[f"{key}_id"] = self.agent(value).id if value else None
                else:
                    cols[key] = value
            sets = ", ".join(f"{k} = ?" for k in cols)
            self.db.execute(f"UPDATE curriculum_stages SET {sets} WHERE curriculum = ? AND stage_index = ?",
                            [*cols.values(), name, index])
            self.db.execute("UPDATE curricula SET updated = ? WHERE name = ?", [utc_now(), name])

    def record_gate_check(self, name: str, index: int, agent: str, steps: int, passed: bool,
                          criteria: list[dict[str, Any]]) -> int:
        """Keep one gate check of a curriculum stage (its games are recorded separately, as evaluation games)."""
        with self.transaction():
            cur = self.db.execute(
                """INSERT INTO gate_checks (curriculum, stage_index, agent_id, steps, passed, criteria_json, checked)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                [name, index, self.agent(agent).id, steps, int(passed), json.dumps(criteria), utc_now()])
            self.db.execute("UPDATE curricula SET updated = ? WHERE name = ?", [utc_now(), name])
        return int(cur.lastrowid)

    def gate_checks(self, name: str, index: int | None = None) -> list[dict[str, Any]]:
        """A curriculum's gate checks in order (optionally one stage's), with agent names and criteria."""
        sql = """SELECT g.*, a.name AS agent FROM gate_checks g JOIN agents a ON a.id = g.agent_id
                 WHERE g.curriculum = ?"""
        args: list[Any] = [name]
        if index is not None:
            sql += " AND g.stage_index = ?"
            args.append(index)
        rows = self.db.query(sql + " ORDER BY g.id", args)
        return [dict(r, passed=bool(r["passed"]), criteria=json.loads(r["criteria_json"])) for r in rows]

    # ------------------------------------------------------------------ tournaments

    def create_tournament(self, name: str, team_size: int, seed: int, games_per_pair: int,
                          planned_games: int, entrants: Sequence[str], config: dict[str, Any]) -> int:
        with self.transaction():
            cur = self.db.execute(
                """INSERT INTO tournaments (name, team_size, seed, games_per_pair, planned_games,
                       entrants_json, config_json, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                [name, team_size, seed, games_per_pair, planned_games, json.dumps(list(entrants)),
                 json.dumps(config, sort_keys=True), utc_now()],
            )
        return int(cur.lastrowid)

    def tournament(self, tournament_id: int) -> dict[str, Any]:
        rows = list(self.db.query("SELECT * FROM tournaments WHERE id = ?", [tournament_id]))
        if not rows:
            raise LeagueError(f"No tournament with id {tournament_id}.")
        return rows[0]

    def tournaments(self) -> list[dict[str, Any]]:
        return list(self.db.query("SELECT * FROM tournaments ORDER BY id"))

    def abandon_tournament(self, tournament_id: int, reason: str) -> dict[str, Any]:
        """End an unfinished tournament for good: never resumed again; its finished games stay recorded."""
        with self.transaction():
            t = self.tournament(tournament_id)
            if t["status"] in ("finished", "abandoned"):
                raise LeagueError(f"Tournament {tournament_id} is already {t['status']}.")
            self.set_tournament_status(tournament_id, "abandoned")
            self.db.execute("UPDATE tournaments SET message = ? WHERE id = ?", [reason, tournament_id])
        return self.tournament(tournament_id)

    def set_tournament_status(self, tournament_id: int, status: str) -> None:
        with self.transaction():
            finished = utc_now() if status in ("finished", "abandoned") else None
            self.db.execute(
                """UPDATE tournaments SET status = ?, finished = ?,
                       finished_games = (SELECT COUNT(*) FROM games WHERE tournament_id = ?) WHERE id = ?""",
                [status, finished, tournament_id, tournament_id],
            )
