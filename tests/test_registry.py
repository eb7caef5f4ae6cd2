"""The registry on real SQLite files."""

import multiprocessing as mp
import sqlite3
from dataclasses import replace

import pytest

from league import schema
from league.errors import LeagueError, NotFoundError
from league.lineage import ancestors, descendants, line_to, lineage_of, roots
from league.registry import BASELINES, GameRecord, MatchSettings, Registry, connect
from league.results import Record

from conftest import play, recompute_ratings


def test_create_makes_baselines_wal_and_foreign_keys(home, registry):
    assert registry.agent_store.names() == list(BASELINES) == ["random", "rule", "atba", "rule-pro"]
    assert registry.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert registry.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert schema.schema_version(registry.db) == schema.latest_version()
    assert registry.db.execute("PRAGMA user_version").fetchone()[0] == schema.latest_version()


def test_agent_round_trip_and_duplicate_name(registry):
    registry.agent_store.add("ppo-v1", "mlp", 1, checkpoint_path="c/ppo-v1.safetensors", checkpoint_sha256="ab" * 32,
                       config={"seed": 3}, steps_trained=1000, notes="first")
    registry.agent_store.add("ppo-v2", "mlp", 1, parent="ppo-v1", steps_trained=2000)
    a = registry.agent_store.get("ppo-v1")
    assert (a.kind, a.team_size, a.status, a.stage, a.steps_trained, a.config) == ("mlp", 1, "active", "1v1", 1000, {"seed": 3})
    assert registry.agent_store.get("ppo-v2").parent_id == a.id
    with pytest.raises(LeagueError, match="already exists"):
        registry.agent_store.add("ppo-v1", "mlp", 1)
    with pytest.raises(NotFoundError, match="did you mean 'ppo-v2', 'ppo-v1'"):
        registry.agent_store.add("x", "mlp", 1, parent="ppo-v3x")
    assert "x" not in registry.agent_store.names()


def test_status_changes_keep_one_champion_per_team_size(registry):
    for name, size in (("a", 1), ("b", 1), ("c", 2)):
        registry.agent_store.add(name, "mlp", size)
    registry.agent_store.set_status("a", "champion")
    registry.agent_store.set_status("c", "champion")
    registry.agent_store.set_status("b", "champion")
    assert [registry.agent_store.get(n).status for n in "abc"] == ["active", "champion", "champion"]
    assert registry.agent_store.champion(1).name == "b" and registry.agent_store.champion(2).name == "c"
    registry.agent_store.set_status("a", "retired")
    assert "a" not in [x.name for x in registry.agent_store.all(1)]
    assert "a" in [x.name for x in registry.agent_store.all(1, include_retired=True)]
    with pytest.raises(LeagueError, match="baseline"):
        registry.agent_store.set_status("rule", "champion")


def test_record_game_updates_ratings_history_and_counts(registry):
    registry.agent_store.add("a", "mlp", 1)
    gid = play(registry, "a", "rule", 3, 1)
    play(registry, "rule", "a", 2, 2)
    ra, rr = registry.game_store.rating("a", 1), registry.game_store.rating("rule", 1)
    assert ra.games == rr.games == 2
    assert (ra.wins, ra.draws, ra.losses, ra.goals_for, ra.goals_against) == (1, 1, 0, 5, 3)
    assert ra.elo > 1500 > rr.elo and ra.elo + rr.elo == pytest.approx(3000)
    hist = registry.game_store.rating_history("a", 1)
    assert [h.game_id for h in hist] == [gid, gid + 1]
    assert hist[0].elo_after == hist[1].elo_before
    assert registry.game_store.rating("a", 2).games == 0  # ratings are per team size
    stored = {n: (registry.game_store.rating(n, 1).elo, registry.game_store.rating(n, 1).mu, registry.game_store.rating(n, 1).sigma) for n in ("a", "rule")}
    recomputed = recompute_ratings(registry.game_store, 1)
    for name in stored:
        assert recomputed[name] == pytest.approx(stored[name])


def test_mirror_games_are_recorded_but_not_rated(registry):
    play(registry, "rule", "rule", 1, 0)
    assert len(registry.game_store.games()) == 1 and registry.game_store.rating("rule", 1).games == 0


