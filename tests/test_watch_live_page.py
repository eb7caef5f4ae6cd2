"""The dashboard's Live page (games being watched, `league watch`), with Streamlit's AppTest on a real league home."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from arena.replay import write_replay  # noqa: E402
from dashboard.pages_live import STALE_SECONDS, live_games, status  # noqa: E402
from dashboard_fixture import synthetic_replay  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def live_page(monkeypatch, home) -> AppTest:
    monkeypatch.setenv("LEAGUE_HOME", str(home.root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "live"
    return at.run()


def write_watched(home, name: str, live: bool, age_seconds: float = 0.0, goals=(1, 0)) -> Path:
    replay = synthetic_replay(3, "rule", "atba", 1, *goals, 20.0)
    replay.meta.update(live=live, game_seconds=300.0)
    path = home.live / name
    write_replay(path, replay)
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_no_watched_game_says_how_to_start_one(monkeypatch, home):
    at = live_page(monkeypatch, home)
    assert not at.exception and not at.error
    assert "league watch A B" in at.info[0].value


def test_a_live_game_is_drawn_at_its_latest_frame_and_refreshed(monkeypatch, home):
    write_watched(home, "20260101-000000-1-rule-vs-atba.replay", live=False, age_seconds=60, goals=(0, 1))
    newest = write_watched(home, "20260101-000100-2-rule-vs-atba.replay", live=True)
    assert live_games(str(home.root))[0] == newest
    at = live_page(monkeypatch, home)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox[0].value == newest.name  # the newest first
    assert ":blue[rule] 1 - 0 :orange[atba]" in at.markdown[0].value
    assert at.main.caption[-1].value.startswith("live · 1v1")
    assert "4:40 left" in at.main.caption[-1].value  # 20 s of a 300 s game played
    assert len(at.main.get("iframe")) == 1  # the player, drawn once

    at.selectbox[0].set_value("20260101-000000-1-rule-vs-atba.replay").run()
    assert not at.exception and not at.error
    assert ":blue[rule] 0 - 1 :orange[atba]" in at.markdown[0].value
    assert at.main.caption[-1].value.startswith("finished · 1v1")


def test_status_of_a_watched_game():
    now = 1000.0
    assert status({"live": True}, now - 1, now) == "live"
    assert status({"live": True}, now - STALE_SECONDS - 1, now) == "stopped"  # its `league watch` was stopped
    assert status({"live": False}, now, now) == "finished"
    assert status({}, now, now) == "finished"  # a replay written by a tournament, copied here
