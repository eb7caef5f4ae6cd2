"""league.standings: who is listed, what is counted, the order; and the readers over a real league."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from league.config import RatingsConfig
from league.errors import LeagueError
from league.registry import BASELINES as LEAGUE_BASELINES
from league.standings import (
    RANKINGS,
    AgentRating,
    PairRecord,
    parse_anchor,
    read_standings,
    read_tournament_standings,
    sort_key,
    standings,
)

from conftest import play

CFG = RatingsConfig()


def agent(name: str, team_size: int | None = 1, status: str = "active", elo: float = 1500.0, mu: float = 25.0,
          sigma: float = 8.333) -> AgentRating:
    return AgentRating(name=name, kind="mlp" if team_size else name, status=status, team_size=team_size, elo=elo,
                       mu=mu, sigma=sigma)


BASELINES = [agent("random", None), agent("rule", None)]


def names(table) -> list[str]:
    return [r.name for r in table.rows]


def test_a_stage_lists_its_agents_the_baselines_and_anyone_who_played_in_it():
    agents = BASELINES + [agent("a"), agent("b"), agent("old", status="retired"), agent("two", 2),
                          agent("visitor", 2)]
    records = [PairRecord("a", "rule", wins=2, goals_for=5, goals_against=1), PairRecord("visitor", "random", draws=1)]
    listed = set(names(standings(agents, records, CFG, 1)))
    assert listed == {"random", "rule", "a", "b", "visitor"}  # "two" has no game in 1v1; "old" is retired
    assert "old" in names(standings(agents, records, CFG, 1, include_retired=True))
    in_2v2 = [PairRecord("rule", "random", wins=1)]  # the records are the team size's games
    assert set(names(standings(agents, in_2v2, CFG, 2))) == {"random", "rule", "two", "visitor"}


def test_records_add_up_from_both_sides_and_mirror_matches_are_not_counted():
    agents = BASELINES + [agent("a")]
    records = [PairRecord("a", "rule", wins=2, draws=1, goals_for=5, goals_against=2),
               PairRecord("rule", "a", wins=1, losses=1, goals_for=3, goals_against=3),
               PairRecord("a", "a", wins=9, goals_for=9)]
    rows = {r.name: r for r in standings(agents, records, CFG, 1).rows}
    a = rows["a"]
    assert (a.games, a.wins, a.draws, a.losses, a.goals_for, a.goals_against) == (5, 3, 1, 1, 8, 5)
    assert a.points == 3.5 and a.gd == 3 and a.score_rate == pytest.approx(0.7)
    assert (rows["rule"].wins, rows["rule"].losses) == (1, 3)
    assert rows["random"].games == 0 and math.isnan(rows["random"].score_rate)


def test_an_agent_without_games_has_no_interval_and_ranks_last_by_mle():
    agents = BASELINES + [agent("strong"), agent("fresh")]
    records = [PairRecord("strong", "rule", wins=5), PairRecord("rule", "random", wins=4, losses=1)]
    table = standings(agents, records, CFG, 1, by="mle")
    assert names(table) == ["strong", "rule", "random", "fresh"]
    fresh = table.rows[-1]
    assert fresh.mle_interval is None and fresh.mle == pytest.approx(CFG.mle.anchor_rating)
    rule = table.rows[1]  # the anchor: pinned, with an interval of zero width
    assert rule.mle == pytest.approx(CFG.mle.anchor_rating) and rule.mle_interval is not None
    assert table.fit.rating("strong") == table.rows[0].mle
    lo, hi = table.rows[0].mle_interval
    assert lo < table.rows[0].mle < hi


def test_elo_and_trueskill_orders_break_ties_by_games_then_listing_order():
    agents = [agent("x", elo=1500), agent("y", elo=1600), agent("z", elo=1500), agent("w", elo=1500, mu=30, sigma=1)]
    records = [PairRecord("z", "y", losses=1)]
    assert names(standings(agents, records, CFG, 1)) == ["y", "z", "x", "w"]
    assert names(standings(agents, records, CFG, 1, by="trueskill"))[0] == "w"


def test_a_tournament_lists_its_entrants_in_order_ranked_by_points_then_goal_difference():
    agents = BASELINES + [agent("a"), agent("b", status="retired"), agent("c")]
    records = [PairRecord("a", "b", wins=1, goals_for=1), PairRecord("b", "random", wins=1, goals_for=4)]
    table = standings(agents, records, CFG, 1, by="points", entrants=["a", "b", "c", "random"])
    assert names(table) == ["b", "a", "c", "random"]  # b: 1 point, +3; a: 1 point, +1; then 0 points in entrant order
    assert [r.rank for r in table.rows] == [1, 2, 3, 4]
    with pytest.raises(LeagueError, match="nobody"):
        standings(agents, records, CFG, 1, entrants=["a", "nobody"])
    with pytest.raises(LeagueError, match="Unknown ranking 'glicko'"):
        standings(agents, records, CFG, 1, by="glicko")


def test_an_anchor_re_pins_the_mle_on_any_agent_with_games():
    agents = BASELINES + [agent("necto", 1), agent("fresh"), agent("gone", status="retired")]
    records = [PairRecord("necto", "rule", wins=4, losses=1), PairRecord("rule", "random", wins=3, draws=1),
               PairRecord("gone", "random", wins=1, losses=1)]
    plain = standings(agents, records, CFG, 1, by="mle")
    pinned = standings(agents, records, CFG, 1, by="mle", anchor=("necto", 2000.0))
    assert pinned.fit.anchor == "necto" and names(pinned) == names(plain)
    rows, before = {r.name: r for r in pinned.rows}, {r.name: r for r in plain.rows}
    assert rows["necto"].mle == 2000.0 and rows["necto"].mle_interval == (2000.0, 2000.0)
    shift = 2000.0 - before["necto"].mle
    for name in ("rule", "random"):
        assert rows[name].mle == pytest.approx(before[name].mle + shift)
        lo, hi = rows[name].mle_interval
        assert lo < rows[name].mle < hi
    assert rows["fresh"].mle_interval is None  # still no game to fit
    # A retired agent is not listed but its games are counted: it may anchor the fit.
    assert standings(agents, records, CFG, 1, anchor=("gone", 1500.0)).fit.rating("gone") == 1500.0


@pytest.mark.parametrize("anchor, message", [
    (("nobody", 1500.0), "No agent named 'nobody'"),
    (("fresh", 1500.0), "cannot be anchored on 'fresh': it has no rated games in 1v1"),
    (("two", 1500.0), "no rated games in 1v1"),  # games in 2v2 only
    (("mirror", 1500.0), "no rated games in 1v1"),  # mirror matches are not counted
])
def test_an_anchor_must_be_an_agent_with_counted_games(anchor, message):
    agents = BASELINES + [agent("fresh"), agent("two", 2), agent("mirror")]
    records = [PairRecord("rule", "random", wins=1), PairRecord("mirror", "mirror", wins=3)]
    with pytest.raises(LeagueError, match=message):
        standings(agents, records, CFG, 1, anchor=anchor)


@pytest.mark.parametrize("text, expected", [
    ("necto", ("necto", 1234.0)), ("necto=2000", ("necto", 2000.0)), ("rule-pro=0", ("rule-pro", 0.0)),
    ("ppo-1v1-v3=5000", ("ppo-1v1-v3", 5000.0)), ("a=1500.5", ("a", 1500.5)),
])
def test_parse_anchor_reads_name_and_elo(text, expected):
    assert parse_anchor(text, 1234.0) == expected


@pytest.mark.parametrize("text, message", [
    ("necto=abc", "no number after '='"), ("necto=", "no number after '='"), ("necto=1=2", "no number after '='"),
    ("=1500", "names no agent"), ("", "names no agent"), ("necto=-1", "not a number from 0 to 5000"),
    ("necto=5000.5", "from 0 to 5000"), ("necto=nan", "from 0 to 5000"), ("necto=inf", "from 0 to 5000"),
    ("necto=-inf", "from 0 to 5000"), ("../x=1500", "is not allowed"),
])
def test_parse_anchor_refuses_malformed_anchors_in_one_sentence(text, message):
    with pytest.raises(LeagueError, match=message) as caught:
        parse_anchor(text, 1500.0)
    assert str(caught.value).count(". ") == 0 and str(caught.value).endswith((".", "?"))


def test_the_readers_agree_with_the_stored_ratings(registry):
    registry.agent_store.add("a", "mlp", 1)
    registry.agent_store.add("b", "mlp", 1)
    registry.agent_store.add("two", "mlp", 2)
    play(registry, "a", "rule", 3, 1)
    play(registry, "b", "a", 2, 2)
    play(registry, "rule", "random", 1, 0)
    play(registry, "a", "a", 5, 0)  # a mirror match: recorded, never rated
    play(registry, "two", "random", 1, 0, team_size=2)
    table = read_standings(registry.db, 1, registry.ratings_cfg, by="mle")
    assert set(names(table)) == {*LEAGUE_BASELINES, "a", "b"}  # every active 1v1 agent, played or not
    for row in table.rows:
        stored = registry.game_store.rating(row.name, 1)
        assert (row.games, row.wins, row.draws, row.losses) == (stored.games, stored.wins, stored.draws,
                                                                  stored.losses)
        assert (row.goals_for, row.goals_against, row.elo) == (stored.goals_for, stored.goals_against, stored.elo)
    assert registry.mle(1).rating("a") == pytest.approx(table.fit.rating("a"))


def test_the_tournament_reader_counts_only_the_tournaments_games(registry):
    registry.agent_store.add("a", "mlp", 1)
    tid = registry.tournament_store.create("t", 1, 0, 1, 2, ["a", "rule"], {})
    play(registry, "a", "rule", 2, 0, origin="tournament", tournament_id=tid, schedule_index=0)
    play(registry, "rule", "a", 5, 0)  # outside the tournament
    table = read_tournament_standings(registry.db, tid, registry.ratings_cfg)
    assert names(table) == ["a", "rule"] and (table.rows[0].wins, table.rows[0].gd) == (1, 2)
    assert table.rows[0].elo == registry.game_store.rating("a", 1).elo  # the league's rating, after both games
    with pytest.raises(LeagueError, match="No tournament with id 99"):
        read_tournament_standings(registry.db, 99, registry.ratings_cfg)


# --------------------------------------------------------------------------- properties

NAMES = [f"n{i}" for i in range(6)]


@st.composite
def leagues(draw):
    agents = [AgentRating(name=n, kind="mlp", team_size=draw(st.sampled_from([None, 1, 2])),
                          status=draw(st.sampled_from(["active", "champion", "retired"])),
                          elo=draw(st.floats(1000, 2000)), mu=draw(st.floats(0, 50)), sigma=draw(st.floats(0.1, 9)))
              for n in NAMES]
    record = st.builds(PairRecord, st.sampled_from(NAMES), st.sampled_from(NAMES), st.integers(0, 3),
                       st.integers(0, 3), st.integers(0, 3), st.integers(0, 9), st.integers(0, 9))
    return agents, draw(st.lists(record, max_size=12))


@settings(max_examples=60, deadline=None)
@given(leagues(), st.sampled_from(RANKINGS), st.booleans())
def test_every_listed_agent_appears_once_best_first_by_the_chosen_key(league, by, include_retired):
    agents, records = league
    table = standings(agents, records, CFG, 1, by=by, include_retired=include_retired)
    listed = names(table)
    assert len(listed) == len(set(listed))
    played = {r.agent for r in records if r.agent != r.opponent and r.games} | {
        r.opponent for r in records if r.agent != r.opponent and r.games}
    expected = {a.name for a in agents if (a.team_size in (None, 1) or a.name in played)
                and (include_retired or a.status != "retired")}
    assert set(listed) == expected
    keys = [sort_key(row, by) for row in table.rows]
    assert keys == sorted(keys)
    assert [r.rank for r in table.rows] == list(range(1, len(listed) + 1))
    counted = [r for r in records if r.agent != r.opponent]
    if set(listed) >= {r.agent for r in counted} | {r.opponent for r in counted}:  # everyone who played is listed
        assert sum(r.games for r in table.rows) == 2 * sum(r.games for r in counted)
        assert sum(r.wins for r in table.rows) == sum(r.losses for r in table.rows)
        assert sum(r.gd for r in table.rows) == 0
