"""The dashboard's pages rendered with Streamlit's AppTest against fixture leagues, plus its pure parts."""

from __future__ import annotations

import base64
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from arena.replay import write_replay  # noqa: E402
from dashboard import field, queries  # noqa: E402
from dashboard.replay_view import (  # noqa: E402
    CAR_FIELDS,
    GOAL_LEAD_SECONDS,
    car_labels,
    events_table,
    format_clock,
    player_html,
    player_payload,
)
from dashboard.training_runs import list_runs, long_form, read_metrics  # noqa: E402
from league import game_values  # noqa: E402
from league.ratings import conservative  # noqa: E402
from league.registry import BASELINES, GameRecord, Registry  # noqa: E402
from league.standings import read_standings  # noqa: E402
from dashboard_fixture import TICK_SKIP, build_empty_league, copy_fixture_league, synthetic_replay  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


@pytest.fixture(scope="module")
def league(fixture_league_template, tmp_path_factory):
    return copy_fixture_league(fixture_league_template, tmp_path_factory.mktemp("dash") / "league")


@pytest.fixture(scope="module")
def empty_home(tmp_path_factory):
    return build_empty_league(tmp_path_factory.mktemp("empty") / "league")


@pytest.fixture
def reg(league):
    registry = Registry.open(league.home.db_path, readonly=True)
    yield registry
    registry.close()


def page(monkeypatch, home, name: str, **query) -> AppTest:
    """Render one page of the app against the league at `home`."""
    monkeypatch.setenv("LEAGUE_HOME", str(home))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = name
    for key, value in query.items():
        at.query_params[key] = str(value)
    return at.run()


