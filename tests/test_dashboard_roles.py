"""The dashboard's League roles page through Streamlit's AppTest, on a league of roles written through the
role and probe stores (tests/dashboard_leagues.py) and on a home without one."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df  # noqa: E402

from dashboard.pages_roles import HOW_TO_START  # noqa: E402
from dashboard_fixture import build_empty_league  # noqa: E402
from dashboard_leagues import PROBES, ROLE_CHECKS, ROLE_SECONDS, build_roles_league  # noqa: E402
from league.ratings import wilson_interval  # noqa: E402
from test_dashboard import no_problems, page, texts  # noqa: E402


@pytest.fixture(scope="module")
def roles_home(tmp_path_factory):
    return build_roles_league(tmp_path_factory.mktemp("roles") / "league")


def frame_with(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def chart_data(at, title_part: str | None = None) -> list:
    """The datasets of each chart (all of them, or those whose spec mentions `title_part`)."""
    found = []
    for chart in at.get("vega_lite_chart"):
        if title_part is None or title_part in chart.proto.spec:
            found.append([convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets])
    return found


def test_roles_page_shows_shares_runs_restarts_and_checks(monkeypatch, roles_home):
    at = no_problems(page(monkeypatch, roles_home.root, "roles"))
    assert at.header[0].value == "League roles"
    assert at.selectbox(key="roles_league").value == "roles"  # the most recently started
    assert at.selectbox(key="roles_league").options == ["roles", "early"]
    caption = texts(at.caption)
    assert "interrupted" in caption and "configs/league-roles.yaml" in caption  # a file's name, as text

    shares = frame_with(at, "resets_won").set_index("role")
    total = sum(ROLE_SECONDS.values())
    assert shares["share"].to_dict() == pytest.approx({"main": 0.5, "exploiter": 0.25, "scout": 0.25})
    assert shares["had"].to_dict() == pytest.approx({r: s / total for r, s in ROLE_SECONDS.items()})
    assert shares.loc["exploiter", ["run", "restarts", "resets_won", "resets_steps"]].tolist() == [
        "roles-exploiter-r2", 1, 1, 0]
    assert shares.loc["main", "minutes"] == pytest.approx(20.0)

    runs = frame_with(at, "snapshots")
    exploiter = runs[runs["role"] == "exploiter"]
    assert exploiter["run"].tolist() == ["roles-exploiter-r1", "roles-exploiter-r2"]
    assert exploiter["ended"].tolist() == ["reset (won)", "current"]
    main = runs[runs["role"] == "main"].iloc[0]
    assert (main["snapshots"], main["steps"], main["latest"]) == (4, 400_000, "?page=lineage&agent=roles-main-v4")

    checks = frame_with(at, "wdl")
    assert len(checks) == len(ROLE_CHECKS)
    newest = checks.iloc[0]  # newest first
    role, restart, agent, steps, targets, w, d, l, reset = ROLE_CHECKS[-1]
    assert (newest["agent"], newest["against"], newest["wdl"], newest["restart"]) == (agent, ", ".join(targets),
                                                                                     f"{w}-{d}-{l}", restart)
    assert (newest["win_low"], newest["win_high"]) == pytest.approx(wilson_interval(w, w + d + l))
    scout = checks[checks["role"] == "scout"].iloc[0]
    assert scout["against"] == "roles-main-v2, rule" and scout["wdl"] == "10-2-8"
    assert checks["reset"].tolist().count("won") == 1
    # the checks' chart marks each exploiter's reset win rate
    (datasets,) = chart_data(at, "reset_win_rate")
    thresholds = next(d for d in datasets if "reset_win_rate" in d and d["reset_win_rate"].notna().all())
    assert dict(zip(thresholds["role"], thresholds["reset_win_rate"])) == {"exploiter": 0.7, "scout": 0.6}


def test_roles_page_shows_the_probes_of_the_league_and_on_request_all(monkeypatch, roles_home):
    at = no_problems(page(monkeypatch, roles_home.root, "roles"))
    probes = frame_with(at, "probe")
    league_probes = [p for p in PROBES if p[0].startswith("roles-")]
    assert sorted(probes["target"]) == sorted(p[0] for p in league_probes)
    row = probes[probes["target"] == "roles-main-v4"].iloc[0]
    assert (row["wdl"], row["win_rate"]) == ("20-31-49", pytest.approx(0.20))
    assert (row["win_low"], row["win_high"]) == pytest.approx(wilson_interval(20, 100))
    (datasets,) = chart_data(at, "probed")
    assert set(next(d for d in datasets if "win_low" in d)["target"]) == {"roles-main-v2", "roles-main-v4"}
    at.checkbox(key="roles_all_probes").check().run()
    assert sorted(frame_with(no_problems(at), "probe")["target"]) == sorted(p[0] for p in PROBES)


def test_roles_page_links_to_a_league_and_says_how_to_start_one(monkeypatch, roles_home, tmp_path):
    at = no_problems(page(monkeypatch, roles_home.root, "roles", league="early"))
    assert at.selectbox(key="roles_league").value == "early"
    assert "stopped" in texts(at.caption)
    assert frame_with(at, "snapshots")["run"].tolist() == ["early-main"]
    assert "No exploiter check yet" in texts(at.caption)

    empty = build_empty_league(tmp_path / "empty")
    at = no_problems(page(monkeypatch, empty.root, "roles"))
    assert texts(at.info) == HOW_TO_START
    assert "No probe yet" in texts(at.caption)
    assert not at.dataframe
