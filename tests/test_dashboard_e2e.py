"""End to end: `league dashboard` on a free port, driven by headless Chromium over the DevTools protocol.

Opens the leaderboard and a replay, checks what the browser rendered (agent names, the player's
score and event lists, playback advancing), and saves screenshots (also copied to
/tmp/dashboard-shots/ for a person to look at). Skipped when Debian's `chromium` is not installed
(`apt-get install -y chromium`).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dashboard_fixture import copy_fixture_league
from dashboard_leagues import build_mixed_league, build_roles_league, build_sparse_league

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.slow,  # a Streamlit server and a headless Chromium: CI runs these after the default suite
]
SHOTS_COPY = Path("/tmp/dashboard-shots")
START_TIMEOUT = 60.0
RENDER_TIMEOUT = 45.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (OSError, ValueError) as exc:  # not up yet
            last = exc
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what} (last problem: {last})")


class Browser:
    """Headless Chromium with one page, driven through the DevTools protocol."""

    def __init__(self, profile: Path, width: int = 1600, height: int = 1100):
        from websockets.sync.client import connect  # ships with streamlit

        port = free_port()
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},{height}",
             f"--remote-debugging-port={port}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.stack = contextlib.ExitStack()
        try:
            def page_target():
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as resp:
                    pages = [t for t in json.load(resp) if t["type"] == "page"]
                return pages[0]["webSocketDebuggerUrl"] if pages else None

            url = wait_until(page_target, 30, "chromium's DevTools endpoint")
            self.ws = self.stack.enter_context(connect(url, max_size=None, open_timeout=10))
        except BaseException:
            self.close()
            raise
        self.ids = itertools.count(1)

    def call(self, method: str, **params):
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for_text(self, needles: list[str], expression: str = "document.body ? document.body.innerText : ''",
                      timeout: float = RENDER_TIMEOUT) -> str:
        seen = {"text": ""}

        def found():
            seen["text"] = self.evaluate(expression) or ""
            return all(n in seen["text"] for n in needles)

        try:
            wait_until(found, timeout, f"{needles}")
        except AssertionError:
            raise AssertionError(f"{needles} not all rendered; page text was:\n{seen['text'][:3000]}") from None
        return seen["text"]

    def tables(self) -> list[list[list[str]]]:
        """Every st.dataframe's cells, from the accessible table the grid keeps beside its canvas."""
        return self.evaluate(
            "Array.from(document.querySelectorAll('[data-testid=stDataFrame] table')).map(t => "
            "Array.from(t.querySelectorAll('tr')).map(r => Array.from(r.querySelectorAll('th, td'))"
            ".map(c => c.textContent)))") or []

    def wait_for_table(self, header: str, timeout: float = RENDER_TIMEOUT) -> list[dict[str, str]]:
        """The rows (as column -> text) of the first table with a column named `header`."""
        seen = {"tables": []}

        def found():
            seen["tables"] = self.tables()
            return next(([dict(zip(t[0], row)) for row in t[1:]] for t in seen["tables"]
                         if t and header in t[0] and len(t) > 1), None)

        try:
            return wait_until(found, timeout, f"a table with column {header!r}")
        except AssertionError:
            raise AssertionError(f"no table with column {header!r}; tables: {seen['tables']}") from None

    def screenshot(self, path: Path, scale: float = 1.0) -> Path:
        """The viewport as a PNG (at `scale`: 0.5 halves each side, for a small picture in the docs)."""
        if scale == 1.0:
            data = self.call("Page.captureScreenshot", format="png")["data"]
        else:
            size = self.evaluate("[window.innerWidth, window.innerHeight]")
            data = self.call("Page.captureScreenshot", format="png", clip={
                "x": 0, "y": 0, "width": size[0], "height": size[1], "scale": scale})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.stack.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def serving(root: Path, log_dir: Path):
    """`league dashboard` on the league at `root` and a free port; yields its base url."""
    port = free_port()
    script = Path(sys.executable).with_name("league")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "league.cli"]
    log = log_dir / "dashboard.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*command, "dashboard", "--home", str(root), "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def healthy():
        if proc.poll() is not None:
            raise AssertionError(f"league dashboard exited with {proc.returncode}:\n{log.read_text()}")
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as resp:
            return resp.read().strip() == b"ok"

    try:
        wait_until(healthy, START_TIMEOUT, "the dashboard to serve")
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def served(fixture_league_template, tmp_path_factory):
    """`league dashboard` on a fixture league and a free port; yields (base url, league)."""
    league = copy_fixture_league(fixture_league_template, tmp_path_factory.mktemp("e2e") / "league")
    with serving(league.home.root, tmp_path_factory.mktemp("e2e-log")) as base:
        yield base, league


