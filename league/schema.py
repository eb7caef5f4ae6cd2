"""The league database schema, as an ordered list of migrations (documented in docs/schema.md).

Each migration runs in one transaction together with its record in `_sqlite_migrations`,
so applying them is idempotent and a failed step leaves the database as it was. The
schema version is the number of applied migrations, mirrored in `PRAGMA user_version`.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils.migrations import Migrations

migrations = Migrations("rl-league")

STATUSES = ("active", "champion", "retired")
ORIGINS = ("tournament", "evaluation", "manual")
RESULTS = ("blue", "orange", "draw")


@migrations(name="0001_initial")
def _initial(db: sqlite_utils.Database) -> None:
    db.execute(
        f"""
        CREATE TABLE agents (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            team_size INTEGER CHECK (team_size IS NULL OR team_size BETWEEN 1 AND 3),
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN {STATUSES}),
            parent_id INTEGER REFERENCES agents(id),
            created TEXT NOT NULL,
            checkpoint_path TEXT,
            checkpoint_sha256 TEXT,
            config_json TEXT,
            steps_trained INTEGER NOT NULL DEFAULT 0,
            notes TEXT NOT NULL DEFAULT ''
        )"""
    )
    db.execute(
        """
        CREATE TABLE tournaments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            status TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
            seed INTEGER NOT NULL,
            games_per_pair INTEGER NOT NULL,
            planned_games INTEGER NOT NULL,
            finished_games INTEGER NOT NULL DEFAULT 0,
            entrants_json TEXT NOT NULL,
            config_json TEXT NOT NULL,
            created TEXT NOT NULL,
            finished TEXT
        )"""
    )
    db.execute(
        f"""
        CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            origin TEXT NOT NULL CHECK (origin IN {ORIGINS}),
            tournament_id INTEGER REFERENCES tournaments(id),
            schedule_index INTEGER,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            blue_agent_id INTEGER NOT NULL REFERENCES agents(id),
            orange_agent_id INTEGER NOT NULL REFERENCES agents(id),
            seed INTEGER NOT NULL,
            blue_goals INTEGER NOT NULL CHECK (blue_goals >= 0),
            orange_goals INTEGER NOT NULL CHECK (orange_goals >= 0),
            result TEXT NOT NULL CHECK (result IN {RESULTS}),
            length_seconds REAL NOT NULL CHECK (length_seconds >= 0),
            replay_path TEXT,
            played TEXT NOT NULL,
            UNIQUE (tournament_id, schedule_index)
        )"""
    )
    db.execute("CREATE INDEX games_blue ON games(blue_agent_id)")
    db.execute("CREATE INDEX games_orange ON games(orange_agent_id)")
    db.execute(
        """
        CREATE TABLE ratings (
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            elo REAL NOT NULL,
            mu REAL NOT NULL,
            sigma REAL NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0,
            draws INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0,
            goals_for INTEGER NOT NULL DEFAULT 0,
            goals_against INTEGER NOT NULL DEFAULT 0,
            last_played TEXT,
            PRIMARY KEY (agent_id, team_size)
        )"""
    )
    db.execute(
        """
        CREATE TABLE rating_history (
            id INTEGER PRIMARY KEY,
            game_id INTEGER NOT NULL REFERENCES games(id),
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL,
            elo_before REAL NOT NULL,
            elo_after REAL NOT NULL,
            mu_before REAL NOT NULL,
            mu_after REAL NOT NULL,
            sigma_before REAL NOT NULL,
            sigma_after REAL NOT NULL,
            played TEXT NOT NULL,
            UNIQUE (game_id, agent_id)
        )"""
    )
    db.execute("CREATE INDEX rating_history_agent ON rating_history(agent_id, team_size)")


@migrations(name="0002_payoff")
def _payoff(db: sqlite_utils.Database) -> None:
    # The learner's results against each opponent, decayed so old results fade (AlphaStar's Payoff).
    db.execute(
        """
        CREATE TABLE payoff (
            learner TEXT NOT NULL,
            opponent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            wins REAL NOT NULL DEFAULT 0,
            draws REAL NOT NULL DEFAULT 0,
            games REAL NOT NULL DEFAULT 0,
            updated TEXT NOT NULL,
            PRIMARY KEY (learner, opponent_id, team_size)
        )"""
    )


@migrations(name="0003_training_runs")
def _training_runs(db: sqlite_utils.Database) -> None:
    # One row per training run with its latest headline metrics (the full series is in runs/).
    db.execute(
        """
        CREATE TABLE training_runs (
            run TEXT PRIMARY KEY,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            started TEXT NOT NULL,
            updated TEXT NOT NULL,
            steps INTEGER NOT NULL DEFAULT 0,
            metrics_json TEXT NOT NULL DEFAULT '{}'
        )"""
    )


CURRICULUM_STATUSES = ("running", "interrupted", "stopped", "finished")
STAGE_STATUSES = ("pending", "training", "passed", "failed", "advanced")


@migrations(name="0004_curriculum")
def _curriculum(db: sqlite_utils.Database) -> None:
    # A curriculum's progress, so `league train --curriculum` resumes where it stopped and
    # `league curriculum status` can show it: one row per curriculum, one per stage, one per gate check.
    db.execute(
        f"""
        CREATE TABLE curricula (
            name TEXT PRIMARY KEY,
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {CURRICULUM_STATUSES}),
            stage_index INTEGER NOT NULL DEFAULT 0,
            spec_json TEXT NOT NULL,
            source TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            started TEXT NOT NULL,
            updated TEXT NOT NULL
        )"""
    )
    db.execute(
        f"""
        CREATE TABLE curriculum_stages (
            curriculum TEXT NOT NULL REFERENCES curricula(name),
            stage_index INTEGER NOT NULL,
            name TEXT NOT NULL,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            run TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN {STAGE_STATUSES}),
            start_agent_id INTEGER REFERENCES agents(id),
            start_steps INTEGER NOT NULL DEFAULT 0,
            steps INTEGER NOT NULL DEFAULT 0,
            final_agent_id INTEGER REFERENCES agents(id),
            started TEXT,
            finished TEXT,
            PRIMARY KEY (curriculum, stage_index)
        )"""
    )
    db.execute(
        """
        CREATE TABLE gate_checks (
            id INTEGER PRIMARY KEY,
            curriculum TEXT NOT NULL REFERENCES curricula(name),
            stage_index INTEGER NOT NULL,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            steps INTEGER NOT NULL,
            passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
            criteria_json TEXT NOT NULL,
            checked TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX gate_checks_stage ON gate_checks(curriculum, stage_index)")


TOURNAMENT_STATUSES = ("running", "finished", "interrupted", "failed", "abandoned")


@migrations(name="0005_tournament_abandon")
def _tournament_abandon(db: sqlite_utils.Database) -> None:
    # `league tournament --abandon ID`: a tournament can end as 'abandoned', with a message saying
    # why. SQLite cannot change a CHECK constraint in place, so the table is rebuilt under the same
    # name with the same ids. Foreign keys are deferred to the commit: dropping the old table
    # leaves the games' references dangling until the new table holds their rows again.
    db.execute("PRAGMA defer_foreign_keys = ON")
    db.execute("CREATE TEMP TABLE tournaments_copy AS SELECT * FROM tournaments")
    db.execute("DROP TABLE tournaments")
    db.execute(
        f"""
        CREATE TABLE tournaments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {TOURNAMENT_STATUSES}),
            seed INTEGER NOT NULL,
            games_per_pair INTEGER NOT NULL,
            planned_games INTEGER NOT NULL,
            finished_games INTEGER NOT NULL DEFAULT 0,
            entrants_json TEXT NOT NULL,
            config_json TEXT NOT NULL,
            created TEXT NOT NULL,
            finished TEXT,
            message TEXT NOT NULL DEFAULT ''
        )"""
    )
    db.execute(
        """INSERT INTO tournaments (id, name, team_size, status, seed, games_per_pair, planned_games,
               finished_games, entrants_json, config_json, created, finished)
           SELECT id, name, team_size, status, seed, games_per_pair, planned_games, finished_games,
               entrants_json, config_json, created, finished FROM tournaments_copy"""
    )
    db.execute("DROP TABLE tournaments_copy")


EXPORT_FORMATS = ("rlbot",)


@migrations(name="0006_exports")
def _exports(db: sqlite_utils.Database) -> None:
    # `league export NAME --rlbot DIR`: each export made, so `league show` can list where an agent went.
    db.execute(
        f"""
        CREATE TABLE exports (
            id INTEGER PRIMARY KEY,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            format TEXT NOT NULL CHECK (format IN ({", ".join(repr(f) for f in EXPORT_FORMATS)})),
            path TEXT NOT NULL,
            zip_path TEXT,
            deterministic INTEGER NOT NULL CHECK (deterministic IN (0, 1)),
            manifest_sha256 TEXT NOT NULL,
            created TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX exports_agent ON exports(agent_id)")


MATCH_MODES = ("sprt", "fixed")
MATCH_STATUSES = ("running", "interrupted", "finished", "abandoned")
MATCH_DECISIONS = ("H1", "H0", "inconclusive")


@migrations(name="0007_matches")
def _matches(db: sqlite_utils.Database) -> None:
    # `league match A B`: a head-to-head played as a tournament of two entrants (its games are that
    # tournament's), with what the match tests and where its statistics stand after each batch.
    db.execute(
        f"""
        CREATE TABLE matches (
            id INTEGER PRIMARY KEY,
            tournament_id INTEGER NOT NULL UNIQUE REFERENCES tournaments(id),
            a_agent_id INTEGER NOT NULL REFERENCES agents(id),
            b_agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            mode TEXT NOT NULL CHECK (mode IN {MATCH_MODES}),
            params_json TEXT,
            max_games INTEGER NOT NULL CHECK (max_games >= 2 AND max_games % 2 = 0),
            batch_pairs INTEGER NOT NULL CHECK (batch_pairs >= 1),
            game_seconds REAL NOT NULL CHECK (game_seconds > 0),
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {MATCH_STATUSES}),
            decision TEXT CHECK (decision IS NULL OR decision IN {MATCH_DECISIONS}),
            llr REAL,
            counts_json TEXT NOT NULL DEFAULT '[0, 0, 0, 0, 0]',
            elo REAL,
            elo_lo REAL,
            elo_hi REAL,
            nelo REAL,
            nelo_lo REAL,
            nelo_hi REAL,
            los REAL,
            games INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL,
            finished TEXT,
            CHECK (a_agent_id <> b_agent_id)
        )"""
    )
    db.execute("CREATE INDEX matches_agents ON matches(a_agent_id, b_agent_id)")


PROMOTION_METHODS = ("manual", "sprt", "training")


@migrations(name="0008_promotions")
def _promotions(db: sqlite_utils.Database) -> None:
    # Gated promotion: each change of a stage's champion (`league promote`, by hand or after an SPRT
    # match against the champion, or by training), and each SPRT that left the champion in place.
    db.execute(
        f"""
        CREATE TABLE promotions (
            id INTEGER PRIMARY KEY,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            previous_champion_id INTEGER REFERENCES agents(id),
            method TEXT NOT NULL CHECK (method IN {PROMOTION_METHODS}),
            promoted INTEGER NOT NULL CHECK (promoted IN (0, 1)),  -- 0: the SPRT did not accept H1, the champion stays
            match_id INTEGER REFERENCES matches(id),
            decision TEXT CHECK (decision IS NULL OR decision IN {MATCH_DECISIONS}),
            llr REAL, elo REAL, elo_lo REAL, elo_hi REAL, los REAL, games INTEGER,
            created TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX promotions_stage ON promotions(team_size, agent_id)")


SIDES = ("blue", "orange")


@migrations(name="0009_game_members")
def _game_members(db: sqlite_utils.Database) -> None:
    # Mixed teams (`league match "A+necto" "B+C" --stage 2v2`): who drove each car of a game where a side
    # is a team of several members. Such a game is marked `mixed` and lists every car of both sides here;
    # its blue_agent_id and orange_agent_id hold each side's first member (car slot 0). A game of two
    # single agents has no rows here and mixed = 0, exactly as before.
    db.execute("ALTER TABLE games ADD COLUMN mixed INTEGER NOT NULL DEFAULT 0 CHECK (mixed IN (0, 1))")
    db.execute(
        f"""
        CREATE TABLE game_members (
            game_id INTEGER NOT NULL REFERENCES games(id),
            side TEXT NOT NULL CHECK (side IN {SIDES}),
            slot INTEGER NOT NULL CHECK (slot BETWEEN 0 AND 2),
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            PRIMARY KEY (game_id, side, slot)
        )"""
    )
    db.execute("CREATE INDEX game_members_agent ON game_members(agent_id)")


@migrations(name="0010_probes")
def _probes(db: sqlite_utils.Database) -> None:
    # Exploitability probes (`league probe NAME`): a best response trained against the target alone,
    # then played against it; `wins` of `games` is the probe's record, a lower bound on the target's
    # exploitability (league.probes). The probe's final snapshot is kept (retired) as `probe_id`.
    db.execute(
        """
        CREATE TABLE probes (
            id INTEGER PRIMARY KEY,
            target_id INTEGER NOT NULL REFERENCES agents(id),
            probe_id INTEGER NOT NULL REFERENCES agents(id),
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            minutes REAL NOT NULL CHECK (minutes > 0),
            steps INTEGER NOT NULL CHECK (steps >= 0),
            games INTEGER NOT NULL CHECK (games > 0),
            wins INTEGER NOT NULL CHECK (wins >= 0),
            draws INTEGER NOT NULL CHECK (draws >= 0),
            losses INTEGER NOT NULL CHECK (losses >= 0),
            seed INTEGER NOT NULL,
            created TEXT NOT NULL,
            CHECK (wins + draws + losses = games)
        )"""
    )
    db.execute("CREATE INDEX probes_target ON probes(target_id, team_size)")


@migrations(name="0011_league_roles")
def _league_roles(db: sqlite_utils.Database) -> None:
    # League roles (`league train --league FILE`): a league's roles, each with its current run (a new one at
    # every restart of an exploiter), its restarts and the wall-clock seconds it has trained (what the time
    # shares are kept by); and every check of an exploiter against its target, the reset it caused or not.
    db.execute(
        """
        CREATE TABLE leagues (
            name TEXT PRIMARY KEY,
            team_size INTEGER NOT NULL CHECK (team_size BETWEEN 1 AND 3),
            spec_json TEXT NOT NULL,
            source TEXT NOT NULL,
            status TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            started TEXT NOT NULL,
            updated TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE league_roles (
            league TEXT NOT NULL REFERENCES leagues(name),
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            restart INTEGER NOT NULL DEFAULT 1 CHECK (restart >= 1),
            run TEXT NOT NULL,
            seconds REAL NOT NULL DEFAULT 0 CHECK (seconds >= 0),
            PRIMARY KEY (league, role)
        )"""
    )
    db.execute(
        """
        CREATE TABLE role_checks (
            id INTEGER PRIMARY KEY,
            league TEXT NOT NULL,
            role TEXT NOT NULL,
            restart INTEGER NOT NULL,
            agent_id INTEGER NOT NULL REFERENCES agents(id),
            steps INTEGER NOT NULL CHECK (steps >= 0),
            targets TEXT NOT NULL,
            games INTEGER NOT NULL CHECK (games > 0),
            wins INTEGER NOT NULL CHECK (wins >= 0),
            draws INTEGER NOT NULL CHECK (draws >= 0),
            losses INTEGER NOT NULL CHECK (losses >= 0),
            reset TEXT NOT NULL DEFAULT '',
            created TEXT NOT NULL,
            CHECK (wins + draws + losses = games),
            FOREIGN KEY (league, role) REFERENCES league_roles(league, role)
        )"""
    )


@migrations(name="0012_match_play")
def _match_play(db: sqlite_utils.Database) -> None:
    # `league match A B --sampled`: how a match's network agents choose their actions, part of what the
    # match is (a resumed or finished one keeps it). 1: their most likely action (argmax), as every match
    # played before this column was; 0: drawn from their policy. Community and scripted bots play as
    # they always do.
    db.execute("ALTER TABLE matches ADD COLUMN deterministic INTEGER NOT NULL DEFAULT 1 "
               "CHECK (deterministic IN (0, 1))")


def schema_version(db: sqlite_utils.Database) -> int:
    """Number of migrations applied to this database."""
    return len(migrations.applied(db))


def is_foreign(db: sqlite_utils.Database) -> bool:
    """Whether `db` is another application's: it has tables (or migration records) but no rl-league migration.

    An empty database is not foreign, nor one holding only an empty migrations table (left by a
    first migration that failed): a league created there writes over nothing.
    """
    # One read transaction: its reads see one state of the file, so a `league init` committing its
    # first migration between them cannot make a league's own tables look like another application's.
    own = not db.conn.in_transaction
    if own:
        db.conn.execute("BEGIN")
    try:
        if migrations.applied(db):
            return False
        records = Migrations.migrations_table
        names = [n for n in db.table_names() + db.view_names() if not n.startswith("sqlite_")]
        return any(n != records for n in names) or (records in names and db[records].count > 0)
    finally:
        if own:
            db.conn.execute("COMMIT")


def latest_version() -> int:
    """Number of migrations this rl-league knows: all of them are pending on an empty database
    (sqlite-utils lists its registered migrations only through `pending`)."""
    empty = sqlite_utils.Database(memory=True)
    try:
        return len(migrations.pending(empty))
    finally:
        empty.close()


def migrate(db: sqlite_utils.Database) -> int:
    """Apply pending migrations; returns the schema version reached."""
    migrations.apply(db)
    version = schema_version(db)
    db.execute(f"PRAGMA user_version = {version}")
    return version
