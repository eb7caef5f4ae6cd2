"""End to end: `league watch` plays a real game at real time while `league dashboard` serves its Live games
page to headless Chromium, which follows the game by itself (the page reruns its fragment every second).
Screenshots go to /tmp/dashboard-shots/ too. Skipped without Debian's `chromium`."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from test_dashboard_e2e import CHROMIUM, SHOTS_COPY, START_TIMEOUT, Browser, free_port, wait_until

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.slow,  # a Streamlit server, a headless Chromium and a game played at real time
]


def league_command() -> list[str]:
    script = Path(sys.executable).with_name("league")
    return [str(script)] if script.exists() else [sys.executable, "-m", "league.cli"]


@contextlib.contextmanager
def background(args: list[str], log: Path):
    with open(log, "wb") as out:
        proc = subprocess.Popen([*league_command(), *args], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def played_seconds(text: str) -> int | None:
    found = re.search(r"live · 1v1 · seed 4 · (\d+):(\d\d) played", text)
    return int(found[1]) * 60 + int(found[2]) if found else None


def test_the_live_page_follows_a_watched_game(tmp_path):
    home = tmp_path / "league"
    subprocess.run([*league_command(), "init", "--home", str(home)], check=True, capture_output=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    shots = tmp_path / "shots"
    shots.mkdir()
    with background(["dashboard", "--home", str(home), "--port", str(port)], tmp_path / "dashboard.log") as dash:
        def healthy():
            assert dash.poll() is None, (tmp_path / "dashboard.log").read_text()
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as resp:
                return resp.read().strip() == b"ok"

        wait_until(healthy, START_TIMEOUT, "the dashboard to serve")
        browser = Browser(tmp_path / "profile")
        try:
            with background(["watch", "rule-pro", "random", "--home", str(home), "--game-seconds", "25", "--seed",
                             "4"], tmp_path / "watch.log") as watch:
                wait_until(lambda: list((home / "live").glob("*.replay")), 60, "the live game's first write")
                browser.goto(f"{base}/?page=live")
                first = played_seconds(browser.wait_for_text(["Live games", "live · 1v1 · seed 4"], timeout=60))
                browser.screenshot(shots / "live-1.png")
                # The page is not reloaded: its fragment reruns and catches up with the game.
                later = wait_until(lambda: (lambda s: s if s is not None and s >= first + 3 else None)(
                    played_seconds(browser.evaluate("document.body.innerText"))), 30, "the clock to move on")
                browser.screenshot(shots / "live-2.png")
                assert later >= first + 3
                assert (shots / "live-1.png").read_bytes() != (shots / "live-2.png").read_bytes()
                assert watch.wait(90) == 0, (tmp_path / "watch.log").read_text()
            text = browser.wait_for_text(["finished · 1v1 · seed 4", "0:25 played"], timeout=30)
            assert ":blue" not in text and "rule-pro" in text
            browser.screenshot(shots / "live-finished.png")
        finally:
            browser.close()
            SHOTS_COPY.mkdir(parents=True, exist_ok=True)
            for png in shots.glob("*.png"):
                (SHOTS_COPY / png.name).write_bytes(png.read_bytes())
