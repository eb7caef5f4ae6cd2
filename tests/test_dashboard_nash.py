"""The dashboard's Nash averaging page, rendered with Streamlit's AppTest against real league homes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard.pages_nash import SUPPORT_MARK  # noqa: E402
from league.home import LeagueHome  # noqa: E402
from league.registry import Registry  # noqa: E402

from conftest import play  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


@pytest.fixture(scope="module")
def rps_home(tmp_path_factory) -> LeagueHome:
    """rock, paper and scissors beat each other in a circle; weak loses to rock and draws paper (it
    never met scissors); old (retired) beat rock, the only one it met; duo plays 2v2 and has no games.
    Made once: the page only reads it."""
    home = LeagueHome(tmp_path_factory.mktemp("nash") / "league")
    home.create_dirs()
    reg = Registry.create(home.db_path)
    for name in ("rock", "paper", "scissors", "weak", "old"):
        reg.agent_store.add(name, "mlp", 1)
    for _ in range(2):
        play(reg, "rock", "scissors", 2, 0)
        play(reg, "scissors", "paper", 1, 0)
        play(reg, "paper", "rock", 3, 1)
        play(reg, "weak", "rock", 0, 2)
        play(reg, "paper", "weak", 1, 1)
        play(reg, "old", "rock", 1, 0)
    reg.agent_store.set_status("old", "retired")
    reg.agent_store.add("duo", "mlp", 2)
    reg.close()
    return home


def nash_page(monkeypatch, home: LeagueHome) -> AppTest:
    monkeypatch.setenv("LEAGUE_HOME", str(home.root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "nash"
    return ok(at.run())


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_nash_page_shows_the_payoff_heat_map_with_the_support_marked(monkeypatch, rps_home):
    at = nash_page(monkeypatch, rps_home)
    assert at.header[0].value == "Nash averaging"
    table = at.dataframe[0].value
    assert set(table["name"][:3]) == {"rock", "paper", "scissors"} and table["name"].iloc[3] == "weak"
    assert table["weight"][:3].tolist() == pytest.approx([1 / 3] * 3)
    assert table["support"].tolist() == [True, True, True, False]
    assert table["score"][:3].tolist() == [0.0, 0.0, 0.0] and table["score"].iloc[3] == pytest.approx(-1 / 6)
    assert "old" not in set(table["name"])  # retired: left out unless asked

    (chart,) = at.get("vega_lite_chart")
    (data,) = chart.proto.datasets  # the cells, as Arrow
    cells = pa.ipc.open_stream(data.data.data).read_all().to_pylist()
    assert len(cells) == 4 * 3
    labels = {row["agent"] for row in cells}
    assert labels == {f"{SUPPORT_MARK} rock", f"{SUPPORT_MARK} paper", f"{SUPPORT_MARK} scissors", "weak"}
    rock_scissors = next(r for r in cells if r["agent"].endswith(" rock") and r["opponent"].endswith(" scissors"))
    assert (rock_scissors["score_rate"], rock_scissors["games"], rock_scissors["wins"]) == (1.0, 2, 2)
    weak_paper = next(r for r in cells if r["agent"] == "weak" and r["opponent"].endswith(" paper"))
    assert (weak_paper["score_rate"], weak_paper["draws"]) == (0.5, 2)
    never = next(r for r in cells if r["agent"] == "weak" and r["opponent"].endswith(" scissors"))
    assert never["games"] == 0 and never["score_rate"] is None
    captions = " ".join(c.value for c in at.caption)
    assert "1 pair of agents never met and count as even" in captions


def test_nash_page_with_retired_agents_and_on_a_stage_without_games(monkeypatch, rps_home):
    at = nash_page(monkeypatch, rps_home)
    at.checkbox(key="show_retired").check().run()
    table = ok(at).dataframe[0].value
    # old never met paper, scissors or weak: even with them, as far as the meta-game knows, so it leads
    assert table["name"].iloc[0] == "old" and table["weight"].iloc[0] == pytest.approx(0.5)
    at.selectbox(key="stage").select(2).run()  # a stage the league has agents in but no games
    assert "No games between different agents in 2v2 yet" in " ".join(i.value for i in ok(at).info)


# --------------------------------------------------------------------------- one tournament's games, a sparse matrix


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    from dashboard_leagues import build_sparse_league

    return build_sparse_league(tmp_path_factory.mktemp("sparse") / "league")


def test_a_sparse_matrix_says_so_and_offers_the_full_round_robin(monkeypatch, sparse):
    at = nash_page(monkeypatch, sparse.home)
    (warning,) = at.warning
    # the 8 agents' chain (7 pairs), the round robin's ac, ad, bd and the partial tournament's ae: 11 of 28 met
    assert "Payoff matrix 39% full: 11 of 28 pairs of agents met in 1v1." in warning.value
    assert "Too sparse to mean anything" in warning.value
    buttons = [b for b in at.button if b.key and b.key.startswith("nash_rr_")]
    assert [b.key for b in buttons] == [f"nash_rr_{sparse.round_robin}"]  # not the partial one
    buttons[0].click().run()
    ok(at)
    assert at.selectbox(key="nash_scope").value == sparse.round_robin
    assert not at.warning and "Payoff matrix 100% full: 6 of 6 pairs of agents met in tournament" in " ".join(
        c.value for c in at.caption)
    table = at.dataframe[0].value
    assert table["name"].tolist() == ["a", "b", "c", "d"]  # a beat everyone: it alone is the support
    assert table["weight"].tolist() == pytest.approx([1.0, 0, 0, 0])
    assert at.query_params["tournament"] == str(sparse.round_robin)


def test_the_nash_page_takes_a_tournament_from_the_url_and_draws_every_label(monkeypatch, sparse):
    import json

    monkeypatch.setenv("LEAGUE_HOME", str(sparse.home.root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "nash"
    at.query_params["tournament"] = str(sparse.partial)
    ok(at.run())
    assert at.selectbox(key="nash_scope").value == sparse.partial
    assert at.checkbox(key="show_retired").disabled
    assert "Payoff matrix 67% full: 2 of 3 pairs" in " ".join(c.value for c in at.caption)
    (chart,) = at.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    encoding = spec["layer"][0]["encoding"] if "layer" in spec else spec["encoding"]
    for axis in ("x", "y"):  # Vega-Lite hides every other overlapping label unless told not to
        assert encoding[axis]["axis"]["labelOverlap"] is False
    assert encoding["x"]["axis"]["labelAngle"] == -90
