"""End to end: `league watch` plays a real game at real time while `league dashboard` (test_dashboard_e2e's
server and browser) serves its Live games page to headless Chromium, which follows the game by itself (the
page reruns its fragment every second). Screenshots go to /tmp/dashboard-shots/ too. Skipped without
Debian's `chromium`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_dashboard_e2e import CHROMIUM, browser, served, shots, wait_until  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.slow,  # a Streamlit server, a headless Chromium and a game played at real time
]


def league_command() -> list[str]:
    script = Path(sys.executable).with_name("league")
    return [str(script)] if script.exists() else [sys.executable, "-m", "league.cli"]


def played_seconds(text: str) -> int | None:
    found = re.search(r"live · 1v1 · seed 4 · (\d+):(\d\d) played", text)
    return int(found[1]) * 60 + int(found[2]) if found else None


def test_the_live_page_follows_a_watched_game(served, browser, shots, tmp_path):
    base, league = served
    live = league.home.root / "live"
    log = tmp_path / "watch.log"
    with open(log, "wb") as out:
        watch = subprocess.Popen([*league_command(), "watch", "rule-pro", "random", "--home", str(league.home.root),
                                  "--game-seconds", "25", "--seed", "4"], stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: list(live.glob("*.replay")), 60, "the live game's first write")
        browser.goto(f"{base}/?page=live")
        first = played_seconds(browser.wait_for_text(["Live games", "live · 1v1 · seed 4"], timeout=60))
        browser.screenshot(shots / "live-1.png")
        # The page is not reloaded: its fragment reruns and catches up with the game.
        later = wait_until(lambda: (lambda s: s if s is not None and s >= first + 3 else None)(
            played_seconds(browser.evaluate("document.body.innerText"))), 30, "the clock to move on")
        browser.screenshot(shots / "live-2.png")
        assert later >= first + 3
        assert (shots / "live-1.png").read_bytes() != (shots / "live-2.png").read_bytes()
        assert watch.wait(90) == 0, log.read_text()
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    browser.wait_for_text(["finished · 1v1 · seed 4", "0:25 played", "rule-pro"], timeout=30)
    browser.screenshot(shots / "live-finished.png")
