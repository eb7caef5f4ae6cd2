"""The Matches page and the leaderboard's SPRT marks: AppTest against the fixture league's matches
(dashboard_fixture.add_matches: fixed results written as the match runner writes them), the
statistics path checked against league.sprt on the recorded games, and one real match played by
arena.match read back."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from dashboard import match_queries  # noqa: E402
from league.home import LeagueHome  # noqa: E402
from league.registry import Registry  # noqa: E402
from league.sprt import SprtParams, elo_estimate, pair_score, pentanomial_counts, sprt_result  # noqa: E402
from dashboard_fixture import (  # noqa: E402
    FIXED_PAIRS,
    INTERRUPTED_PAIRS,
    SPRT_PAIRS,
    SPRT_PARAMS,
    add_promotion,
    build_empty_league,
    copy_fixture_league,
)
from test_dashboard import APP, charts, no_problems, page, texts  # noqa: E402


@pytest.fixture(scope="module")
def league(fixture_league_template, tmp_path_factory):
    return copy_fixture_league(fixture_league_template, tmp_path_factory.mktemp("dash-matches") / "league")


@pytest.fixture
def reg(league):
    registry = Registry.open(league.home.db_path, readonly=True)
    yield registry
    registry.close()


def a_scores(reg: Registry, match_id: int) -> dict[int, float]:
    """A's score in each recorded game of the match, by schedule index, from the games alone."""
    m = reg.match_store.get(match_id)
    scores = {}
    for g in reg.game_store.games(tournament_id=m.tournament_id):
        mine, theirs = ((g.blue_goals, g.orange_goals) if g.blue == m.a
                        else (g.orange_goals, g.blue_goals))
        scores[g.schedule_index] = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return scores