@pytest.fixture(scope="module")
def served_roles(tmp_path_factory):
    """`league dashboard` on one home holding a league of roles with probes, mixed-team games and a
    match, and a sparse 1v1 stage with a full round robin (tests/dashboard_leagues.py); yields
    (base url, the mixed league's ids, the sparse league's ids)."""
    root = tmp_path_factory.mktemp("e2e-roles") / "league"
    build_roles_league(root)
    mixed = build_mixed_league(root)
    sparse = build_sparse_league(root)
    with serving(root, tmp_path_factory.mktemp("e2e-roles-log")) as base:
        yield base, mixed, sparse


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("screenshots")
    yield folder
    SHOTS_COPY.mkdir(parents=True, exist_ok=True)
    for png in folder.glob("*.png"):
        shutil.copy(png, SHOTS_COPY / png.name)


def test_leaderboard_in_the_browser(served, browser, shots):
    base, league = served
    browser.goto(f"{base}/?page=leaderboard")
    text = browser.wait_for_text(["Leaderboard", "Ratings", "MLE Elo (bars: 95% interval"])
    assert "Traceback" not in text
    rows = browser.wait_for_table("Agent")
    # the columns the browser's width shows (the last, "Last played", is a scroll away since the Title column)
    assert list(rows[0])[:16] == ["#", "Agent", "SPRT", "Title", "Status", "Elo", "MLE Elo", "95% interval", "TS mu",
                                  "TS sigma", "mu - 3 sigma", "Games", "W", "D", "L", "GD"]
    assert [r["Agent"] for r in rows] == ["ppo-1v1-v4", "climb-1v1-v3", "ppo-1v1-v2", "climb-1v1-v2", "ppo-1v1-v3",
                                          "lstm-1v1-v1", "atba", "rule-pro", "climb-1v1-v1", "rule", "random"]
    assert (rows[0]["#"], rows[0]["Status"]) == ("1", "champion")
    assert all(" to " in r["95% interval"] for r in rows if r["Games"] != "0")  # rule-pro has not played
    browser.wait_for_text(["Ratings"])
    time.sleep(1.0)  # let the chart finish drawing
    assert browser.screenshot(shots / "leaderboard.png").stat().st_size > 10_000


def test_curriculum_in_the_browser(served, browser, shots):
    base, league = served
    browser.goto(f"{base}/?page=curriculum&curriculum={league.curriculum}")
    text = browser.wait_for_text(["Curriculum", "1. 1v1 · 1v1 · passed", "2. 2v2 · 2v2 · training",
                                  "Final agent: climb-1v1-v3", "climb-1v1: win rate against the baselines"])
    assert "Traceback" not in text
    stages = browser.wait_for_table("Final agent")
    assert [(r["stage"], r["status"]) for r in stages] == [("1v1", "passed"), ("2v2", "training")]
    # the grid's accessible table holds the link itself (the canvas shows the agent's name)
    assert stages[0]["Final agent"].endswith("?page=lineage&agent=climb-1v1-v3") and not stages[1]["Final agent"]
    checks = browser.wait_for_table("win_rate_vs_rule")
    assert [r["agent"] for r in checks][:3] == ["climb-1v1-v1", "climb-1v1-v2", "climb-1v1-v3"]
    time.sleep(1.0)  # let the charts finish drawing
    assert browser.screenshot(shots / "curriculum.png").stat().st_size > 10_000


def test_match_in_the_browser(served, browser, shots):
    base, league = served
    match_id = league.matches["sprt"]
    browser.goto(f"{base}/?page=matches&match={match_id}")
    verdict = "H1 accepted: ppo-3v3-v2 is at least 100 normalized Elo better than ppo-3v3-v1."
    text = browser.wait_for_text(["Matches", verdict, "Pair counts", "Pairs and their replays", "Watch a game"])
    assert "Traceback" not in text
    listing = browser.wait_for_table("A vs B")
    assert [(r["A vs B"], r["Decision"], r["Games"]) for r in listing] == [
        ("ppo-3v3-v1 vs rule", "", "4 / 20"), ("ppo-3v3-v2 vs rule", "", "8 / 8"),
        ("ppo-3v3-v2 vs ppo-3v3-v1", "H1", "32 / 40")]
    counts = browser.wait_for_table("WL+DD")
    assert [(r["LL"], r["LD"], r["WL+DD"], r["WD"], r["WW"], r["pairs"]) for r in counts] == [
        ("1", "1", "2", "2", "10", "16")]
    pairs = browser.wait_for_table("Replay 1")
    assert len(pairs) == 16 and all(r["Replay 1"].endswith("&show=watch") and r["Replay 2"].endswith("&show=watch")
                                    for r in pairs)
    assert [r["Class"] for r in pairs][:7] == ["WW", "WL+DD", "WD", "WW", "LD", "WW", "LL"]
    # both charts drawn (vega-embed renders into a canvas or svg per chart)
    wait_until(lambda: browser.evaluate("document.querySelectorAll('.vega-embed').length") >= 3, RENDER_TIMEOUT,
               "the LLR, Elo and counts charts")
    time.sleep(1.0)  # let the charts finish drawing
    assert browser.screenshot(shots / "match.png").stat().st_size > 10_000
    browser.call("Emulation.setDeviceMetricsOverride", width=1600, height=3000, deviceScaleFactor=1, mobile=False)
    time.sleep(1.5)  # the whole page: charts, counts, pairs with their replay links
    browser.screenshot(shots / "match-full.png")
    browser.call("Emulation.clearDeviceMetricsOverride")
    # a pair's replay link opens the Replays page on that game
    first = pairs[0]["Replay 1"]
    game = int(first.split("game=")[1].split("&")[0])
    browser.goto(f"{base}/?page=replays&game={game}")
    browser.wait_for_text(["Replays", f"Game #{game}", "match ppo-3v3-v2 vs ppo-3v3-v1 (SPRT)"])