def test_failing_write_mid_transaction_leaves_nothing(registry):
    registry.agent_store.add("a", "mlp", 1)
    with pytest.raises(sqlite3.IntegrityError):
        # Negative goals violate a CHECK after the game row's neighbours would be written.
        play(registry, "a", "rule", -1, 0)
    assert registry.game_store.games() == [] and registry.game_store.rating_history("a") == []
    with pytest.raises(RuntimeError):
        with registry.transaction():
            registry.db.execute("UPDATE agents SET notes = 'half' WHERE name = 'a'")
            raise RuntimeError("boom")
    assert registry.agent_store.get("a").notes == ""


def test_failure_after_some_rows_are_written_rolls_back_all(registry):
    registry.agent_store.add("a", "mlp", 1)
    # The games and ratings rows are written before rating_history: fail on the last one.
    registry.db.execute(
        "CREATE TRIGGER fail_history BEFORE INSERT ON rating_history BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        play(registry, "a", "rule", 1, 0)
    registry.db.execute("DROP TRIGGER fail_history")
    assert registry.game_store.games() == [] and registry.game_store.rating("a", 1).games == 0
    assert list(registry.db.query("SELECT * FROM ratings")) == []


def test_migrations_are_idempotent(home):
    db = connect(home.db_path)
    before = schema.schema_version(db)
    assert schema.migrate(db) == before
    assert schema.migrate(db) == before
    Registry.create(home.db_path).close()  # re-running init keeps one copy of each baseline
    reg = Registry.open(home.db_path)
    assert reg.agent_store.names() == list(BASELINES)


def test_open_refuses_what_is_not_a_league(tmp_path):
    with pytest.raises(LeagueError, match="No league database"):
        Registry.open(tmp_path / "missing.db")
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(LeagueError, match="not a league database"):
        Registry.open(bad)


def test_readonly_connection_cannot_write(home):
    reg = Registry.open(home.db_path, readonly=True)
    with pytest.raises(sqlite3.OperationalError):
        reg.db.execute("UPDATE agents SET notes = 'x'")


def _writer(db_path: str, prefix: str, n: int) -> None:
    reg = Registry.open(__import__("pathlib").Path(db_path))
    for i in range(n):
        reg.agent_store.add(f"{prefix}-{i}", "mlp", 1)
        reg.game_store.record(GameRecord(blue=f"{prefix}-{i}", orange="rule", team_size=1, seed=i,
                                   blue_goals=i % 3, orange_goals=1, length_seconds=10.0))
    reg.close()


def test_two_processes_writing_at_once_lose_nothing(home):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(home.db_path), p, 40)) for p in ("x", "y")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    reg = Registry.open(home.db_path)
    assert len(reg.agent_store.names()) == len(BASELINES) + 80
    assert len(reg.game_store.games()) == 80
    assert reg.game_store.rating("rule", 1).games == 80
    assert len(list(reg.db.query("SELECT * FROM rating_history"))) == 160
    stored = {n: reg.game_store.rating(n, 1) for n in reg.agent_store.names()}
    for name, (elo, mu, sigma) in recompute_ratings(reg.game_store, 1).items():
        assert stored[name].elo == pytest.approx(elo) and stored[name].sigma == pytest.approx(sigma)


def test_lineage_graph(registry):
    registry.agent_store.add("v1", "mlp", 1)
    registry.agent_store.add("v2", "mlp", 1, parent="v1")
    registry.agent_store.add("v3", "mlp", 1, parent="v2")
    registry.agent_store.add("v2b", "mlp", 1, parent="v1")
    g = lineage_of(registry)
    assert line_to(g, "v3") == ["v1", "v2", "v3"]
    assert ancestors(g, "v3") == {"v1", "v2"}
    assert descendants(g, "v1") == {"v2", "v3", "v2b"}
    assert set(roots(g)) == {*BASELINES, "v1"}


def test_an_older_database_is_upgraded_on_open(tmp_path):
    path = tmp_path / "old.db"
    db = connect(path)
    schema.migrations.apply(db, stop_before="0002_payoff")  # a league created by the first release
    assert schema.schema_version(db) == 1
    db.conn.close()
    reg = Registry.open(path)
    assert schema.schema_version(reg.db) == schema.latest_version()
    assert {"payoff", "training_runs"} <= set(reg.db.table_names())
    ro = Registry.open(path, readonly=True)  # and read-only opens never migrate
    assert schema.schema_version(ro.db) == schema.latest_version()


