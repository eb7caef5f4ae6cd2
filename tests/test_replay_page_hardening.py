"""The Replays page against what a person or a replay file can hand it (issue 56, items 9 and 12)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from arena.replay import write_replay  # noqa: E402
from dashboard.replay_view import player_html, player_payload  # noqa: E402
from dashboard_fixture import build_empty_league, synthetic_replay  # noqa: E402
from league.registry import GameRecord, Registry  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


@pytest.mark.parametrize("game", ["99999999999999999999999", "9223372036854775808", "-99999999999999999999999"])
def test_a_game_id_too_large_for_the_database_is_one_sentence(monkeypatch, tmp_path, game):
    # Before: sqlite's OverflowError ("Python int too large to convert to SQLite INTEGER") on the page.
    home = build_empty_league(tmp_path / "league")
    write_replay(home.replays / "one.replay", synthetic_replay(1, "rule", "random", 1, 1, 0, 20.0))
    reg = Registry.open(home.db_path)
    reg.game_store.record(GameRecord(blue="rule", orange="random", team_size=1, seed=1, blue_goals=1, orange_goals=0,
                                     length_seconds=20.0, replay_path="replays/one.replay"))
    reg.close()
    monkeypatch.setenv("LEAGUE_HOME", str(home.root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "replays"
    at.query_params["game"] = game
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [warning] = at.warning
    assert warning.value == f"There is no game #{game} in this league.", warning.value
    assert len(at.get("iframe")) == 1  # the league's own game is still shown


@pytest.mark.parametrize("name", ["<!--<script", "</script><script>alert(1)</script>", "<!--", "a\u2028b<"])
def test_the_players_embedded_json_holds_no_angle_bracket(name):
    # Before: only "</" was escaped, so "<!--<script" in a team name put the script into its
    # double-escaped state and the 3D player never drew.
    payload = player_payload(synthetic_replay(2, name, "atba", 1, 1, 0, 10.0))
    html = player_html(payload)
    embedded = re.search(r"const D = (.*?);\n", html, re.S).group(1)
    assert "<" not in embedded and "\u2028" not in embedded
    assert html.count("<script") == 1 and html.count("</script>") == 1