def test_leaderboard_sprt_mark_in_the_browser(served, browser, shots):
    base, league = served
    browser.goto(f"{base}/?page=leaderboard")
    browser.wait_for_text(["Leaderboard", "Stage"])
    # choose the 3v3 stage: open the Stage combobox with a real click, then click its option
    opener = "document.querySelector('.st-key-stage button[aria-label=Open]')"
    wait_until(lambda: browser.evaluate(f"!!{opener}"), RENDER_TIMEOUT, "the Stage selectbox")
    x, y = browser.evaluate(f"(() => {{ const r = {opener}.getBoundingClientRect(); "
                            "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
    wait_until(lambda: browser.evaluate(
        "Array.from(document.querySelectorAll('[role=option]')).some(o => o.textContent.startsWith('3v3'))"),
        RENDER_TIMEOUT, "the stage options")
    browser.evaluate("Array.from(document.querySelectorAll('[role=option]'))"
                     ".find(o => o.textContent.startsWith('3v3')).click()")
    rows = wait_until(lambda: (lambda t: t if any(r["Agent"] == "ppo-3v3-v2" for r in t) else None)(
        browser.wait_for_table("Agent")), RENDER_TIMEOUT, "the 3v3 leaderboard")
    marks = {r["Agent"]: r["SPRT"] for r in rows}
    assert marks["ppo-3v3-v2"].endswith(f"?page=matches&match={league.matches['sprt']}")
    assert marks["ppo-3v3-v1"] == ""  # promoted by hand: no mark
    browser.wait_for_text(["\u2713 SPRT: promoted to champion because an SPRT match"])
    time.sleep(1.0)
    assert browser.screenshot(shots / "leaderboard-3v3-sprt.png").stat().st_size > 10_000


PLAYER = "document.querySelector('iframe[title^=\"Replay of game\"]')"


def player_text() -> str:
    return f"(() => {{ const f = {PLAYER}; return f && f.contentDocument && f.contentDocument.body ? " \
           "f.contentDocument.body.innerText : ''; })()"


def test_replay_in_the_browser(served, browser, shots):
    base, league = served
    browser.goto(f"{base}/?page=replays&game={league.replay_game}")
    browser.wait_for_text(["Replays", "ppo-1v1-v4", "Goals", "Touches", "Ball"])
    text = browser.wait_for_text(["Play", "Goals", "Touches", "B1", "O1", "step 0 /"], expression=player_text())
    assert "ppo-1v1-v4 0" in text  # the scoreboard at kick-off
    steps = int(text.split("step 0 /")[1].split()[0])
    # The player draws on its canvas and plays by itself.
    assert browser.evaluate(f"{PLAYER}.contentDocument.getElementById('field').height") > 200
    browser.evaluate(f"{PLAYER}.contentDocument.getElementById('play').click()")
    time.sleep(1.5)
    browser.evaluate(f"{PLAYER}.contentDocument.getElementById('play').click()")  # pause
    step = int(browser.evaluate(player_text()).split("step ")[1].split()[0])
    assert 0 < step < steps
    # The scrubber moves to any step; the score follows the goals.
    browser.evaluate(f"(() => {{ const d = {PLAYER}.contentDocument, s = d.getElementById('scrub'); "
                     f"s.value = {steps}; s.dispatchEvent(new Event('input')); }})()")
    text = browser.evaluate(player_text())
    assert f"step {steps} / {steps}" in text
    browser.evaluate(f"(() => {{ const d = {PLAYER}.contentDocument, s = d.getElementById('scrub'); "
                     f"s.value = {steps // 3}; s.dispatchEvent(new Event('input')); }})()")
    browser.evaluate(f"{PLAYER}.scrollIntoView({{block: 'center'}})")
    time.sleep(0.5)
    assert browser.screenshot(shots / "replay.png").stat().st_size > 10_000


def test_missing_replay_in_the_browser(served, browser, shots):
    base, league = served
    browser.goto(f"{base}/?page=replays&game={league.missing_replay_game}")
    text = browser.wait_for_text([f"The replay file of game #{league.missing_replay_game} is missing"])
    assert "Traceback" not in text
    browser.screenshot(shots / "replay-missing.png")


def test_running_tournament_refreshes_while_games_are_recorded(served, browser, shots):
    """The database is written (a game recorded) while the page is open; the page catches up by itself."""
    from league.registry import GameRecord, Registry

    base, league = served
    browser.goto(f"{base}/?page=tournaments")
    browser.wait_for_text(["Tournaments", "5 of 12 games played (running)"])
    listing = browser.wait_for_table("Progress")
    assert [(r["name"], r["status"], r["games"]) for r in listing][-2:] == [
        ("round-robin-2v2", "running", "5 / 12"), ("round-robin-1v1", "finished", "30 / 30")]
    assert len(listing) == 5  # and the fixture's three matches
    reg = Registry.open(league.home.db_path)
    try:
        new_game = reg.game_store.record(GameRecord(
            blue="random", orange="ppo-2v2-v1", team_size=2, seed=5, blue_goals=0, orange_goals=2,
            length_seconds=40.0, origin="tournament", tournament_id=league.running_tournament, schedule_index=5))
    finally:
        reg.close()
    browser.wait_for_text(["6 of 12 games played (running)"], timeout=30)
    wait_until(lambda: sum(int(r["games"]) for r in browser.wait_for_table("Points")) == 2 * 6, 15,
               "the standings to count the new game")
    links = wait_until(lambda: (lambda rows: rows if len(rows) == 6 else None)(
        {r["Game"]: r["Replay"] for r in browser.wait_for_table("Schedule #")}), 15, "the new game in the list")
    assert links[str(league.missing_replay_game)].endswith(f"game={league.missing_replay_game}&show=watch")
    assert links[str(new_game)].endswith("&show=details")  # the game just recorded has no replay
    browser.screenshot(shots / "tournaments.png")


# --------------------------------------------------------------------------- roles, mixed teams, Nash by tournament


def test_roles_page_in_the_browser(served_roles, browser, shots):
    base, _, _ = served_roles
    browser.goto(f"{base}/?page=roles")
    text = browser.wait_for_text(["League roles", "Share of the clock", "Runs and restarts", "Exploiter checks",
                                  "Exploitability probes"])
    assert "Traceback" not in text
    shares = browser.wait_for_table("Share wanted")
    assert [r["Role"] for r in shares] == ["main", "exploiter", "scout"]
    assert [r["Current run"] for r in shares] == ["roles-main", "roles-exploiter-r2", "roles-scout-r1"]
    runs = browser.wait_for_table("Snapshots")
    assert [(r["run"], r["Ended"]) for r in runs if r["role"] == "exploiter"] == [
        ("roles-exploiter-r1", "reset (won)"), ("roles-exploiter-r2", "current")]
    checks = browser.wait_for_table("W-D-L")
    assert [r["W-D-L"] for r in checks] == ["3-5-12", "15-3-2", "10-2-8", "8-4-8"]  # newest first
    time.sleep(1.5)  # let the charts finish drawing
    # the README's picture of the page (docs/dashboard-roles.png is this file, committed)
    assert browser.screenshot(shots / "roles.png", scale=0.6).stat().st_size > 10_000


def test_mixed_teams_and_nash_by_tournament_in_the_browser(served_roles, browser, shots):
    base, mixed, sparse = served_roles
    browser.goto(f"{base}/?page=replays&game={mixed.replay_game}")
    text = browser.wait_for_text(["ppo-2v2-v1+necto", "rule+atba", f"Game #{mixed.replay_game}"])
    assert "names its teams" not in text  # no false warning: the replay names the teams as the league does
    browser.goto(f"{base}/?page=nash&tournament={sparse.round_robin}")
    text = browser.wait_for_text(["Nash averaging", "Payoff matrix 100% full: 6 of 6 pairs"])
    assert "Too sparse" not in text and "Traceback" not in text
    time.sleep(1.0)
    browser.screenshot(shots / "nash-tournament.png")
    browser.goto(f"{base}/?page=nash")
    text = browser.wait_for_text(["Too sparse to mean anything", f"#{sparse.round_robin} four: 4 entrants"])
    time.sleep(1.0)
    browser.screenshot(shots / "nash-sparse.png")