def older_league(path, stop_before: str, seed: int = 0) -> tuple[Registry, int]:
    """A league database migrated up to (not including) `stop_before`, holding the baselines and a
    tournament of rule and random (2 games per pair, its id returned), written as that version did."""
    db = connect(path)
    schema.migrations.apply(db, stop_before=stop_before)
    reg = Registry(db)
    with reg.transaction():
        for name in BASELINES:
            reg.agent_store.insert(name=name, kind=name, team_size=None)
    tid = reg.db.execute(
        """INSERT INTO tournaments (name, team_size, seed, games_per_pair, planned_games, entrants_json,
               config_json, created) VALUES ('t', 1, ?, 2, 2, '["rule", "random"]', '{}', 'x')""", [seed]).lastrowid
    db.conn.commit()
    return reg, tid


def test_version_5_rebuilds_tournaments_keeping_ids_games_and_foreign_keys(tmp_path):
    path = tmp_path / "v4.db"
    reg, tid = older_league(path, "0005_tournament_abandon")
    play(reg, "rule", "random", 2, 0, tournament_id=tid, schedule_index=0, origin="tournament")
    reg.db.conn.close()
    reg = Registry.open(path)
    assert schema.schema_version(reg.db) == schema.latest_version()
    assert reg.tournament_store.get(tid).finished_games == 1 and reg.tournament_store.get(tid).message == ""
    assert [g.tournament_id for g in reg.game_store.games()] == [tid]
    assert reg.db.execute("PRAGMA foreign_key_check").fetchall() == []
    with pytest.raises(sqlite3.IntegrityError):  # games still point at the rebuilt table
        play(reg, "rule", "random", 1, 0, tournament_id=tid + 1, schedule_index=0, origin="tournament")
    reg.tournament_store.abandon(tid, "testing")
    assert reg.tournament_store.get(tid).status == "abandoned"


def test_version_12_keeps_older_matches_argmax_and_tells_sampled_ones_apart(tmp_path):
    path = tmp_path / "v11.db"
    reg, tid = older_league(path, "0012_match_play", seed=3)
    ids = [reg.agent_store.get(n).id for n in ("rule", "random")]
    reg.db.execute("""INSERT INTO matches (tournament_id, a_agent_id, b_agent_id, team_size, mode, max_games,
                          batch_pairs, game_seconds, created) VALUES (?, ?, ?, 1, 'fixed', 2, 1, 8.0, 'x')""",
                   [tid, *ids])
    reg.db.conn.commit()
    reg.db.conn.close()
    reg = Registry.open(path)
    assert schema.schema_version(reg.db) == schema.latest_version() >= 12
    old = reg.match_store.get(1)
    assert old.deterministic == 1  # every match before version 12 played argmax
    settings = MatchSettings("rule", "random", 1, "fixed", None, 2, 8.0, 3)
    assert reg.match_store.open(settings, 1, {}) == (old, False)  # the same settings find it
    sampled, created = reg.match_store.open(replace(settings, deterministic=False), 1, {})
    assert created and sampled.id == 2 and sampled.deterministic == 0
    with pytest.raises(sqlite3.IntegrityError):
        reg.db.execute("UPDATE matches SET deterministic = 2 WHERE id = 2")


def test_stores_share_one_transaction_and_return_typed_ratings(registry):
    registry.agent_store.add("a", "mlp", 1)
    with pytest.raises(LeagueError):
        with registry.transaction():  # a write through two stores, then a failure: neither is kept
            registry.agent_store.add("b", "mlp", 1)
            registry.game_store.record(GameRecord("a", "b", 1, 0, 1, 0, 60.0))
            registry.agent_store.get("nobody")
    assert "b" not in registry.agent_store.names() and registry.game_store.games() == []
    rating = registry.game_store.rating("a", 1)
    assert (rating.elo, rating.games) == (registry.ratings_cfg.elo.initial, 0)