def no_problems(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def texts(elements) -> str:
    """The elements' text as a reader sees it: Markdown's backslash escapes (ui.plain: names shown as text)
    dropped."""
    return re.sub(r"\\([^\w\s])", r"\1", " | ".join(str(e.value) for e in elements))


def charts(at: AppTest) -> list:
    return at.get("vega_lite_chart")


# --------------------------------------------------------------------------- leaderboard


def test_leaderboard_ranks_the_stage_by_elo_with_mle_intervals(monkeypatch, league, reg):
    at = no_problems(page(monkeypatch, league.home.root, "leaderboard"))
    assert at.header[0].value == "Leaderboard"
    board = at.dataframe[0].value
    assert list(board.columns[:6]) == ["rank", "name", "sprt", "crowned", "status", "elo"]
    for col in ("mle", "mle_ci", "mu", "sigma", "ts", "games", "wins", "draws", "losses", "gd",
                "last_played"):
        assert col in board.columns
    expected = read_standings(reg.db, 1, reg.ratings_cfg).rows  # by Elo
    assert list(board["name"]) == [r.name for r in expected]
    assert list(board["rank"]) == list(range(1, len(expected) + 1))
    assert "ppo-1v1-v1" not in set(board["name"])  # retired: hidden unless asked
    top = board.iloc[0]
    want = expected[0]
    assert top["elo"] == pytest.approx(want.elo)
    assert top["ts"] == pytest.approx(conservative(want.mu, want.sigma))
    assert (top["wins"], top["draws"], top["losses"]) == (want.wins, want.draws, want.losses)
    assert top["gd"] == want.goals_for - want.goals_against
    assert dict(zip(board["name"], board["status"]))["ppo-1v1-v4"] == "champion"
    # MLE ratings agree with the registry's own whole-history fit and sit inside their intervals.
    fit = reg.mle(1, names=list(board["name"]))
    for row in board.itertuples():
        if row.games == 0:  # a baseline nobody has played yet has no MLE rating
            assert math.isnan(row.mle)
            continue
        assert row.mle == pytest.approx(fit.rating(row.name), abs=0.01)
        low, high = fit.interval(row.name)
        assert row.mle_ci == f"{low:.0f} to {high:.0f}" and low <= row.mle <= high
    assert len(charts(at)) == 1


def test_leaderboard_shows_retired_when_asked_and_ranks_by_trueskill(monkeypatch, league):
    at = page(monkeypatch, league.home.root, "leaderboard")
    at.checkbox(key="show_retired").check().run()
    board = no_problems(at).dataframe[0].value
    assert dict(zip(board["name"], board["status"]))["ppo-1v1-v1"] == "retired"
    at.selectbox(key="rank_by").select("TrueSkill (mu - 3 sigma)").run()
    board = no_problems(at).dataframe[0].value
    assert list(board["ts"]) == sorted(board["ts"], reverse=True)


def test_leaderboard_other_stage(monkeypatch, league):
    at = page(monkeypatch, league.home.root, "leaderboard")
    at.selectbox(key="stage").select(2).run()
    names = set(no_problems(at).dataframe[0].value["name"])
    assert {"ppo-2v2-v1", "ppo-2v2-v2", "climb-2v2-v1", *BASELINES} == names


# --------------------------------------------------------------------------- rating history


def test_rating_history_charts_the_best_agents(monkeypatch, league, reg):
    at = no_problems(page(monkeypatch, league.home.root, "history"))
    chosen = at.multiselect[0].value
    assert chosen[0] == "ppo-1v1-v4" and len(chosen) == 5
    summary = at.dataframe[0].value
    assert list(summary["agent"]) == sorted(chosen)
    games = dict(zip(summary["agent"], summary["games"]))
    assert games["ppo-1v1-v4"] == len(reg.game_store.rating_history("ppo-1v1-v4", 1))
    current = dict(zip(summary["agent"], summary["current"]))
    assert current["ppo-1v1-v4"] == pytest.approx(reg.game_store.rating("ppo-1v1-v4", 1).elo)
    assert len(charts(at)) == 1
    at.radio(key="history_axis").set_value("Time").run()
    at.radio(key="history_metric").set_value("TrueSkill mu - 3 sigma").run()
    summary = no_problems(at).dataframe[0].value
    r = reg.game_store.rating("ppo-1v1-v4", 1)
    assert dict(zip(summary["agent"], summary["current"]))["ppo-1v1-v4"] == pytest.approx(
        conservative(r.mu, r.sigma))


def test_rating_history_query_starts_at_the_initial_rating(league, reg):
    frame = queries.rating_history.read(reg, ["ppo-1v1-v2"], 1)
    assert frame["game_no"].iloc[0] == 0 and frame["elo"].iloc[0] == pytest.approx(1500.0)
    assert list(frame["game_no"]) == list(range(len(frame)))


# --------------------------------------------------------------------------- head-to-head


def test_head_to_head_matrix_and_pair(monkeypatch, league, reg):
    at = no_problems(page(monkeypatch, league.home.root, "head-to-head"))
    assert len(charts(at)) == 1
    assert "score rate" in texts(at.caption)
    a, b = at.selectbox(key="h2h_a_1").value, at.selectbox(key="h2h_b_1").value
    assert (a, b) == ("ppo-1v1-v4", at.multiselect[0].value[1])
    fit = reg.mle(1, names=[r.name for r in read_standings(reg.db, 1, reg.ratings_cfg, include_retired=True).rows])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Likelihood of superiority (A over B)"] == f"{fit.los(a, b):.1%}"
    played = [g for g in reg.game_store.games(1) if {g.blue, g.orange} == {a, b}]
    wins = sum((g.blue == a and g.result == "blue") or (g.orange == a and g.result == "orange")
               for g in played)
    draws = sum(g.result == "draw" for g in played)
    assert metrics[f"{a} vs {b} (W-D-L)"] == f"{wins}-{draws}-{len(played) - wins - draws}"


def test_score_matrix_cells(league, reg):
    pairs = queries.pair_results.read(reg, 1)
    cells = queries.score_matrix(pairs, ["ppo-1v1-v4", "random", "ppo-1v1-v1"])
    assert len(cells) == 6
    v4_random = cells[(cells["agent"] == "ppo-1v1-v4") & (cells["opponent"] == "random")].iloc[0]
    rand_v4 = cells[(cells["agent"] == "random") & (cells["opponent"] == "ppo-1v1-v4")].iloc[0]
    assert v4_random["games"] == rand_v4["games"] == 2
    assert v4_random["score_rate"] + rand_v4["score_rate"] == pytest.approx(1.0)
    never = cells[(cells["agent"] == "ppo-1v1-v4") & (cells["opponent"] == "ppo-1v1-v1")].iloc[0]
    assert never["games"] == 0 and math.isnan(never["score_rate"])


# --------------------------------------------------------------------------- lineage


def test_lineage_graph_and_details(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "lineage"))
    assert len(charts(at)) == 1
    assert at.selectbox(key="lineage_agent").value == "ppo-1v1-v4"  # the first champion
    facts = at.dataframe[0].value.set_index("fact")["value"]  # a grid: the text shows as text (issue 56 item 4)
    assert facts["parent"] == "ppo-1v1-v3" and facts["children"] == "ppo-2v2-v1"
    assert facts["status"] == "champion"
    at.selectbox(key="lineage_agent").select("lstm-1v1-v1").run()
    facts = no_problems(at).dataframe[0].value.set_index("fact")["value"]
    assert facts["parent"] == "ppo-1v1-v2" and facts["kind"] == "lstm"
    ratings = at.dataframe[1].value
    assert list(ratings["Stage"]) == ["1v1"]


def test_lineage_layout_reads_left_to_right(league, reg):
    graph = queries.lineage_graph.read(reg)
    pos = queries.tree_layout(graph)
    assert set(pos) == set(graph.nodes)
    for parent, child in graph.edges:
        assert pos[child][0] == pos[parent][0] + 1
    assert pos["ppo-2v2-v2"][0] == 5  # v1 -> v2 -> v3 -> v4 -> 2v2-v1 -> 2v2-v2
    rows = [p[1] for n, p in pos.items() if graph.out_degree(n) == 0]
    assert len(set(rows)) == len(rows)  # leaves never share a row