def expected_path(reg: Registry, match_id: int, params: SprtParams | None) -> list[dict]:
    """The statistics after each complete pair, computed here with league.sprt from the recorded games."""
    scores = a_scores(reg, match_id)
    complete = [p for p in range(max(scores) // 2 + 1) if 2 * p in scores and 2 * p + 1 in scores]
    rows = []
    for n in range(1, len(complete) + 1):
        counts = pentanomial_counts((scores[2 * p], scores[2 * p + 1]) for p in complete[:n])
        if params is None:
            e = elo_estimate(counts)
            rows.append({"pair": complete[n - 1], "counts": counts, "llr": math.nan, "elo": e.elo, "elo_95": e.elo_95,
                         "los": e.los})
        else:
            r = sprt_result(counts, params)
            rows.append({"pair": complete[n - 1], "counts": counts, "llr": r.llr, "elo": r.elo, "elo_95": r.elo_95,
                         "los": r.los})
    return rows


def assert_path(path: pd.DataFrame, expected: list[dict]) -> None:
    assert len(path) == len(expected)
    for row, want in zip(path.itertuples(), expected):
        assert row.pair == want["pair"] and row.games == 2 * row.n
        assert [row.n0, row.n1, row.n2, row.n3, row.n4] == want["counts"]
        if math.isnan(want["llr"]):
            assert math.isnan(row.llr)
        else:
            assert row.llr == pytest.approx(want["llr"], abs=1e-12)
        assert (row.elo, row.elo_lo, row.elo_hi) == pytest.approx((want["elo"], *want["elo_95"]), abs=1e-9)
        assert row.los == pytest.approx(want["los"], abs=1e-12)


def chart_data(chart) -> list[pd.DataFrame]:
    """The data sets a drawn Altair chart was sent with (Streamlit ships them as Arrow beside the spec)."""
    import pyarrow as pa

    return [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets]


# --------------------------------------------------------------------------- the statistics, query by query


def test_sprt_path_equals_league_sprt_on_the_recorded_pairs(league, reg):
    match_id = league.matches["sprt"]
    path = match_queries.match_path(reg, match_id)
    assert_path(path, expected_path(reg, match_id, SPRT_PARAMS))
    assert len(path) == len(SPRT_PAIRS) == 16
    # the runner checked at the end of each batch of 4 pairs; the path crosses the upper bound at
    # pair 15, the runner saw it at 16 and stopped there
    assert list(path.loc[path["checked"], "n"]) == [4, 8, 12, 16]
    upper = SPRT_PARAMS.bounds[1]
    assert list(path["llr"] >= upper).index(True) == 14 and path["llr"].iloc[13] < upper
    # the last point is what the runner saved for the match
    m = reg.match_store.get(match_id)
    last = path.iloc[-1]
    assert [int(last[f"n{k}"]) for k in range(5)] == json.loads(m.counts_json) == [1, 1, 2, 2, 10]
    assert (last["llr"], last["elo"], last["elo_lo"], last["elo_hi"], last["los"]) == pytest.approx(
        (m.llr, m.elo, m.elo_lo, m.elo_hi, m.los), abs=1e-12)
    assert last["games"] == m.games == 32 and m.decision == "H1"


def test_fixed_path_has_elo_but_no_llr(league, reg):
    match_id = league.matches["fixed"]
    path = match_queries.match_path(reg, match_id)
    assert_path(path, expected_path(reg, match_id, None))
    assert len(path) == len(FIXED_PAIRS) and path["llr"].isna().all()
    assert json.loads(reg.match_store.get(match_id).counts_json) == [int(path[f"n{k}"].iloc[-1]) for k in range(5)]


def test_an_incomplete_pair_is_listed_but_not_counted(league, reg):
    match_id = league.matches["interrupted"]
    pairs = match_queries.match_pairs(reg, match_id)
    assert list(pairs["pair"]) == [0, 1, 2] and list(pairs["counted"]) == [True, True, False]
    assert list(pairs["outcome"][:2]) == ["WD", "LL"] and pd.isna(pairs["outcome"][2])
    assert pd.isna(pairs["second_game"][2]) and pairs["a_first"][2] == 1.0
    path = match_queries.match_path(reg, match_id)
    assert_path(path, expected_path(reg, match_id, match_queries.match_params(
        reg.match_store.get(match_id).params_json)))
    assert len(path) == 2 == len(INTERRUPTED_PAIRS) - 1
    assert [int(path[f"n{k}"].iloc[-1]) for k in range(5)] == [1, 0, 0, 1, 0]


def test_pairs_are_the_mirrored_games(league, reg):
    match_id = league.matches["sprt"]
    m = reg.match_store.get(match_id)
    games = {g.schedule_index: g for g in reg.game_store.games(tournament_id=m.tournament_id)}
    pairs = match_queries.match_pairs(reg, match_id)
    for p in pairs.itertuples():
        first, second = games[2 * p.pair], games[2 * p.pair + 1]
        assert (p.first_game, p.second_game) == (first.id, second.id)
        assert (first.blue, second.blue) == (m.a, m.b) and first.seed == second.seed
        assert (p.first_replay, p.second_replay) == (first.replay_path, second.replay_path)
        assert p.outcome == match_queries.PAIR_LABELS[pair_score(p.a_first, p.a_second)]


def test_matches_listing(league, reg):
    listing = match_queries.matches.read(reg)
    assert list(listing["id"]) == [league.matches[k] for k in ("interrupted", "fixed", "sprt")]  # newest first
    assert list(listing["mode"]) == ["sprt", "fixed", "sprt"]
    assert list(listing["status"]) == ["interrupted", "finished", "finished"]
    assert listing["decision"].tolist()[2] == "H1" and listing["decision"][:2].isna().all()
    assert (listing["a"][2], listing["b"][2]) == ("ppo-3v3-v2", "ppo-3v3-v1")


# --------------------------------------------------------------------------- the page


def test_matches_page_lists_matches_and_shows_the_newest(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "matches"))
    assert at.header[0].value == "Matches"
    listing = at.dataframe[0].value
    assert list(listing["match"]) == ["ppo-3v3-v1 vs rule", "ppo-3v3-v2 vs rule", "ppo-3v3-v2 vs ppo-3v3-v1"]
    assert list(listing["stage"]) == ["3v3"] * 3 and list(listing["games"]) == ["4 / 20", "8 / 8", "32 / 40"]
    assert listing["decision"][2] == "H1" and list(listing["mode"]) == ["sprt", "fixed", "sprt"]
    assert listing["open"][2] == f"?page=matches&match={league.matches['sprt']}"
    assert listing["elo_ci"][2].startswith("+") and " to +" in listing["elo_ci"][2]
    assert at.selectbox(key="match").value == league.matches["interrupted"]
    assert at.query_params["match"] == str(league.matches["interrupted"])
    # the interrupted one: two pairs counted, the half-played third listed as incomplete
    assert "no decision yet" in texts(at.info)
    pairs = at.dataframe[2].value
    assert list(pairs["outcome"]) == ["WD", "LL", "incomplete"] and list(pairs["results"]) == ["WD", "LL", "W."]
    assert pairs["second_replay"][2] is None or pd.isna(pairs["second_replay"][2])


def test_sprt_match_page_llr_path_counts_and_replay_links(monkeypatch, league, reg):
    match_id = league.matches["sprt"]
    at = no_problems(page(monkeypatch, league.home.root, "matches", match=match_id))
    assert at.selectbox(key="match").value == match_id
    assert "H1 accepted: ppo-3v3-v2 is at least 100 normalized Elo better than ppo-3v3-v1." in texts(at.success)
    assert "Promotion (sprt): ppo-3v3-v2 promoted to champion on this match's result." in texts(at.caption)
    metrics = {m.label: m.value for m in at.metric}
    m = reg.match_store.get(match_id)
    assert metrics["Games counted"] == "32 (16 pairs)" and metrics["LLR"] == f"{m.llr:+.3f}"
    assert metrics["LOS"] == f"{m.los:.1%}" and metrics["Elo (A - B)"] == f"{m.elo:+.0f}"
    # the LLR chart: the path and both of Wald's bounds; the Elo chart; the counts' bars
    specs = [json.loads(c.proto.spec) for c in charts(at)]
    titles = [s.get("title") for s in specs]
    assert titles[:2] == ["LLR after each complete pair (filled: where the runner checked the SPRT)",
                          "Elo difference after each complete pair (band: 95% interval)"] and len(specs) == 3
    datasets = chart_data(charts(at)[0])
    bounds = next(frame for frame in datasets if "bound" in frame.columns)
    assert sorted(bounds["llr"]) == pytest.approx(sorted(SPRT_PARAMS.bounds))
    points = next(frame for frame in datasets if "n" in frame.columns)
    want = expected_path(reg, match_id, SPRT_PARAMS)
    assert list(points["llr"]) == pytest.approx([w["llr"] for w in want], abs=1e-12)
    assert list(points.loc[points["checked"], "n"]) == [4, 8, 12, 16]
    counts = at.dataframe[1].value
    assert list(counts.columns) == ["LL", "LD", "WL+DD", "WD", "WW", "pairs"]
    assert counts.iloc[0].tolist() == [1, 1, 2, 2, 10, 16]
    # each pair's two games link to the Replays page
    pairs = at.dataframe[2].value
    games = {g.schedule_index: g for g in reg.game_store.games(tournament_id=m.tournament_id)}
    assert len(pairs) == 16
    for row in pairs.itertuples():
        p = row.pair - 1
        assert row.first_replay == f"?page=replays&game={games[2 * p].id}&show=watch"
        assert row.second_replay == f"?page=replays&game={games[2 * p + 1].id}&show=watch"
        assert row.first == f"{games[2 * p].blue_goals}-{games[2 * p].orange_goals}"
    assert pairs["llr"].iloc[-1] == pytest.approx(m.llr)


def test_a_replay_link_opens_the_game_and_the_page_plays_one(monkeypatch, league, reg):
    match_id = league.matches["sprt"]
    m = reg.match_store.get(match_id)
    game = next(g for g in reg.game_store.games(tournament_id=m.tournament_id) if g.schedule_index == 3)
    at = no_problems(page(monkeypatch, league.home.root, "replays", game=game.id))
    assert at.selectbox(key="replay_game").value == game.id
    assert at.selectbox(key="replay_tournament").value == m.tournament_id
    assert "<canvas" in at.get("iframe")[0].proto.srcdoc
    # or watched on the Matches page itself
    at = no_problems(page(monkeypatch, league.home.root, "matches", match=match_id))
    assert not at.get("iframe")
    assert f"pair 2, ppo-3v3-v1 on blue: {game.blue_goals}-{game.orange_goals} (game #{game.id})" in \
        at.selectbox(key="match_watch").options
    at.selectbox(key="match_watch").select(game.id).run()
    player = no_problems(at).get("iframe")[0].proto.srcdoc
    assert "<canvas" in player and json.dumps("ppo-3v3-v1") in player


def test_fixed_match_page_has_no_llr(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.home.root, "matches", match=league.matches["fixed"]))
    assert "Fixed match: 8 games of ppo-3v3-v2 against rule (no SPRT)." in texts(at.info)
    assert "LLR" not in {m.label for m in at.metric}  # the verdict says "no SPRT" once (issue 60 item 6)
    assert "no hypothesis" not in texts(at.caption)
    titles = [json.loads(c.proto.spec).get("title") for c in charts(at)]
    assert not any(t and t.startswith("LLR") for t in titles) and len(titles) == 2
    assert at.dataframe[2].value["llr"].isna().all()


