"""The Live page follows a new game (issue 60, item 4): a page left open on no game, or on a finished one,
shows a `league watch` started afterwards by itself, without a reload, and a rerun (the sidebar's Refresh)
picks the new game rather than keeping the old one. AppTest for what a rerun shows; headless Chromium
(test_dashboard_e2e's server and browser) for the page that is never reloaded."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from arena.replay import write_replay  # noqa: E402
from arena.live_folder import live_file_name  # noqa: E402
from dashboard_fixture import synthetic_replay  # noqa: E402
from test_dashboard_e2e import CHROMIUM, browser, served, wait_until  # noqa: E402,F401 (fixtures)

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
FOLLOW_TIMEOUT = 30.0  # the page checks the live folder every few seconds; a loaded host is slow


def watched(live: Path, seed: int, blue: str, orange: str, playing: bool, age_seconds: float = 0.0) -> Path:
    """A watched game's file as `league watch` writes it: its name (arena.live_folder), `live` while it plays."""
    replay = synthetic_replay(seed, blue, orange, 1, 1, 0, 20.0)
    replay.meta.update(live=playing, game_seconds=300.0)
    stamp = time.time() - age_seconds
    path = live / live_file_name(blue, orange, stamp)  # sides differ between a test's games, so names do
    write_replay(path, replay)
    os.utime(path, (stamp, stamp))
    return path


def live_page(monkeypatch, home) -> AppTest:
    monkeypatch.setenv("LEAGUE_HOME", str(home.root))
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["page"] = "live"
    return at.run()


def test_a_rerun_shows_a_game_started_after_a_finished_one(monkeypatch, home):
    old = watched(home.live, 1, "rule", "atba", playing=False, age_seconds=120)
    at = live_page(monkeypatch, home)
    assert at.selectbox[0].value == old.name and at.main.caption[-1].value.startswith("finished")
    new = watched(home.live, 2, "necto", "rule", playing=True)
    at.run()  # what the sidebar's Refresh does, and what the page's own check does on seeing a new file
    assert not at.exception and not at.error
    assert at.selectbox[0].value == new.name
    assert ":blue[necto] 1 - 0 :orange[rule]" in at.markdown[0].value
    assert at.main.caption[-1].value.startswith("live · 1v1 · seed 2")


def test_a_game_chosen_by_hand_stays_chosen_until_a_new_one_starts(monkeypatch, home):
    old = watched(home.live, 1, "rule", "atba", playing=False, age_seconds=120)
    watched(home.live, 2, "necto", "rule", playing=False, age_seconds=60)
    at = live_page(monkeypatch, home)
    at.selectbox[0].set_value(old.name).run()
    at.run()
    assert at.selectbox[0].value == old.name  # no new game: the reader's choice holds
    new = watched(home.live, 3, "atba", "necto", playing=True)
    at.run()
    assert at.selectbox[0].value == new.name


def test_a_page_with_no_game_shows_the_first_one(monkeypatch, home):
    at = live_page(monkeypatch, home)
    assert "league watch A B" in at.info[0].value
    new = watched(home.live, 4, "rule", "atba", playing=True)
    at.run()
    assert not at.info and at.selectbox[0].value == new.name


@pytest.mark.slow  # a Streamlit server and a headless Chromium
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_the_open_page_follows_new_games_without_a_reload(served, browser):
    base, league = served
    live = league.home.root / "live"
    for stale in live.glob("*.replay"):  # another test's watch, if any: this page starts with none
        stale.unlink()
    browser.goto(f"{base}/?page=live")
    browser.wait_for_text(["Live games", "No game has been watched"])
    browser.evaluate("window.notReloaded = true")  # gone if the page is loaded again

    first = watched(live, 5, "rule-pro", "random", playing=True)
    browser.wait_for_text(["live · 1v1 · seed 5", "rule-pro"], timeout=FOLLOW_TIMEOUT)
    assert browser.evaluate("window.notReloaded === true")

    replay = synthetic_replay(5, "rule-pro", "random", 1, 1, 0, 20.0)  # the watch ends: its last write
    replay.meta.update(live=False, game_seconds=300.0)
    write_replay(first, replay)
    browser.wait_for_text(["finished · 1v1 · seed 5"], timeout=FOLLOW_TIMEOUT)

    watched(live, 6, "atba", "rule", playing=True)  # a new `league watch`, started after that one ended
    browser.wait_for_text(["live · 1v1 · seed 6", "atba"], timeout=FOLLOW_TIMEOUT)
    assert browser.evaluate("window.notReloaded === true")
    wait_until(lambda: "seed 5" not in browser.evaluate("document.body.innerText"), 10, "the old game to go")