# --------------------------------------------------------------------------- tournaments


def test_tournaments_list_and_running_one(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "tournaments"))
    listing = at.dataframe[0].value
    # the fixture's matches (dashboard_fixture.add_matches) are tournaments of two underneath
    assert list(listing["name"]) == ["match ppo-3v3-v1 vs rule (SPRT)", "match ppo-3v3-v2 vs rule (8 games)",
                                     "match ppo-3v3-v2 vs ppo-3v3-v1 (SPRT)", "round-robin-2v2", "round-robin-1v1"]
    assert list(listing["status"]) == ["interrupted", "finished", "finished", "running", "finished"]
    assert list(listing["games"]) == ["5 / 20", "8 / 8", "32 / 32", "5 / 12", "30 / 30"]
    assert "refresh every" in texts(at.caption)
    assert at.selectbox(key="tournament").value == league.running_tournament
    standings = at.dataframe[1].value
    assert standings["games"].sum() == 2 * 5
    at.selectbox(key="tournament").select(league.finished_tournament).run()
    standings = no_problems(at).dataframe[1].value
    assert standings["games"].sum() == 2 * 30 and standings["points"].sum() == 30
    assert list(standings["points"]) == sorted(standings["points"], reverse=True)


# --------------------------------------------------------------------------- replays


def test_replay_page_plays_a_game(monkeypatch, league, reg):
    game = next(g for g in reg.game_store.games() if g.id == league.replay_game)
    at = no_problems(page(monkeypatch, league.home.root, "replays", game=league.replay_game))
    assert at.selectbox(key="replay_game").value == league.replay_game
    assert at.selectbox(key="replay_tournament").value == league.finished_tournament
    heading = texts(at.markdown)
    assert f"{game.blue_goals} - {game.orange_goals}" in heading and game.blue in heading
    player = at.get("iframe")[0].proto.srcdoc
    assert "<canvas" in player and json.dumps(game.blue) in player
    goals = at.dataframe[0].value
    assert len(goals) == game.blue_goals + game.orange_goals
    assert list(goals.columns) == ["time", "team", "car", "score", "step"]
    assert len(charts(at)) == 1  # ball speed and position
    starts = at.selectbox(key=f"replay_start_{league.replay_game}").options
    assert len(starts) == 1 + len(goals)
    # jumping to the first goal restarts the player there, playing
    lead = round(GOAL_LEAD_SECONDS / (TICK_SKIP / 120))
    at.selectbox(key=f"replay_start_{league.replay_game}").select(max(0, int(goals["step"].iloc[0]) - lead)).run()
    player = no_problems(at).get("iframe")[0].proto.srcdoc
    assert "AUTOPLAY = true;" in player


def test_replay_filters_by_agent_and_result(monkeypatch, league, reg):
    at = page(monkeypatch, league.home.root, "replays")
    newest = reg.match_store.get(league.matches["interrupted"]).tournament_id
    assert at.selectbox(key="replay_tournament").value == newest  # newest first
    at.selectbox(key="replay_tournament").select(league.finished_tournament).run()
    at.selectbox(key="replay_agent").select("ppo-1v1-v4").run()
    at.selectbox(key="replay_result").select("win").run()
    no_problems(at)
    labels = at.selectbox(key="replay_game").options
    assert labels and all("ppo-1v1-v4" in label for label in labels)
    for label in labels:  # "#id blue b-o orange  (time)"
        _, blue, score, orange = label.split("(")[0].split()
        b, o = map(int, score.split("-"))
        assert (blue == "ppo-1v1-v4" and b > o) or (orange == "ppo-1v1-v4" and o > b)


def test_replay_file_missing_is_a_message(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "replays", game=league.missing_replay_game))
    warning = texts(at.warning)
    assert f"The replay file of game #{league.missing_replay_game} is missing" in warning
    assert not at.get("iframe")


def test_game_without_replay_and_unknown_game(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "replays", game=league.no_replay_game))
    assert f"Game #{league.no_replay_game} has no replay file recorded." in texts(at.info)
    at = no_problems(page(monkeypatch, league.home.root, "replays", game=99999))
    assert "There is no game #99999" in texts(at.warning)


def test_corrupt_replay_file_is_a_message(monkeypatch, tmp_path):
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    reg.game_store.record(GameRecord(blue="rule", orange="random", team_size=1, seed=1, blue_goals=1, orange_goals=0,
                               length_seconds=60.0, replay_path="replays/bad.replay"))
    reg.close()
    (home.replays / "bad.replay").write_bytes(b"not a zip file")
    at = page(monkeypatch, home.root, "replays", game=1)
    assert not at.exception
    assert "not a readable replay file" in texts(at.error)