def test_choosing_a_match_updates_the_link(monkeypatch, league):
    at = page(monkeypatch, league.home.root, "matches", match=999)
    assert "There is no match #999 in this league." in texts(at.warning)
    at.selectbox(key="match").select(league.matches["fixed"]).run()
    assert no_problems(at).query_params["match"] == str(league.matches["fixed"])


# --------------------------------------------------------------------------- the leaderboard's marks


def test_leaderboard_marks_the_sprt_promoted_agent_not_the_manual_one(monkeypatch, league):
    at = page(monkeypatch, league.home.root, "leaderboard")
    at.selectbox(key="stage").select(3).run()
    board = no_problems(at).dataframe[0].value
    marks = dict(zip(board["name"], board["sprt"]))
    assert marks["ppo-3v3-v2"] == f"?page=matches&match={league.matches['sprt']}"  # the mark opens its match
    assert marks["ppo-3v3-v1"] == ""  # promoted by hand: no mark
    assert sum(bool(v) for v in marks.values()) == 1
    assert "\u2713 SPRT: promoted to champion because an SPRT match" in texts(at.caption)
    at.selectbox(key="stage").select(1).run()
    board = no_problems(at).dataframe[0].value
    assert (board["sprt"] == "").all() and "\u2713 SPRT" not in texts(at.caption)


