"""Mixed-team games on the dashboard (docs/community.md, "Mixed teams"): wherever games are listed (the
Replays page, head-to-head, matches, an agent's page) a mixed game shows its whole teams, and an agent
in any car of a side finds its games. On a league written through the stores (tests/dashboard_leagues.py),
checked against the game store's own reading of the games."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from dashboard import match_queries, queries  # noqa: E402
from dashboard_leagues import build_mixed_league  # noqa: E402
from league.registry import Registry  # noqa: E402
from league.teams import members  # noqa: E402
from test_dashboard import no_problems, page, texts  # noqa: E402


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return build_mixed_league(tmp_path_factory.mktemp("mixed") / "league")


@pytest.fixture(scope="module")
def reg(mixed):
    reg = Registry.open(mixed.home.db_path, readonly=True)
    yield reg
    reg.close()


@pytest.fixture(scope="module")
def stored(reg):
    """Every game as the game store names its sides (the oracle), newest first."""
    return list(reversed(reg.game_store.games()))


def side_of(game, agent: str) -> str | None:
    return "blue" if agent in members(game.blue) else "orange" if agent in members(game.orange) else None


@pytest.mark.parametrize("agent", ["necto", "atba", "rule", "ppo-2v2-v1"])
def test_an_agent_finds_its_games_in_any_car_with_whole_teams(reg, stored, agent):
    found = queries.games.read(reg, agent=agent)
    expected = [g for g in stored if side_of(g, agent)]
    assert found["id"].tolist() == [g.id for g in expected]
    assert list(zip(found["blue"], found["orange"])) == [(g.blue, g.orange) for g in expected]
    won = queries.games.read(reg, agent=agent, result="win")
    assert won["id"].tolist() == [g.id for g in expected if g.result == side_of(g, agent)]
    lost = queries.games.read(reg, agent=agent, result="loss")
    assert lost["id"].tolist() == [g.id for g in expected if g.result not in ("draw", side_of(g, agent))]


def test_versus_keeps_the_games_on_opposite_sides_and_every_member_is_listed(reg, stored):
    found = queries.games.read(reg, agent="necto", versus="atba")
    assert found["id"].tolist() == [g.id for g in stored if {side_of(g, "necto"), side_of(g, "atba")} ==
                                    {"blue", "orange"}]
    assert not found.empty and set(found["orange"]) == {"rule+atba"}
    assert queries.games.read(reg, agent="rule", versus="atba", team_size=1).empty
    assert queries.agents_in_games.read(reg) == ["atba", "necto", "ppo-2v2-v1", "ppo-2v2-v2", "rule"]
    mixed_game = queries.game.read(reg, stored[-1].id)
    assert (mixed_game["blue"], mixed_game["orange"]) == ("ppo-2v2-v1+necto", "rule+atba")


def test_replays_list_and_show_whole_teams_without_a_false_name_warning(monkeypatch, mixed, stored):
    at = no_problems(page(monkeypatch, mixed.home.root, "replays", game=mixed.replay_game))
    assert at.selectbox(key="replay_game").value == mixed.replay_game
    labels = at.selectbox(key="replay_game").options  # as shown
    assert any("ppo-2v2-v1+necto 2-1 rule+atba" in label for label in labels)
    heading = texts(at.markdown)
    assert "ppo-2v2-v1+necto" in heading and "rule+atba" in heading
    assert not at.warning  # the replay file names the teams as the league does
    at.checkbox(key="replay_with_file").uncheck().run()
    at.selectbox(key="replay_agent").select("atba").run()
    options = no_problems(at).selectbox(key="replay_game").options
    assert [o.split()[0] for o in options] == [f"#{g.id}" for g in stored if side_of(g, "atba")]


def test_head_to_head_counts_mixed_games_for_members_and_lists_them(monkeypatch, mixed, reg):
    pairs = queries.pair_results.read(reg, 2)
    necto_rule = pairs[(pairs["agent"] == "necto") & (pairs["opponent"] == "rule")].iloc[0]
    # two games against rule+atba (2-1, 0-0) and the match's four against ppo-2v2-v2+rule
    assert (necto_rule["games"], necto_rule["mixed"]) == (6, 6)
    single = pairs[(pairs["agent"] == "ppo-2v2-v2") & (pairs["opponent"] == "necto")].iloc[0]
    assert (single["games"], single["mixed"]) == (5, 4)  # its 1-3 loss alone, and the match
    at = page(monkeypatch, mixed.home.root, "head-to-head")
    at.selectbox(key="stage").select(2).run()
    at.selectbox(key="h2h_a_2").select("necto").run()
    at.selectbox(key="h2h_b_2").select("atba").run()
    no_problems(at)
    assert "A mixed-team game counts for every member" in texts(at.caption)
    listed = next(d.value for d in at.dataframe if "orange" in d.value.columns)
    assert listed["blue"].tolist() == ["ppo-2v2-v1+necto"] * 2 and listed["orange"].tolist() == ["rule+atba"] * 2
    assert listed["score"].tolist() == ["0-0", "2-1"]


def test_matches_name_mixed_sides_and_score_them_by_the_schedule(monkeypatch, mixed, reg):
    listing = match_queries.matches.read(reg)
    assert listing[["a", "b"]].values.tolist() == [["ppo-2v2-v1+necto", "ppo-2v2-v2+rule"]]
    pairs = match_queries.match_pairs(reg, mixed.match_id)
    assert pairs["outcome"].tolist() == ["WL+DD", "WD"]
    at = no_problems(page(monkeypatch, mixed.home.root, "matches", match=mixed.match_id))
    assert "ppo-2v2-v1+necto vs ppo-2v2-v2+rule" in texts(at.subheader)


def test_an_agents_page_lists_its_latest_games_with_whole_teams(monkeypatch, mixed, stored):
    at = no_problems(page(monkeypatch, mixed.home.root, "lineage", agent="necto"))
    games = next(d.value for d in at.dataframe if "orange" in d.value.columns)
    expected = [g for g in stored if side_of(g, "necto")]
    assert games["game"].tolist() == [f"?page=replays&game={g.id}" for g in expected]
    assert list(zip(games["blue"], games["orange"])) == [(g.blue, g.orange) for g in expected]
