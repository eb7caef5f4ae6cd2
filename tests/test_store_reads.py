"""The stores' batched reads and league.game_search, the read model of game listings: what the
dashboard reads through them, on real SQLite files, through the read-only connection it opens."""

import pytest

from dashboard import queries
from league.errors import LeagueError
from league.game_search import GameFilter, find_games, players, records_against
from league.probes import ProbeResult
from league.registry import MatchSettings, Registry, SprtTest

from conftest import play


@pytest.fixture
def league(registry, home):
    """A small league: a run with versions (one retired), a community bot, 1v1 and 2v2 games, a mixed one."""
    s = registry.agent_store
    s.add("run-v1", "mlp", 1, steps_trained=100)
    s.add("run-v2", "mlp", 1, parent="run-v1", steps_trained=200)
    s.add("run-v10", "mlp", 1, parent="run-v1", steps_trained=1000, status="retired")
    s.add("rXn-v1", "mlp", 1)  # an underscore in a run name is no LIKE wildcard
    s.add("r_n-v3", "mlp", 1)
    s.add("team-v1", "mlp", 2)
    s.add("necto", "community", None, config={"community": {"title": "Necto", "team_sizes": [1, 2]}})
    play(registry, "run-v1", "rule", 3, 1)
    play(registry, "rule", "run-v2", 0, 0)
    play(registry, "necto", "run-v2", 2, 1, replay_path="replays/a.rlr")
    play(registry, "run-v1", "necto", 0, 1)
    play(registry, "run-v1", "run-v1", 1, 1)  # a mirror game: recorded, never rated
    play(registry, "team-v1", "necto", 1, 2, team_size=2)
    play(registry, "team-v1+necto", "rule", 2, 0, team_size=2)
    return registry


@pytest.fixture
def readonly(league, home):
    reg = Registry.open(home.db_path, readonly=True)
    yield reg
    reg.close()


def test_agent_reads(readonly):
    agents = readonly.agent_store
    assert agents.count() == len(agents.names()) == 4 + 7
    assert agents.stage_sizes() == [1, 2]
    assert [a.name for a in agents.of_kind("community")] == ["necto"]
    assert [a.name for a in agents.children("run-v1")] == ["run-v2", "run-v10"]
    assert agents.children("nobody") == []
    versions = agents.versions(["run", "r_n", "none"])
    assert [(k, a.name, a.steps_trained) for k, a in versions["run"]] == [(1, "run-v1", 100), (2, "run-v2", 200),
                                                                          (10, "run-v10", 1000)]
    assert [a.name for _, a in versions["r_n"]] == ["r_n-v3"] and versions["none"] == []
    assert agents.versions([]) == {}


def test_game_reads(readonly):
    games = readonly.game_store
    assert games.counts_by_team_size() == {1: 5, 2: 2}
    every = games.games()
    for g in every:
        assert games.game(g.id) == g  # a mixed game's sides named as games() names them
    assert every[-1].blue == "team-v1+necto"
    with pytest.raises(LeagueError, match="No game with id 999"):
        games.game(999)
    ids = [readonly.agent_store.get(n).id for n in ("run-v1", "necto")]
    ratings = games.ratings(ids)
    assert [(r.agent_id, r.team_size) for r in ratings] == [(ids[0], 1), (ids[1], 1), (ids[1], 2)]
    assert ratings[0] == games.rating("run-v1", 1)
    assert games.ratings([]) == []
    assert len(games.ratings()) == len({(r.agent_id, r.team_size) for r in games.ratings()}) == 4 + 3
    histories = games.rating_histories(["run-v1", "necto", "nobody"], 1)
    assert histories["run-v1"] == games.rating_history("run-v1", 1) and len(histories["run-v1"]) == 2
    assert histories["necto"] == games.rating_history("necto", 1) and histories["nobody"] == []


def test_counts_of_tournaments_curricula_promotions_and_probes(league, home):
    reg = league
    reg.tournament_store.create("t", 1, 0, 1, 2, ["run-v1", "run-v2"], {})
    reg.curriculum_store.start("c", {}, "c.yaml", [("1v1", 1, "c-1v1"), ("2v2", 2, "c-2v2")])
    match, _ = reg.match_store.open(MatchSettings("run-v2", "run-v1", 1, "fixed", None, 4, 10.0, 0), 1, {})
    reg.promotion_store.record_test("run-v2", "sprt", SprtTest(match.id, "H1", 3.0, 50.0, 0.0, 100.0, 0.9, 4), None)
    stored = ProbeResult(wins=1, draws=1, losses=2, target="run-v2", probe="run-v10", team_size=1, minutes=1.0,
                         steps=500, seed=7)
    reg.probe_store.add(stored)
    ro = Registry.open(home.db_path, readonly=True)
    try:
        assert ro.tournament_store.count() == 2  # the match's tournament too
        assert ro.curriculum_store.stage_counts() == {"c": 2}
        assert [p.agent for p in ro.promotion_store.citing(match.id)] == ["run-v2"]
        assert ro.promotion_store.citing(match.id + 1) == []
        (probe,) = ro.probe_store.all()
        assert probe.result == stored and probe.result.games == 4
        assert probe.target_steps == 200 and probe.created
    finally:
        ro.close()