@pytest.mark.parametrize("damage, words", [
    (lambda a: {k: v for k, v in a.items() if k != "flags"}, "it lacks the member 'flags.npy'"),
    (lambda a: dict(a, ball=a["ball"].reshape(-1)), "its 'ball' member has shape"),
], ids=["no flags", "1-D ball"])
def test_a_malformed_replay_file_is_one_sentence(monkeypatch, tmp_path, damage, words):
    # Before, such a file ended in a KeyError or IndexError traceback on the page.
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    reg.game_store.record(GameRecord(blue="rule", orange="random", team_size=1, seed=1, blue_goals=1, orange_goals=0,
                               length_seconds=20.0, replay_path="replays/bad.replay"))
    reg.close()
    write_replay(home.replays / "good.replay", synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    with np.load(home.replays / "good.replay", allow_pickle=False) as z:
        arrays = damage({k: z[k] for k in z.files})
    with open(home.replays / "bad.replay", "wb") as f:
        np.savez_compressed(f, **arrays)
    at = page(monkeypatch, home.root, "replays", game=1)
    assert not at.exception and not at.get("iframe")
    [error] = at.error
    assert words in error.value and "\n" not in error.value and error.value.endswith(".")


def league_with_game(tmp_path, replay_path: str, blue: str = "rule", orange: str = "random"):
    """An empty league with one 1v1 game (rule 1-0 random) whose replay path is `replay_path`."""
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    reg.game_store.record(GameRecord(blue=blue, orange=orange, team_size=1, seed=1, blue_goals=1, orange_goals=0,
                               length_seconds=20.0, replay_path=replay_path))
    reg.close()
    return home


OUTSIDE_WORDS = "the replay path stored for game #1 is outside the league's replays folder"


@pytest.mark.parametrize("stored", ["/etc/passwd", "/etc/no-such-file", "../../../../etc/shadow",
                                    "replays/../league.db", "replays/../../elsewhere.replay",
                                    "replays/nul\x00.replay"])
def test_a_replay_path_outside_the_replays_folder_is_not_read(monkeypatch, tmp_path, stored):
    # Before: the page opened the file and answered "BadZipFile" (or "missing"), telling whether it exists.
    home = league_with_game(tmp_path, stored)
    write_replay(tmp_path / "elsewhere.replay", synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    at = page(monkeypatch, home.root, "replays", game=1)
    assert not at.exception and not at.get("iframe") and not at.warning
    [error] = at.error
    assert OUTSIDE_WORDS in error.value.lower() and error.value.endswith(".")


def test_a_symlink_out_of_the_replays_folder_is_not_followed(monkeypatch, tmp_path):
    outside = tmp_path / "outside.replay"
    write_replay(outside, synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    home = league_with_game(tmp_path, "replays/link.replay")
    (home.replays / "link.replay").symlink_to(outside)
    at = page(monkeypatch, home.root, "replays", game=1)
    assert not at.exception and not at.get("iframe")
    assert OUTSIDE_WORDS in texts(at.error).lower()


def test_a_symlink_within_the_replays_folder_is_read(monkeypatch, tmp_path):
    home = league_with_game(tmp_path, "replays/link.replay")
    write_replay(home.replays / "sub" / "real.replay", synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    (home.replays / "link.replay").symlink_to(home.replays / "sub" / "real.replay")
    at = no_problems(page(monkeypatch, home.root, "replays", game=1))
    assert at.get("iframe") and "names" not in texts(at.warning)


def test_an_absolute_path_inside_the_replays_folder_is_read(monkeypatch, tmp_path):
    home = build_empty_league(tmp_path / "league")
    write_replay(home.replays / "g.replay", synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    (tmp_path / "alias").symlink_to(home.root)  # the home reached through a link, the path stored resolved
    reg = Registry.open(home.db_path)
    reg.game_store.record(GameRecord(blue="rule", orange="random", team_size=1, seed=1, blue_goals=1, orange_goals=0,
                               length_seconds=20.0, replay_path=str(home.replays.resolve() / "g.replay")))
    reg.close()
    at = no_problems(page(monkeypatch, tmp_path / "alias", "replays", game=1))
    assert at.get("iframe") and not at.warning


def test_a_fifo_named_as_a_replay_is_refused_at_once(monkeypatch, tmp_path):
    home = league_with_game(tmp_path, "replays/pipe.replay")
    os.mkfifo(home.replays / "pipe.replay")
    at = page(monkeypatch, home.root, "replays", game=1)
    assert not at.exception and not at.get("iframe")
    assert "is a named pipe (FIFO), not a file." in texts(at.error)


def test_replay_names_that_differ_from_the_league_s_are_noted(monkeypatch, tmp_path):
    # Before: the player showed the replay's names without a word.
    home = league_with_game(tmp_path, "replays/g.replay")
    write_replay(home.replays / "g.replay", synthetic_replay(1, "impostor\x1b[31m", "random", 1, 1, 0, 20.0))
    at = no_problems(page(monkeypatch, home.root, "replays", game=1))
    assert at.get("iframe")
    note = texts(at.warning)
    assert "impostor" in note and "x1b" in note and "\x1b" not in note  # shown, escaped
    assert "rule" in note and "names" in note


def test_matching_replay_names_are_not_noted(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "replays", game=league.replay_game))
    assert at.get("iframe") and not at.warning


# --------------------------------------------------------------------------- training


def test_training_page_charts_run_metrics(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "training"))
    assert at.multiselect(key="training_runs").value == ["ppo-2v2"]  # most recently written
    at.multiselect(key="training_runs").set_value(["ppo-1v1", "ppo-2v2"]).run()
    runs = no_problems(at).dataframe[0].value
    assert list(runs["run"]) == ["ppo-1v1", "ppo-2v2"]
    assert list(runs["records"]) == [60, 60] and list(runs["bad lines"]) == [0, 1]
    assert list(runs["last step"]) == [3_000_000, 3_000_000]
    chosen = at.multiselect(key="training_metrics").value
    assert "charts/episode_reward" in chosen and "losses/value_loss" in chosen
    assert len(charts(at)) == len(chosen) + 1  # and ppo-1v1's win rate against the baselines (ppo-2v2 has none)


def test_metrics_reader_skips_partial_and_non_numeric(tmp_path):
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text(
        '{"step": 2, "time": 10.5, "charts/x": 1.0, "note": "text", "flag": true}\n'
        '{"step": 1, "time": 10.0, "charts/x": 0.5, "losses/l": NaN}\n'
        '[1, 2]\n'
        '{"time": 3}\n'
        '{"step": 3, "ti')
    metrics = read_metrics(run / "metrics.jsonl")
    assert metrics.skipped_lines == 3
    assert list(metrics.frame["step"]) == [1.0, 2.0]
    assert list(metrics.frame["seconds"]) == [0.0, 0.5]
    assert metrics.metric_names == ["charts/x"]
    assert [r.name for r in list_runs(tmp_path / "runs")] == ["r1"]
    long = long_form({"r1": metrics.frame}, ["charts/x", "missing"], "step")
    assert list(long["value"]) == [0.5, 1.0]


# --------------------------------------------------------------------------- the climb: curricula and baselines


def climb_rows(frame):
    return [(r.version, r.steps, r.baseline, r.games, r.wins, r.draws, r.losses) for r in frame.itertuples()]


def test_baseline_win_rates_by_hand(league, reg):
    """climb-1v1's versions against the baselines (dashboard_fixture.CLIMB_GAMES): by steps, then
    baseline in BASELINES order; the evaluation game against ppo-1v1-v4 and the manual game
    against rule are not the climb."""
    rates = queries.baseline_win_rates.read(reg, "climb-1v1")
    assert climb_rows(rates) == [
        ("climb-1v1-v1", 250_000, "random", 2, 1, 0, 1), ("climb-1v1-v1", 250_000, "rule", 4, 0, 1, 3),
        ("climb-1v1-v2", 500_000, "random", 2, 2, 0, 0), ("climb-1v1-v2", 500_000, "rule", 4, 2, 1, 1),
        ("climb-1v1-v3", 750_000, "random", 2, 2, 0, 0), ("climb-1v1-v3", 750_000, "rule", 4, 3, 1, 0),
        ("climb-1v1-v3", 750_000, "atba", 2, 1, 0, 1)]
    assert list(rates["win_rate"]) == [0.5, 0.0, 1.0, 0.5, 1.0, 0.75, 0.5]
    assert list(rates["draw_rate"]) == [0.0, 0.25, 0.0, 0.25, 0.0, 0.25, 0.0]
    rule = rates[rates["baseline"] == "rule"]
    assert list(rule["score_rate"]) == [0.125, 0.625, 0.875]  # what the gate checks measured
    assert list(rates["k"]) == [1, 1, 2, 2, 3, 3, 3]
    assert climb_rows(queries.baseline_win_rates.read(reg, "climb-2v2")) == [
        ("climb-2v2-v1", 1_000_000, "rule", 2, 0, 1, 1)]
    only_rule = queries.baseline_win_rates.read(reg, "climb-1v1", baselines=["rule"])
    assert list(only_rule["version"]) == ["climb-1v1-v1", "climb-1v1-v2", "climb-1v1-v3"]
    # ppo-1v1's evaluation games are the fixture's random ones: count them from the registry
    played = [g for g in reg.game_store.games(1) if g.origin == "evaluation" and "ppo-1v1-v1" in (g.blue, g.orange)
              and {g.blue, g.orange} & set(BASELINES)]
    assert queries.baseline_win_rates.read(reg, "ppo-1v1")["games"].sum() == len(played) == 4
    for run in ("climb", "nope", "climb-1v1-v1"):  # no agent is named RUN-vN
        empty = queries.baseline_win_rates.read(reg, run)
        assert empty.empty and "win_rate" in empty.columns


def test_baseline_win_rates_match_only_run_versions(tmp_path):
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    try:
        for name, steps in [("r-v1", 100), ("r-v2", 200), ("r-v10", 1000), ("r-vx", 300), ("r-v1-b", 400),
                            ("rr-v1", 500), ("r-v", 600), ("R-v3", 700)]:
            reg.agent_store.add(name, "mlp", 1, steps_trained=steps)
            reg.game_store.record(GameRecord(blue=name, orange="rule", team_size=1, seed=steps, blue_goals=1,
                                       orange_goals=0, length_seconds=30.0, origin="evaluation"))
        reg.game_store.record(GameRecord(blue="random", orange="r-v2", team_size=1, seed=1, blue_goals=2, orange_goals=2,
                                   length_seconds=30.0, origin="evaluation"))
        reg.game_store.record(GameRecord(blue="rule-pro", orange="r-v2", team_size=1, seed=2, blue_goals=2, orange_goals=0,
                                   length_seconds=30.0, origin="manual"))
        rates = queries.baseline_win_rates.read(reg, "r")
    finally:
        reg.close()
    assert climb_rows(rates) == [("r-v1", 100, "rule", 1, 1, 0, 0), ("r-v2", 200, "random", 1, 0, 1, 0),
                                 ("r-v2", 200, "rule", 1, 1, 0, 0), ("r-v10", 1000, "rule", 1, 1, 0, 0)]


def test_training_page_charts_the_climb(monkeypatch, league, reg):
    at = page(monkeypatch, league.home.root, "training")
    at.multiselect(key="training_runs").set_value(["climb-1v1"]).run()
    no_problems(at)
    assert "Win rate against the baselines" in texts(at.subheader)
    climb = charts(at)[0]
    assert json.loads(climb.proto.spec)["title"] == "climb-1v1"
    table = at.dataframe[1].value  # the games behind the chart
    assert climb_rows(table) == climb_rows(queries.baseline_win_rates.read(reg, "climb-1v1"))
    assert list(table["win_rate"]) == [0.5, 0.0, 1.0, 0.5, 1.0, 0.75, 0.5]
    at.multiselect(key="training_runs").set_value(["climb-1v1", "climb-2v2", "ppo-2v2"]).run()
    no_problems(at)
    assert [json.loads(c.proto.spec).get("title") for c in charts(at)][:2] == ["climb-1v1", "climb-2v2"]
    assert "No evaluation games against a baseline yet: ppo-2v2." in texts(at.caption)
    assert set(at.dataframe[1].value["run"]) == {"climb-1v1", "climb-2v2"}
    at.multiselect(key="training_runs").set_value(["ppo-2v2"]).run()
    assert "No evaluation games of this run's versions" in texts(no_problems(at).caption)


def test_curriculum_page_shows_stages_checks_and_final_agents(monkeypatch, league, reg):
    at = no_problems(page(monkeypatch, league.home.root, "curriculum"))
    assert at.header[0].value == "Curriculum"
    assert at.selectbox(key="curriculum").value == league.curriculum == "climb"
    assert at.query_params["curriculum"] == "climb"  # the view can be linked to
    assert "Interrupted: its time budget is spent" in texts(at.info)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Stages done": "1 of 2", "Steps trained": "1,000,000", "Gate checks": "4 (1 passed)"}

    stages = at.dataframe[0].value
    assert list(stages["stage"]) == ["1v1", "2v2"] and list(stages["team"]) == ["1v1", "2v2"]
    assert list(stages["status"]) == ["passed", "training"]
    assert list(stages["steps"]) == [750_000, 250_000]
    assert list(stages["run"]) == ["climb-1v1", "climb-2v2"]
    assert stages["start_agent"].iloc[1] == "climb-1v1-v3" and pd.isna(stages["start_agent"].iloc[0])
    assert stages["final_agent"].iloc[0] == "?page=lineage&agent=climb-1v1-v3"
    assert pd.isna(stages["final_agent"].iloc[1])
    final = reg.game_store.rating("climb-1v1-v3", 1)
    assert stages["elo"].iloc[0] == pytest.approx(final.elo) and stages["games"].iloc[0] == final.games == 10
    assert stages["ts"].iloc[0] == pytest.approx(conservative(final.mu, final.sigma))
    assert list(stages["checks"]) == ["3 (1 passed)", "1 (0 passed)"]
    assert f"Final agent: [climb-1v1-v3](?page=lineage&agent=climb-1v1-v3) · Elo {final.elo:.0f}" in texts(
        at.markdown)
    assert [s.value for s in at.subheader] == ["1. 1v1 · 1v1 · passed", "2. 2v2 · 2v2 · training"]
    assert "No final agent yet: the stage is still training." in texts(at.caption)

    first = at.dataframe[1].value  # stage 1's gate checks, in order
    assert list(first["agent"]) == ["climb-1v1-v1", "climb-1v1-v2", "climb-1v1-v3"]
    assert list(first["steps"]) == [250_000, 500_000, 750_000] and list(first["passed"]) == [False, False, True]
    assert list(first["checked"]) == sorted(first["checked"])
    assert list(first["win_rate_vs_rule"]) == [
        "FAILED: vs rule 0.5/4 (12%), Wilson lower bound 12% < 70%",
        "FAILED: vs rule 2.5/4 (62%), Wilson lower bound 62% < 70%",
        "ok: vs rule 3.5/4 (88%), Wilson lower bound 88% ≥ 70%"]
    stored = at.dataframe[2].value  # the criteria as stored
    assert list(stored["value"]) == [0.125, 0.625, 0.875] and set(stored["threshold"]) == {0.7}
    second = at.dataframe[3].value
    assert list(second["agent"]) == ["climb-2v2-v1"] and list(second["passed"]) == [False]
    assert second["win_rate_vs_rule"].iloc[0].startswith("FAILED: vs rule 0.5/2 (25%)")
    assert second["min_elo"].iloc[0].startswith("ok: Elo ")
    stored = at.dataframe[4].value
    assert list(stored["criterion"]) == ["win_rate_vs_rule", "min_elo"] and list(stored["passed"]) == [False, True]
    assert stored["value"].iloc[1] == pytest.approx(reg.game_store.rating("climb-2v2-v1", 2).elo, abs=0.1)
    # each stage's run against the baselines
    assert [json.loads(c.proto.spec)["title"] for c in charts(at)] == [
        "climb-1v1: win rate against the baselines", "climb-2v2: win rate against the baselines"]


def test_curriculum_links(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "curriculum", curriculum="nope"))
    assert at.selectbox(key="curriculum").value == "climb"  # an unknown name falls back to the newest
    at = no_problems(page(monkeypatch, league.home.root, "curriculum", curriculum="climb"))
    assert at.selectbox(key="curriculum").value == "climb"
    # the final agent's link opens the Lineage page on it
    at = no_problems(page(monkeypatch, league.home.root, "lineage", agent="climb-1v1-v3"))
    assert at.selectbox(key="lineage_agent").value == "climb-1v1-v3"
    facts = at.dataframe[0].value.set_index("fact")["value"]
    assert facts["parent"] == "climb-1v1-v2" and facts["children"] == "climb-2v2-v1"
    at.selectbox(key="lineage_agent").select("ppo-1v1-v2").run()
    assert no_problems(at).query_params["agent"] == "ppo-1v1-v2"


def test_curriculum_not_started_and_stopped(monkeypatch, tmp_path):
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    try:
        reg.curriculum_store.start("solo", {"name": "solo", "stages": []}, "solo.yaml",
                             [("a", 1, "solo-a"), ("b", 2, "solo-b")])
        reg.curriculum_store.start("other", {"name": "other", "stages": []}, "other.yaml", [("a", 3, "other-a")])
        reg.curriculum_store.update("solo", status="stopped", message="stage 1 (a) spent its maximum")
        reg.curriculum_store.update_stage("solo", 0, status="failed", steps=1000)
    finally:
        reg.close()
    at = page(monkeypatch, home.root, "curriculum")
    assert sorted(at.selectbox(key="curriculum").options) == ["other (running, stage 1 of 1)",
                                                             "solo (stopped, stage 1 of 2)"]
    at.selectbox(key="curriculum").select("solo").run()
    no_problems(at)
    assert "Stopped: stage 1 (a) spent its maximum" in texts(at.warning)
    stages = at.dataframe[0].value
    assert list(stages["status"]) == ["failed", "pending"] and stages["final_agent"].isna().all()
    assert list(stages["checks"]) == ["0 (0 passed)", "0 (0 passed)"]
    captions = texts(at.caption)
    assert captions.count("No gate check yet.") == 2 and "the stage has not started." in captions
    assert len(at.dataframe) == 1 and not charts(at)
    at.selectbox(key="curriculum").select("other").run()
    assert list(no_problems(at).dataframe[0].value["team"]) == ["3v3"]


# --------------------------------------------------------------------------- empty and missing leagues


@pytest.mark.parametrize("name, message", [
    ("leaderboard", "No rated games in 1v1 yet"),
    ("history", "no rating history to show"),
    ("head-to-head", "No games between different agents"),
    ("lineage", "No agent has a parent yet"),
    ("tournaments", "No tournaments yet"),
    ("matches", "No matches yet"),
    ("replays", "No games recorded yet"),
    ("training", "No training runs yet"),
    ("curriculum", "No curricula yet"),
])
def test_empty_league_pages_say_so(monkeypatch, empty_home, name, message):
    at = no_problems(page(monkeypatch, empty_home.root, name))
    assert message in texts(at.info)
    if name == "leaderboard":
        board = at.dataframe[0].value
        assert set(board["name"]) == set(BASELINES) and set(board["games"]) == {0}


def test_missing_league_is_a_message(monkeypatch, tmp_path):
    at = page(monkeypatch, tmp_path / "nowhere", "leaderboard")
    assert not at.exception
    assert "There is no league at" in texts(at.error) and "league init" in texts(at.error)
    (tmp_path / "folder").mkdir()
    at = page(monkeypatch, tmp_path / "folder", "replays")
    assert not at.exception and "No league found at" in texts(at.error)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "league.db").write_bytes(b"garbage" * 100)
    at = page(monkeypatch, tmp_path / "bad", "tournaments")
    assert not at.exception and "not a league database" in texts(at.error)


def test_home_from_script_arguments(monkeypatch, league, tmp_path):
    from dashboard.app import home_argument

    assert home_argument(["--home", "/x/y"]) == "/x/y"
    assert home_argument(["--other", "1"]) is None
    monkeypatch.setenv("LEAGUE_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sys, "argv", [APP, "--home", str(league.home.root)])
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "tournaments"
    no_problems(at.run())


# --------------------------------------------------------------------------- field and replay view


def test_boost_pads_and_field_geometry():
    assert len(field.BOOST_PADS) == 34
    assert sum(big for _, _, big in field.BOOST_PADS) == 6
    for x, y, big in field.BOOST_PADS:  # the field is point-symmetric
        assert any(abs(x + x2) <= 2 and abs(y + y2) <= 2 and big == big2 for x2, y2, big2 in field.BOOST_PADS)
    outline = field.field_outline()
    assert len(outline) == 8 and max(abs(x) for x, _ in outline) == 4096 and max(abs(y) for _, y in outline) == 5120
    for x, y in outline:  # corner cuts: every corner is on a side or back wall, none in the square corner
        assert abs(x) + abs(y) <= 4096 + 5120 - 1152


def test_field_draws_the_game_values():
    """The drawing takes the arena from league/game_values.py (tests/test_game_values.py checks
    those against RocketSim and RLGym)."""
    assert [(x, y) for x, y, _ in field.BOOST_PADS] == [(x, y) for x, y, _ in game_values.BOOST_PADS]
    assert [i for i, (_, _, big) in enumerate(field.BOOST_PADS) if big] == list(game_values.BIG_PADS)
    geometry = field.geometry()
    assert geometry["halfX"] == game_values.SIDE_WALL_X and geometry["halfY"] == game_values.BACK_NET_Y
    assert geometry["ceiling"] == game_values.CEILING_Z and geometry["ballRadius"] == game_values.BALL_RADIUS


def test_player_payload_round_trips_positions():
    replay = synthetic_replay(5, "a", "b", 2, 2, 1, 60.0)
    payload = player_payload(replay)
    assert payload["cars"] == 4 and payload["labels"] == car_labels(replay) == ["B1", "B2", "O1", "O2"]
    ball = np.frombuffer(base64.b64decode(payload["ball"]), "<i2").reshape(replay.steps, 4)
    assert np.abs(ball[:, :3] - replay.ball[:, :3]).max() <= 0.5
    cars = np.frombuffer(base64.b64decode(payload["carData"]), "<i2").reshape(replay.steps, 4, len(CAR_FIELDS))
    assert np.abs(cars[:, :, 0:3] - replay.cars[:, :, 0:3]).max() <= 0.5
    # the 2D view turns the forward vector back into the yaw it draws
    yaw = np.arctan2(cars[:, :, 4], cars[:, :, 3])
    assert np.abs(np.angle(np.exp(1j * (yaw - replay.cars[:, :, 4])))).max() <= 0.001
    assert (cars[:, :, CAR_FIELDS.index("boost")] == np.rint(replay.boost)).all()
    assert [g["team"] for g in payload["goals"]].count(0) == 2
    events = events_table(replay)
    assert list(events[events["kind"] == "goal"]["score"])[-1] == "2-1"
    html = player_html(payload, start_step=10 ** 9)
    assert f"START_FRAME = {replay.steps - 1}," in html  # the start is clamped to the game
    assert "</script>" not in player_html(dict(payload, blue="</script>"))[-200:-20]


def test_player_html_escapes_names():
    replay = synthetic_replay(1, "</script><b>x", "o", 1, 0, 0, 20.0)
    html = player_html(player_payload(replay))
    assert "</script><b>x" not in html


def test_format_clock():
    assert format_clock(0) == "0:00" and format_clock(61.9) == "1:01" and format_clock(-3) == "0:00"


# --------------------------------------------------------------------------- command


def test_dashboard_command_on_a_missing_league(tmp_path):
    from league.cli import app

    result = CliRunner().invoke(app, ["dashboard", "--home", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert "No league found at" in " ".join(result.output.split())


def test_dashboard_command_line():
    from dashboard.launch import DEFAULT_ADDRESS, streamlit_command

    assert DEFAULT_ADDRESS == "127.0.0.1"
    cmd = streamlit_command(Path("/h"), 8600, "127.0.0.1")
    assert cmd[1:4] == ["-m", "streamlit", "run"] and cmd[4].endswith("dashboard/app.py")
    assert cmd[cmd.index("--server.port") + 1] == "8600"
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--server.headless") + 1] == "true"
    assert cmd[-3:] == ["--", "--home", "/h"]


def test_dashboard_imports_no_training_stack():
    code = ("import sys, dashboard.app, league.cli.dashboard; "
            "print(sorted(m for m in ('torch', 'rlgym', 'RocketSim', 'agents', 'training') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