def test_sprt_promoted_leaves_out_manual_rejected_and_other_stages(tmp_path):
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    try:
        for name, size in (("a-1v1-v1", 1), ("a-1v1-v2", 1), ("a-1v1-v3", 1), ("a-2v2-v1", 2)):
            reg.agent_store.add(name, "mlp", size)
        add_promotion(reg, "a-1v1-v1", 1, "manual", True)
        add_promotion(reg, "a-1v1-v2", 1, "training", True, previous="a-1v1-v1")
        add_promotion(reg, "a-1v1-v3", 1, "sprt", False, previous="a-1v1-v2")  # H1 not accepted: no change
        add_promotion(reg, "a-2v2-v1", 2, "sprt", True)
        one, two = (match_queries.sprt_promoted.read(reg, size) for size in (1, 2))
    finally:
        reg.close()
    assert list(one["agent"]) == ["a-1v1-v2"] and list(one["method"]) == ["training"]
    assert pd.isna(one["match_id"][0])
    assert list(two["agent"]) == ["a-2v2-v1"]


def test_a_home_without_matches_or_promotions_tables(monkeypatch, tmp_path):
    """An older league home (schema before 0007/0008), opened read-only and never migrated."""
    home = build_empty_league(tmp_path / "league")
    reg = Registry.open(home.db_path)
    for table in ("promotions", "matches"):
        if table in reg.db.table_names():
            reg.db.execute(f"DROP TABLE {table}")
    reg.db.conn.commit()
    reg.close()
    reg = Registry.open(home.db_path, readonly=True)
    try:
        assert match_queries.matches.read(reg).empty and match_queries.match(reg, 1) is None
        assert match_queries.match_path(reg, 1).empty and match_queries.sprt_promoted.read(reg, 1).empty
    finally:
        reg.close()
    at = no_problems(page(monkeypatch, home.root, "matches"))
    assert "No matches yet" in texts(at.info)
    board = no_problems(page(monkeypatch, home.root, "leaderboard")).dataframe[0].value
    assert (board["sprt"] == "").all()


# --------------------------------------------------------------------------- a real match


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """rule against random, played by arena.match (8-second games, SPRT in batches of 2 pairs)."""
    pytest.importorskip("RocketSim")
    from arena.match import play_match
    from league.config import load_config

    home = LeagueHome(tmp_path_factory.mktemp("real-match") / "league")
    home.create_dirs()
    reg = Registry.create(home.db_path)
    try:
        cfg = load_config(stage="1v1", home_file=home.config_path, overrides={"seed": 3, "game.game_seconds": 8})
        outcome = play_match(home, reg, cfg, "rule", "random", SprtParams(elo1=50, alpha=0.3, beta=0.3),
                             max_games=12, batch_pairs=2, workers=1)
    finally:
        reg.close()
    return home, outcome


