"""The dashboard's Community page: the league's runs, members and games against community bots."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
import pyarrow as pa
from conftest import play
from dashboard_fixture import build_empty_league, synthetic_replay
from streamlit.testing.v1 import AppTest
from test_dashboard import no_problems, texts
from test_dashboard import page as dashboard_page

from arena.replay import write_replay
from dashboard import queries, ui
from dashboard.pages_community import HOW_TO_ADD
from league.home import LeagueHome
from league.registry import BASELINES, Registry

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
NECTO = {"community": {"kind": "necto", "title": "Necto", "team_sizes": [1, 2, 3], "licence": "CC BY-NC-SA 4.0"}}
ELEMENT = {"community": {"kind": "element", "title": "Element", "team_sizes": [1]}}
VERSIONS = {"ppo-1v1": [100_000, 200_000, 300_000], "lstm-1v1": [150_000, 400_000]}
# Each member's games against necto, from the member's view (goals for, goals against), with the
# side it played and how the game was recorded: (member, team size, [(gf, ga), ...]).
AGAINST_NECTO = [
    ("ppo-1v1-v1", 1, [(0, 2), (1, 3), (0, 1), (1, 1)]),
    ("ppo-1v1-v2", 1, [(2, 0), (0, 1), (1, 2), (0, 0)]),
    ("ppo-1v1-v3", 1, [(3, 1), (2, 0), (1, 0), (0, 2)]),
    ("lstm-1v1-v1", 1, [(0, 3), (0, 1)]),
    ("lstm-1v1-v2", 1, [(2, 1), (1, 1)]),
    ("rule", 1, [(0, 4)]),
    ("rule", 2, [(2, 1)]),
]


@dataclass
class CommunityLeague:
    home: LeagueHome
    replay_game: int  # ppo-1v1-v3's 2-0 win over necto, with a replay file
    evaluation_game: int  # ppo-1v1-v1's 0-2 loss, recorded as an evaluation game


def build_community_league(root: Path) -> CommunityLeague:
    home = build_empty_league(root)
    reg = Registry.open(home.db_path)
    try:
        reg.agent_store.add(name="necto", kind="community", team_size=None, config=NECTO)
        reg.agent_store.add(name="element", kind="community", team_size=None, config=ELEMENT)
        reg.agent_store.add(name="nexto", kind="community", team_size=None, config=NECTO)  # never played
        for run, steps in VERSIONS.items():
            for k, trained in enumerate(steps, start=1):
                reg.agent_store.add(name=f"{run}-v{k}", kind="mlp", team_size=1, steps_trained=trained,
                                    parent=f"{run}-v{k - 1}" if k > 1 else None)
        seed = 0
        ids = {}
        for member, team_size, results in AGAINST_NECTO:
            for gf, ga in results:
                seed += 1
                # the member on orange half of the time
                blue, orange, bg, og = ("necto", member, ga, gf) if seed % 2 else (member, "necto", gf, ga)
                kw = {"origin": "evaluation"} if (member, gf, ga) == ("ppo-1v1-v1", 0, 2) else {}
                if (member, gf, ga) == ("ppo-1v1-v3", 2, 0):
                    kw["replay_path"] = "replays/community/necto.replay"
                    write_replay(home.replays / "community" / "necto.replay",
                                 synthetic_replay(seed, blue, orange, team_size, bg, og, 20.0))
                ids[(member, gf, ga)] = play(reg, blue, orange, bg, og, team_size, seed=seed, **kw)
        play(reg, "necto", "necto", 1, 0, 1, seed=100)  # a mirror game says nothing: left out
        play(reg, "ppo-1v1-v3", "rule", 5, 0, 1, seed=101)  # not against necto
        play(reg, "element", "ppo-1v1-v2", 1, 0, 1, seed=102, origin="evaluation")
    finally:
        reg.close()
    (home.runs / "ppo-1v1").mkdir(parents=True)
    (home.runs / "ppo-1v1" / "metrics.jsonl").write_text('{"step": 1, "time": 0.0, "charts/episode_reward": 0.5}\n')
    return CommunityLeague(home, ids[("ppo-1v1-v3", 2, 0)], ids[("ppo-1v1-v1", 0, 2)])


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> CommunityLeague:
    return build_community_league(tmp_path_factory.mktemp("community") / "league")


@pytest.fixture
def reg(league):
    reg = Registry.open(league.home.db_path, readonly=True)
    yield reg
    reg.close()


def page(monkeypatch, home, **query) -> AppTest:
    return dashboard_page(monkeypatch, home, "community", **query)


def chart_data(chart) -> list[pd.DataFrame]:
    return [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets]


def record(member: str, team_size: int) -> tuple[int, int, int, int, int, int]:
    """(games, wins, draws, losses, goals for, goals against) of the member against necto, by hand."""
    results = next(r for m, ts, r in AGAINST_NECTO if (m, ts) == (member, team_size))
    return (len(results), sum(f > a for f, a in results), sum(f == a for f, a in results),
            sum(f < a for f, a in results), sum(f for f, _ in results), sum(a for _, a in results))


# --------------------------------------------------------------------------- the queries


def test_rate_interval_by_hand():
    # 3 wins in 4: p = 0.75, se = sqrt(0.75 * 0.25 / 4), the mean +- 1.96 se, clipped to [0, 1]
    low, high = queries.rate_interval(3, 4)
    assert low == pytest.approx(0.75 - 1.959964 * math.sqrt(0.1875 / 4), abs=1e-6) and high == 1.0
    # every game alike: a game's widest spread (variance 1/4), so 0 of 2 is not a certainty
    assert queries.rate_interval(0, 2) == pytest.approx((0.0, 1.959964 * math.sqrt(0.25 / 2)), abs=1e-6)
    assert queries.rate_interval(2, 2)[0] == pytest.approx(1 - 1.959964 * math.sqrt(0.25 / 2), abs=1e-6)
    assert all(math.isnan(v) for v in queries.rate_interval(0, 0))


def test_community_bots_lists_each_bot_with_the_league_s_record(reg):
    bots = queries.community_bots.read(reg)
    assert list(bots["name"]) == ["necto", "element", "nexto"]
    necto = bots.iloc[0]
    assert (necto["bot"], necto["kind"], necto["stages"], necto["licence"]) == (
        "Necto", "necto", "1v1, 2v2, 3v3", "CC BY-NC-SA 4.0")
    games = sum(len(r) for _, _, r in AGAINST_NECTO)
    wins = sum(f > a for _, _, r in AGAINST_NECTO for f, a in r)
    assert (necto["games"], necto["wins"]) == (games, wins)  # the mirror game is left out
    assert necto["win_rate"] == pytest.approx(wins / games)
    element = bots.iloc[1]
    assert (element["stages"], element["games"], element["losses"]) == ("1v1", 1, 1)
    nexto = bots.iloc[2]
    assert nexto["games"] == 0 and math.isnan(nexto["win_rate"])


def test_community_results_by_hand(reg):
    results = queries.community_results.read(reg, "necto")
    got = {(r.agent, r.team_size): (r.games, r.wins, r.draws, r.losses, r.goals_for, r.goals_against)
           for r in results.itertuples()}
    assert got == {(m, ts): record(m, ts) for m, ts, _ in AGAINST_NECTO}
    assert list(results["win_rate"]) == sorted(results["win_rate"], reverse=True)  # best first
    v3 = results[results["agent"] == "ppo-1v1-v3"].iloc[0]
    assert (v3["run"], v3["k"], v3["steps"], v3["win_rate"], v3["score_rate"]) == ("ppo-1v1", 3, 300_000, 0.75, 0.75)
    assert (v3["win_low"], v3["win_high"]) == pytest.approx(queries.rate_interval(3, 4))
    rule = results[results["agent"] == "rule"]
    assert rule["run"].isna().all() and list(rule["team_size"].sort_values()) == [1, 2]
    # the chart's rows: run versions only, by run then steps
    climb = queries.community_climb(results)
    assert list(zip(climb["run"], climb["agent"], climb["steps"])) == [
        ("lstm-1v1", "lstm-1v1-v1", 150_000), ("lstm-1v1", "lstm-1v1-v2", 400_000),
        ("ppo-1v1", "ppo-1v1-v1", 100_000), ("ppo-1v1", "ppo-1v1-v2", 200_000), ("ppo-1v1", "ppo-1v1-v3", 300_000)]
    assert queries.community_results.read(reg, "element")["agent"].tolist() == ["ppo-1v1-v2"]
    assert queries.community_results.read(reg, "nobody").empty


def test_games_between_two_agents(reg, league):
    games = queries.games.read(reg, agent="ppo-1v1-v3", versus="necto")
    assert len(games) == 4 and set(zip(games["blue"], games["orange"])) <= {("ppo-1v1-v3", "necto"),
                                                                            ("necto", "ppo-1v1-v3")}
    won = queries.games.read(reg, agent="ppo-1v1-v3", versus="necto", result="win", with_replay=True)
    assert list(won["id"]) == [league.replay_game]


# --------------------------------------------------------------------------- the page


def test_without_a_community_bot_the_page_says_how_to_add_one(monkeypatch, tmp_path):
    home = build_empty_league(tmp_path / "league")
    at = no_problems(page(monkeypatch, home.root))
    assert at.header[0].value == "Community"
    [info] = at.info
    assert info.value == HOW_TO_ADD
    assert "`league bot add necto <folder>`" in info.value and "RLBot GUI downloads" in info.value
    assert not at.dataframe and not at.get("vega_lite_chart")


def test_the_page_shows_runs_head_to_head_and_a_replay(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root))
    assert at.selectbox(key="community_bot").value == "necto"
    bots = at.dataframe[0].value
    assert list(bots["name"]) == ["necto", "element", "nexto"]
    assert list(bots["stages"]) == ["1v1, 2v2, 3v3", "1v1", "1v1, 2v2, 3v3"]

    # the chart: one line per run through its versions, x steps trained, y the win rate against necto
    chart, _ball = at.get("vega_lite_chart")  # and the ball chart of the replay shown below
    spec = json.loads(chart.proto.spec)
    assert {layer["encoding"]["y"]["title"] for layer in spec["layer"]} == {"win rate against necto"}
    points = next(f for f in chart_data(chart) if "run" in f.columns)
    shown = {(r.run, r.agent): (r.steps, r.games, r.wins, r.draws, r.losses, r.win_rate)
             for r in points.itertuples()}
    assert shown == {(run, f"{run}-v{k}"): (steps, *record(f"{run}-v{k}", 1)[:4],
                                            record(f"{run}-v{k}", 1)[1] / record(f"{run}-v{k}", 1)[0])
                     for run, all_steps in VERSIONS.items() for k, steps in enumerate(all_steps, start=1)}

    # the head-to-head: every member that played necto, W-D-L, goals for:against, win rate and its interval
    table = at.dataframe[1].value
    assert list(table.columns) == ["agent", "stage", "status", "steps", "games", "wdl", "goals", "win_rate", "win_ci",
                                   "score_rate"]
    rows = {(r.agent, r.stage): r for r in table.itertuples()}
    assert set(rows) == {(m, f"{ts}v{ts}") for m, ts, _ in AGAINST_NECTO}
    v3 = rows[("ppo-1v1-v3", "1v1")]
    assert (v3.games, v3.wdl, v3.goals, v3.win_rate, v3.win_ci) == (4, "3-0-1", "6:3", 0.75, "33% to 100%")
    v1 = rows[("ppo-1v1-v1", "1v1")]
    assert (v1.wdl, v1.goals, v1.win_rate, v1.score_rate, v1.win_ci) == ("0-1-3", "2:7", 0.0, 0.125, "0% to 49%")
    assert (rows[("rule", "2v2")].wdl, rows[("rule", "2v2")].goals) == ("1-0-0", "2:1")

    # the games: any member's with a replay at first (one here), shown in the Replays page's player
    assert at.selectbox(key="community_member_necto").value == "(any member)"
    assert list(at.selectbox(key="community_game_necto").options) == [at.selectbox(key="community_game_necto")
                                                                      .format_func(league.replay_game)]
    assert "<canvas" in at.get("iframe")[0].proto.srcdoc
    # every game necto won (the members lost), the mirror game left out
    at.checkbox(key="community_with_replay").uncheck().run()
    at.selectbox(key="community_result_necto").select("loss").run()
    lost = sum(f < a for _, _, r in AGAINST_NECTO for f, a in r)
    assert len(no_problems(at).selectbox(key="community_game_necto").options) == lost
    at.checkbox(key="community_with_replay").check().run()
    # pick a member of the head-to-head, then one of its games against necto
    at.selectbox(key="community_member_necto").select("ppo-1v1-v3").run()
    at.selectbox(key="community_result_necto").select("win").run()
    no_problems(at)
    assert list(at.selectbox(key="community_game_necto").options) and \
        at.selectbox(key="community_game_necto").value == league.replay_game
    heading = texts(at.markdown)
    assert "ppo-1v1-v3" in heading and "2 - 0" in heading and "necto" in heading
    assert "<canvas" in at.get("iframe")[0].proto.srcdoc
    # without the replay filter, all three wins are listed
    at.checkbox(key="community_with_replay").uncheck().run()
    assert len(no_problems(at).selectbox(key="community_game_necto").options) == 3


def test_a_link_to_a_bot_and_a_bot_without_games(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, bot="element"))
    assert at.selectbox(key="community_bot").value == "element"
    assert at.subheader[0].value == "The league's runs against element"
    table = at.dataframe[1].value
    assert list(table["agent"]) == ["ppo-1v1-v2"] and list(table["wdl"]) == ["0-0-1"]
    at.selectbox(key="community_bot").select("nexto").run()
    assert "No games against nexto yet" in texts(no_problems(at).info)
    at = no_problems(page(monkeypatch, league.home.root, bot="nobody"))
    assert "There is no community bot named nobody" in texts(at.warning)
    assert at.selectbox(key="community_bot").value == "necto"


# --------------------------------------------------------------------------- the training page's colours


def test_community_bots_get_colours_of_their_own_in_the_climb_chart(reg):
    colours = ui.opponent_colours([*BASELINES, "necto", "element"])
    assert colours[:len(BASELINES)] == [ui.BASELINE_COLOURS[b] for b in BASELINES]
    necto, element = colours[len(BASELINES):]
    assert necto != element and {necto, element} <= set(ui.OTHER_COLOURS)
    assert ui.opponent_colours(["necto"]) == [necto]  # the same in every chart (unless taken there)
    assert len(set(ui.opponent_colours([f"bot{i}" for i in range(len(ui.OTHER_COLOURS))]))) == len(ui.OTHER_COLOURS)

    # the training page asks for community bots too: their evaluation games are charted in their colour
    rates = queries.baseline_win_rates.read(reg, "ppo-1v1", (*BASELINES, "necto", "element"))
    assert list(zip(rates["version"], rates["baseline"], rates["games"], rates["losses"])) == [
        ("ppo-1v1-v1", "necto", 1, 1), ("ppo-1v1-v2", "element", 1, 1)]
    spec = json.loads(ui.climb_chart(rates).to_json())
    scale = next(layer["encoding"]["color"]["scale"] for layer in spec["layer"] if "color" in layer["encoding"])
    assert scale == {"domain": ["element", "necto"], "range": ui.opponent_colours(["element", "necto"])}


def test_the_training_page_charts_evaluation_games_against_community_bots(monkeypatch, league):
    monkeypatch.setenv("LEAGUE_HOME", str(league.home.root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "training"
    at = no_problems(at.run())
    climb = next(c for c in at.get("vega_lite_chart") if json.loads(c.proto.spec).get("title") == "ppo-1v1")
    spec = json.loads(climb.proto.spec)
    scale = next(layer["encoding"]["color"]["scale"] for layer in spec["layer"] if "color" in layer["encoding"])
    assert scale == {"domain": ["element", "necto"], "range": ui.opponent_colours(["element", "necto"])}
