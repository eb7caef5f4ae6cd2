"""What a user sees on the dashboard (issue 60 items 1, 2, 3, 6, 8; issue 56 item 4), rendered with Streamlit's
AppTest against real league homes written through the stores: an agent's page says where it came from, a long
run's lineage folds, heat maps are sized from their content, the training page's distillation figures say how
many games stand behind them, the Matches page shows no "None", an unknown page says so, and text from the
league (notes, names, folder names) never renders as Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from dashboard.pages_head_to_head import met_default  # noqa: E402
from dashboard_fixture import build_empty_league, write_distill_run  # noqa: E402
from dashboard_leagues import NECTO, build_mixed_league  # noqa: E402
from league.registry import GameRecord, Registry  # noqa: E402
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df  # noqa: E402
from test_dashboard import charts, no_problems, page, texts  # noqa: E402

IMAGE = "![p](https:127.0.0.1:8504/px.png)"
LINK = "[text](http:example.invalid)"
SOURCES = [{"bot": "necto", "source_file": "necto-model.pt", "source_sha256": "ab12", "licence": "CC BY-NC-SA 4.0"}]
RUN = 10  # versions of the distilled run dn


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """necto; a run dn of RUN versions distilled from it (each snapshot's distilled_from record, as training
    stores it), whose v1 beat `rule` and met necto; x1..x13 that each beat `punch` and never met one another;
    an agent whose notes and a tournament whose name are Markdown; a fixed match; a distilling run's metrics
    whose folder name is Markdown, and the distilling run student-1v1 with evaluation games against necto."""
    home = build_empty_league(tmp_path_factory.mktemp("v4") / "league")
    reg = Registry.open(home.db_path)
    seed = 0

    def game(blue, orange, bg, og, **kw):
        nonlocal seed
        seed += 1
        return reg.game_store.record(GameRecord(blue, orange, 1, seed, bg, og, 60.0, **kw))

    try:
        reg.agent_store.add("necto", "community", None, config={"community": {**NECTO["community"],
                                                                              "source_file": "necto-model.pt",
                                                                              "source_sha256": "ab12"}})
        record = {"teacher": "necto", "kind": "community", "sha256": None, "sources": SOURCES}
        for k in range(1, RUN + 1):
            reg.agent_store.add(f"dn-v{k}", "mlp", 1, parent=f"dn-v{k - 1}" if k > 1 else None,
                                steps_trained=k * 1000, config={"distilled_from": record})
        for k in range(1, 14):
            reg.agent_store.add(f"x{k}", "mlp", 1)
            game(f"x{k}", "rule", 2, 0)
        reg.agent_store.add("noted", "mlp", 1, notes=f"from {IMAGE} and {LINK}")
        game("noted", "rule", 1, 1)
        game("dn-v1", "necto", 0, 1)
        game("necto", "dn-v1", 1, 1)
        tid = reg.tournament_store.create(f"cup {LINK}", 1, 1, 1, 1, ["dn-v1", "necto"], {})
        game("dn-v1", "necto", 2, 0, tournament_id=tid, origin="tournament")
        for _ in range(30):  # after its games against necto: the latest 20 are all against atba
            game("dn-v1", "atba", 1, 0)
        reg.agent_store.add("student-1v1-v1", "mlp", 1, config={"distilled_from": record})
        for bg, og in ((1, 0), (0, 1), (0, 0), (0, 2), (1, 0), (0, 1)):
            game("student-1v1-v1", "necto", bg, og, origin="evaluation")
    finally:
        reg.close()
    write_distill_run(home)
    write_distill_run(home, name=LINK.replace("/", "_"))
    return home


# --------------------------------------------------------------------------- issue 56 item 4: text as text


MARKDOWN_ELEMENTS = ("markdown", "caption", "info", "warning", "success", "error", "subheader", "header", "title")


def unescaped_markdown(at) -> list[str]:
    """Markdown bodies where a link or an image would render: `](` not written as `\\]\\(`."""
    bodies = [str(e.value) for kind in MARKDOWN_ELEMENTS for e in at.get(kind)]
    bodies += [m.label for m in at.metric] + [b.label for b in at.button] + [x.label for x in at.expander]
    return [b for b in bodies if re.search(r"(?<!\\)\]\(", b)]


@pytest.mark.parametrize("name, query", [("lineage", {"agent": "noted"}), ("nash", {}), ("tournaments", {}),
                                         ("training", {}), ("matches", {})])
def test_text_from_the_league_never_renders_as_markdown(monkeypatch, league, name, query):
    at = no_problems(page(monkeypatch, league.root, name, **query))
    if name == "training":
        at.multiselect(key="training_runs").set_value([LINK.replace("/", "_"), "student-1v1"]).run()
        no_problems(at)
    assert not at.table, "st.table renders Markdown in every cell"
    assert not unescaped_markdown(at)


def test_an_agents_notes_show_as_written(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.root, "lineage", agent="noted"))
    facts = at.dataframe[0].value.set_index("fact")["value"]
    assert facts["notes"] == f"from {IMAGE} and {LINK}"  # in a grid cell: text, as written


# --------------------------------------------------------------------------- issue 60 item 3: the agent's page


def test_an_agents_page_says_where_it_came_from_as_league_show_does(monkeypatch, league):
    from league.cli import app
    from typer.testing import CliRunner

    at = no_problems(page(monkeypatch, league.root, "lineage", agent="dn-v7"))
    facts = at.dataframe[0].value.set_index("fact")["value"]
    shown = CliRunner().invoke(app, ["show", "dn-v7", "--home", str(league.root)]).output
    assert facts["distilled from"].startswith("necto (community") and "distilled from  necto (community" in shown
    # One function (league.provenance.provenance_facts) writes these rows for both.
    assert facts["derived from"] == "necto: necto-model.pt (sha256 ab12); licence CC BY-NC-SA 4.0"
    assert "derived from necto: necto-model.pt (sha256 ab12); licence CC BY-NC-SA 4.0" in " ".join(shown.split())
    assert facts["parent"] == "dn-v6" and facts["children"] == "dn-v8"


def test_a_long_runs_lineage_folds_and_starts_from_its_teacher(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.root, "lineage", agent="dn-v7"))
    (chart,) = charts(at)
    data = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets]
    nodes = next(d for d in data if "name" in d.columns and "elo" in d.columns)
    edges = next(d for d in data if "kind" in d.columns and "label" not in d.columns)
    drawn = set(nodes["name"])
    assert {"dn-v1", "dn-v7", f"dn-v{RUN}", "necto"} <= drawn and not {"dn-v2", "dn-v4", "dn-v6"} & drawn
    pairs = {(p, c, k, f) for p, c, k, f in zip(edges["parent"], edges["child"], edges["kind"], edges["folded"])}
    assert ("necto", "dn-v1", "teacher", 0) in pairs  # the run starts from its teacher
    assert ("dn-v1", "dn-v7", "parent", 5) in pairs  # v2 to v6 folded; v8 and v9, two in a row, are drawn
    assert ("dn-v8", "dn-v9", "parent", 0) in pairs
    labels = next(d for d in data if "label" in d.columns)
    assert set(labels["label"]) == {"5 versions"}
    at.checkbox(key="lineage_fold").uncheck().run()
    (chart,) = charts(no_problems(at))
    names = set().union(*(convert_arrow_bytes_to_pandas_df(d.data.data).get("name", []) for d in chart.proto.datasets))
    assert {f"dn-v{k}" for k in range(1, RUN + 1)} <= names


def test_an_agents_games_against_one_opponent_are_found_on_its_page(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.root, "lineage", agent="dn-v1"))
    ratings = at.dataframe[1].value
    assert list(ratings.columns) == ["Stage", "Elo", "TS mu", "TS sigma", "Games", "W", "D", "L", "Last played"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", ratings["Last played"].iloc[0])
    opponents = at.dataframe[2].value
    assert list(opponents["opponent"])[:2] == ["atba", "necto"]  # most games first; necto is listed
    assert opponents.set_index("opponent").loc["necto", "W-D-L"] == "1-1-1"
    latest = at.dataframe[3].value
    assert set(latest["orange"]) == {"atba"}  # the last 20 games are all against atba ...
    at.selectbox(key="agent_opponent").select("necto").run()
    against = no_problems(at).dataframe[3].value  # ... and its games against necto are one choice away
    assert len(against) == 3 and all("necto" in (b, o) for b, o in zip(against["blue"], against["orange"]))


# --------------------------------------------------------------------------- issue 60 item 1: heat maps


def heatmap_spec(at) -> dict:
    return next(json.loads(c.proto.spec) for c in charts(at) if "score rate" in c.proto.spec)


def test_a_two_entrant_tournaments_nash_heat_map_is_sized_from_its_content(monkeypatch, league):
    reg = Registry.open(league.db_path, readonly=True)
    tid = reg.tournament_store.all()[0].id
    reg.close()
    at = no_problems(page(monkeypatch, league.root, "nash", tournament=tid))
    spec = heatmap_spec(at)
    assert spec["width"]["step"] * 2 >= 240 and spec["height"]["step"] * 2 >= 240  # was 96 px in all
    legend = spec["layer"][0]["encoding"]["color"]["legend"]
    assert legend["orient"] == "right"
    assert at.get("arrow_vega_lite_chart") or charts(at)


def test_head_to_head_starts_with_agents_that_met(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.root, "head-to-head"))
    chosen = at.multiselect(key="h2h_agents_1").value
    spec = heatmap_spec(at)
    # the best Elo after dn-v1 are x1..x13, which never met it nor one another: an empty matrix at first
    assert chosen == ["dn-v1", "necto", "student-1v1-v1", "atba"]
    (chart,) = [c for c in charts(at) if "score rate" in c.proto.spec]
    cells = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets][0]
    assert (cells["games"] > 0).sum() >= 2 * (len(chosen) - 1)  # each chosen agent met one chosen before it
    assert spec["width"]["step"] >= 28


def test_the_default_matrix_grows_through_agents_that_met():
    import pandas as pd

    pairs = pd.DataFrame({"agent": ["a", "c", "c", "d"], "opponent": ["c", "a", "d", "c"]})
    assert met_default(["a", "b", "c", "d"], pairs, 12) == ["a", "c", "d"]  # b never met anyone chosen
    assert met_default(["b", "a", "c", "d"], pairs, 2) == ["a", "c"]


# --------------------------------------------------------------------------- issue 60 item 2: distillation


def test_distillation_charts_have_room_and_the_last_score_says_its_games(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.root, "training"))
    at.multiselect(key="training_runs").set_value(["student-1v1"]).run()
    no_problems(at)
    specs = {json.loads(c.proto.spec).get("title"): json.loads(c.proto.spec) for c in charts(at)}
    for title in ("held-out agreement (argmax)", "held-out cross-entropy", "score rate against the teacher"):
        assert specs[title]["height"] >= 300  # was 220 with the legend below, 20 px left to plot
        legends = [layer["encoding"]["color"].get("legend") for layer in specs[title]["layer"]
                   if "color" in layer["encoding"] and "field" in layer["encoding"]["color"]]
        assert all(legend is None or legend.get("orient") != "bottom" for legend in legends)
    axis = specs["score rate against the teacher"]["layer"][1]["encoding"]["y"]["axis"]
    assert axis["values"] == [0, 0.25, 0.5, 0.75, 1]
    summary = next(d.value for d in at.dataframe if "games behind it" in d.value.columns).iloc[0]
    # its evaluation games against necto: 2 wins, 1 draw, 3 losses
    assert (summary["games behind it"], summary["W-D-L"], summary["of version"]) == (6, "2-1-3", "student-1v1-v1")
    assert summary["last score vs teacher"] == pytest.approx(2.5 / 6)
    low, high = (int(v.rstrip("%")) for v in summary["95% interval"].split(" to "))
    assert low < 42 < high and high - low > 40


# --------------------------------------------------------------------------- issue 60 item 6: small things


def test_a_fixed_match_shows_no_none_and_says_so_once(monkeypatch, tmp_path):
    mixed = build_mixed_league(tmp_path / "league")
    at = no_problems(page(monkeypatch, mixed.home.root, "matches", match=mixed.match_id))
    listing = at.dataframe[0].value
    assert listing["decision"].tolist() == [""] and listing["llr"].tolist() == [""]
    said = texts(at.info) + texts(at.caption) + " ".join(m.label for m in at.metric)
    assert said.count("no SPRT") == 1 and "no hypothesis" not in said and "LLR" not in said


def test_an_unknown_page_says_so(monkeypatch, league):
    at = no_problems(page(monkeypatch, league.root, "leaderbord"))
    assert "There is no page leaderbord here: showing the Leaderboard instead." in texts(at.warning)
    assert at.header[0].value == "Leaderboard"
    at.run()
    assert not at.warning  # said once, for the link that asked


# --------------------------------------------------------------------------- issue 60 item 8: mixed teams


def test_an_agents_page_in_a_mixed_league_lists_every_member(monkeypatch, tmp_path):
    mixed = build_mixed_league(tmp_path / "league")
    at = no_problems(page(monkeypatch, mixed.home.root, "lineage", agent="necto"))
    opponents = at.dataframe[2].value
    assert set(opponents["opponent"]) == {"rule", "atba", "ppo-2v2-v2"}  # every member of the teams it met
    at.selectbox(key="agent_opponent").select("atba").run()
    games = no_problems(at).dataframe[3].value
    assert list(zip(games["blue"], games["orange"])) == [("ppo-2v2-v1+necto", "rule+atba")] * 2
    at = no_problems(page(monkeypatch, mixed.home.root, "head-to-head"))
    at.selectbox(key="stage").select(2).run()
    chosen = no_problems(at).multiselect(key="h2h_agents_2").value
    assert set(chosen) == {"necto", "rule", "atba", "ppo-2v2-v1", "ppo-2v2-v2"}  # every member is in the matrix
    at = no_problems(page(monkeypatch, mixed.home.root, "matches", match=mixed.match_id))
    assert {"ppo-2v2-v1+necto vs ppo-2v2-v2+rule"} == set(at.dataframe[0].value["match"])
    assert any("ppo-2v2-v2+rule on blue" in o for o in at.selectbox(key="match_watch").options)