def test_a_real_match_reads_back_as_the_runner_saved_it(monkeypatch, played):
    home, outcome = played
    reg = Registry.open(home.db_path, readonly=True)
    try:
        path = match_queries.match_path(reg, outcome.id)
        assert_path(path, expected_path(reg, outcome.id, outcome.params))
        pairs = match_queries.match_pairs(reg, outcome.id)
    finally:
        reg.close()
    last = path.iloc[-1]
    assert tuple(int(last[f"n{k}"]) for k in range(5)) == tuple(outcome.stats.counts)
    assert (last["games"], last["llr"], last["elo"], last["los"]) == pytest.approx(
        (outcome.stats.games, outcome.stats.llr, outcome.stats.elo, outcome.stats.los), abs=1e-12)
    assert bool(last["checked"])  # the runner decided at a batch end
    assert pairs["first_replay"].notna().all() and pairs["second_replay"].notna().all()
    for rel in (*pairs["first_replay"], *pairs["second_replay"]):
        assert (home.root / rel).is_file()
    at = no_problems(page(monkeypatch, home.root, "matches", match=outcome.id))
    verdict = texts(at.success) + texts(at.info) + texts(at.warning)
    assert outcome.decision in verdict or "Inconclusive" in verdict
    assert {m.label: m.value for m in at.metric}["LLR"] == f"{outcome.stats.llr:+.3f}"
    at.selectbox(key="match_watch").select(int(pairs["first_game"][0])).run()
    assert "<canvas" in no_problems(at).get("iframe")[0].proto.srcdoc


def test_app_lists_the_matches_page():
    from dashboard.app import PAGES

    assert PAGES["matches"][0] == "Matches" and list(PAGES).index("matches") == list(PAGES).index("tournaments") + 1
    assert APP.endswith("app.py")


def test_leaderboard_marks_the_agent_a_title_round_robin_crowned(monkeypatch, fixture_league_template, tmp_path):
    """A 'round-robin' promotion (arena.crown) marks its agent, the mark opening that round robin's Nash page."""
    crowned = copy_fixture_league(fixture_league_template, tmp_path / "league")
    reg = Registry.open(crowned.home.db_path)
    try:
        reg.promotion_store.crown("ppo-1v1-v3", crowned.finished_tournament, held_by="ppo-1v1-v4")
    finally:
        reg.close()
    at = page(monkeypatch, crowned.home.root, "leaderboard")
    at.selectbox(key="stage").select(1).run()
    board = no_problems(at).dataframe[0].value
    marks = {name: mark for name, mark in zip(board["name"], board["crowned"]) if mark}
    assert marks == {"ppo-1v1-v3": f"?page=nash&tournament={crowned.finished_tournament}"}
    assert "\u265b round robin: crowned because its worst matchup" in texts(at.caption)


def test_a_match_and_its_tournament_say_how_their_games_opened(monkeypatch, league, played):
    """The Matches page and the Tournaments page name a contest's openings: the real match played
    with the default game.opening_jitter moves its kickoffs, the fixture's (stored with 0) did not."""
    home, outcome = played
    assert outcome.opening_jitter == 100.0
    reg = Registry.open(home.db_path, readonly=True)
    try:
        assert reg.match_store.get(outcome.id).opening_jitter == 100.0
    finally:
        reg.close()
    caption = texts(no_problems(page(monkeypatch, home.root, "matches", match=outcome.id)).caption)
    assert "8 s games · openings ±100 uu · seed" in caption
    caption = texts(no_problems(page(monkeypatch, home.root, "tournaments")).caption)
    assert "· openings ±100 uu" in caption
    caption = texts(no_problems(page(monkeypatch, league.home.root, "matches", match=league.matches["fixed"])).caption)
    assert " s games · standard kickoffs · seed" in caption and "openings ±" not in caption
    caption = texts(no_problems(page(monkeypatch, league.home.root, "tournaments")).caption)
    assert "standard kickoffs" in caption