def test_find_games_filters(readonly):
    db = readonly.db
    newest = find_games(db)
    assert [g.id for g in newest] == sorted((g.id for g in readonly.game_store.games()), reverse=True)
    assert [g.id for g in find_games(db, limit=2)] == [g.id for g in newest[:2]]

    def ids(**f):
        return [(g.blue, g.orange) for g in find_games(db, GameFilter(**f))]

    assert ids(agent="run-v2") == [("necto", "run-v2"), ("rule", "run-v2")]
    assert ids(agent="run-v2", result="loss") == [("necto", "run-v2")]
    assert ids(agent="run-v2", result="win") == []
    assert ids(agent="necto", versus="run-v1") == [("run-v1", "necto")]
    assert ids(agent="necto", team_size=2) == [("team-v1+necto", "rule"), ("team-v1", "necto")]  # a later member
    assert ids(agent="run-v1", no_mirror=True) == [("run-v1", "necto"), ("run-v1", "rule")]
    assert ids(with_replay=True) == [("necto", "run-v2")]
    assert ids(result="draw") == [("run-v1", "run-v1"), ("rule", "run-v2")]
    assert ids(agent="nobody") == [] and ids(agent="run-v1", versus="nobody") == []
    assert ids(outside_tournaments=True) == ids()
    with pytest.raises(ValueError, match="unknown result filter"):
        GameFilter(result="won")
    assert players(db) == sorted(["necto", "rule", "run-v1", "run-v2", "team-v1"])
    assert players(db, tournament_id=1) == []


def test_records_against_count_each_game_from_the_other_side(readonly):
    db = readonly.db
    records = {(r.against, r.agent, r.team_size): r for r in records_against(db, ["necto", "run-v1", "nobody"])}
    # necto: beat run-v2 2-1, beat run-v1 1-0, beat team-v1 2-1 in 2v2 (the mixed game has it as a later
    # member: only sides' first members count); run-v1: its mirror game is left out
    assert set(records) == {("necto", "run-v2", 1), ("necto", "run-v1", 1), ("necto", "team-v1", 2),
                            ("run-v1", "rule", 1), ("run-v1", "necto", 1)}
    r = records["necto", "run-v2", 1]
    assert (r.games, r.wins, r.draws, r.losses, r.goals_for, r.goals_against) == (1, 0, 0, 1, 1, 2)
    assert (r.kind, r.status, r.steps, r.first_game, r.last_game) == ("mlp", "active", 200, 3, 3)
    assert records["run-v1", "necto", 1].wins == 1 and records["run-v1", "rule", 1].losses == 1
    assert records_against(db, []) == []


def test_dashboard_reads_cost_the_same_queries_for_more_rows(league, home):
    """No read per row: the community page and the games listing take as many queries for three bots
    and many games as for one bot and a few."""
    def count(fn, *args):
        reg = Registry.open(home.db_path, readonly=True)
        selects = []
        reg.db.conn.set_trace_callback(lambda sql: selects.append(sql) if sql.lstrip().upper().startswith(
            ("SELECT", "WITH")) else None)
        try:
            fn(reg, *args)
        finally:
            reg.close()
        return len(selects)

    league.curriculum_store.start("c", {}, "c.yaml", [("1v1", 1, "c-1v1"), ("2v2", 2, "c-2v2")])
    league.curriculum_store.update_stage("c", 0, final_agent="run-v2")
    before = (count(queries.community_bots.read), count(queries.games.read), count(queries.agents.read),
              count(queries.curriculum_stages, "c"))
    for k in (2, 3):
        league.agent_store.add(f"bot{k}", "community", None, config={"community": {"title": f"B{k}"}})
        for _ in range(3):
            play(league, f"bot{k}", "run-v1", 1, 0)
            play(league, "team-v1+necto", "rule", 1, 0, team_size=2)
    league.curriculum_store.update_stage("c", 1, final_agent="team-v1")
    assert len(queries.community_bots.read(league)) == 3
    after = (count(queries.community_bots.read), count(queries.games.read), count(queries.agents.read),
             count(queries.curriculum_stages, "c"))
    assert after == before


def test_listings_read_a_home_older_than_mixed_games(league, home):
    """The dashboard never migrates: a home from before schema version 9 (no game_members, no games.mixed)
    is listed as it was, every game single-agent."""
    league.db.execute("DROP TABLE game_members")
    league.db.execute("DELETE FROM rating_history WHERE game_id IN (SELECT id FROM games WHERE mixed = 1)")
    league.db.execute("DELETE FROM games WHERE mixed = 1")
    league.db.execute("ALTER TABLE games DROP COLUMN mixed")
    league.db.conn.commit()
    ro = Registry.open(home.db_path, readonly=True)
    try:
        assert [(g.blue, g.orange, g.mixed) for g in find_games(ro.db, GameFilter(team_size=2))] == [
            ("team-v1", "necto", 0)]
        assert len(queries.games.read(ro, agent="necto")) == 3
        assert players(ro.db, outside_tournaments=True) == sorted(["necto", "rule", "run-v1", "run-v2", "team-v1"])
    finally:
        ro.close()