def test_every_migration_module_is_one_step_in_order():
    from pathlib import Path

    import league.migrations as steps

    files = sorted(p.stem for p in Path(steps.__file__).parent.glob("m[0-9]*.py"))
    assert [step.__name__.rsplit(".", 1)[1] for step in steps.STEPS] == files
    assert [int(name[1:5]) for name in files] == list(range(1, len(files) + 1))
    assert schema.latest_version() == len(files)


def test_version_14_keeps_every_promotion_and_takes_round_robin_ones(tmp_path):
    """The promotions table is rebuilt to take method 'round-robin' (arena.crown) and its tournament: the rows
    written before stay as they were, ids and all."""
    path = tmp_path / "v13.db"
    reg, tid = older_league(path, "0014_crowning")
    reg.db.execute("INSERT INTO agents (name, kind, team_size, status, created) VALUES ('a', 'mlp', 1, 'champion', 'x')")
    agent = reg.db.execute("SELECT id FROM agents WHERE name = 'a'").fetchone()[0]
    reg.db.execute("""INSERT INTO promotions (agent_id, team_size, method, promoted, created)
                      VALUES (?, 1, 'manual', 1, 'then')""", [agent])
    with pytest.raises(sqlite3.IntegrityError):  # the old table has no such method
        reg.db.execute("INSERT INTO promotions (agent_id, team_size, method, promoted, created) "
                       "VALUES (?, 1, 'round-robin', 1, 'x')", [agent])
    reg.db.conn.commit()
    reg.db.conn.close()
    reg = Registry.open(path)
    assert schema.schema_version(reg.db) == schema.latest_version() >= 14
    [old] = reg.promotion_store.all()
    assert (old.id, old.agent, old.method, old.created, old.tournament_id) == (1, "a", "manual", "then", None)
    reg.agent_store.add("b", "mlp", 1)
    crowned = reg.promotion_store.crown("b", tid, held_by="a")
    assert (crowned.method, crowned.tournament_id, crowned.previous_champion) == ("round-robin", tid, "a")
    assert reg.agent_store.champion(1).name == "b" and reg.db.execute("PRAGMA foreign_key_check").fetchall() == []
    with pytest.raises(LeagueError, match=r"champion is now 'b' \(round robin 1 was played while a held the title\)"):
        reg.promotion_store.crown("a", tid, held_by="a")  # the title changed hands while it was played


def test_version_15_keeps_panel_tests_and_their_openings_from_then_on(tmp_path):
    """Panel tests recorded before version 15 read as openings not kept (None), before the home migrates (read-only)
    and after; a test recorded after keeps its openings."""
    path = tmp_path / "v14.db"
    reg, _ = older_league(path, "0015_panel_openings")
    reg.agent_store.add("a", "mlp", 1)
    ids = {r["name"]: r["id"] for r in reg.db.query("SELECT id, name FROM agents")}
    test = reg.db.execute("""INSERT INTO panel_tests (agent_id, team_size, run, steps, passed, seconds, seed, created)
                             VALUES (?, 1, 'r', 10, 1, 1.0, 4, 'then')""", [ids["a"]]).lastrowid  # as version 14 did
    reg.db.execute("INSERT INTO panel_results VALUES (?, ?, 3, 1, 0)", [test, ids["rule"]])
    reg.db.conn.commit()
    reg.db.conn.close()
    ro = Registry.open(path, readonly=True)
    assert [(t.agent, t.opening_jitter) for t in ro.panel_store.of("a")] == [("a", None)]
    ro.close()
    reg = Registry.open(path)
    assert schema.schema_version(reg.db) == schema.latest_version() >= 15
    reg.panel_store.add("a", "r", 20, {"rule": Record(4, 0, 0)}, passed=True, beaten_by=None, seconds=1.0, seed=5,
                        opening_jitter=100.0)
    [old, new] = reg.panel_store.of("a")
    assert (old.steps, old.records, old.opening_jitter) == (10, {"rule": Record(3, 1, 0)}, None)
    assert (new.steps, new.opening_jitter) == (20, 100.0)
    with pytest.raises(sqlite3.IntegrityError):
        reg.db.execute("UPDATE panel_tests SET opening_jitter = -1 WHERE id = ?", [new.id])

