"""The 3D replay view in headless Chromium (the project's test browser, driven as in test_dashboard_e2e).

On the player page alone (a 5-minute 3v3 replay, opened from a file): screenshots at two moments
differ where the ball moved and the ball is drawn where the view projects it; scrubbing to the end
answers within half a second (the figure is printed); the cameras follow the ball and ride behind a
car; a pad is drawn lit while it is up and dark while it is down; the timeline marks the goals with
the score. Then on `league dashboard`: the Replays page opens in 3D, switches to 2D and back, and
its screenshot is kept (docs/images/replay-3d.png is a copy of it, scaled down).
"""

from __future__ import annotations

import base64
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest

from dashboard.replay_view import player_html, player_payload
from dashboard_fixture import synthetic_replay
from test_dashboard_e2e import (  # noqa: F401  (browser, served and shots are fixtures)
    CHROMIUM,
    RENDER_TIMEOUT,
    browser,
    served,
    shots,
    wait_until,
)

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.slow,  # a headless Chromium (and, for the last test, a Streamlit server)
]
# The figure (a scrub answers within 0.5 s) is measured and printed here (run with -s), not
# asserted: a performance target is no unit test. The bound below only catches a player that hangs.
SCRUB_HANG_SECONDS = 5.0


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory):
    """The 3D player of a 5-minute 3v3 replay, opened from a file; yields (browser, payload)."""
    replay = synthetic_replay(11, "blue-team", "orange-team", 3, 2, 2, 300.0)
    payload = player_payload(replay)
    path = tmp_path_factory.mktemp("player3d") / "player.html"
    path.write_text(player_html(payload, view="3d"), encoding="utf-8")
    browser.call("Emulation.setDeviceMetricsOverride", width=1600, height=1100, deviceScaleFactor=1, mobile=False)
    browser.goto(path.as_uri())
    wait_until(lambda: browser.evaluate("!!(window.player && document.getElementById('field').width)"),
               RENDER_TIMEOUT, "the player to start")
    assert browser.evaluate("document.getElementById('viewnote').style.display") != "flex"  # WebGL is on
    yield browser, payload
    browser.call("Emulation.clearDeviceMetricsOverride")


def canvas_shot(b) -> np.ndarray:
    """The canvas as an [H, W, 3] uint8 array (CSS pixels)."""
    from PIL import Image

    r = b.evaluate("(() => { const r = document.getElementById('field').getBoundingClientRect(); "
                   "return [r.x, r.y, r.width, r.height]; })()")
    data = b.call("Page.captureScreenshot", format="png",
                  clip={"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1})["data"]
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")).astype(int)


def seek(b, frame: int, camera: str = "stadium") -> None:
    b.evaluate(f"(() => {{ player.view.setCamera({json.dumps(camera)}); player.seek({frame}, false); }})()")


def ball_on_screen(b, frame: int):
    """(x, y) in canvas pixels where the view draws the ball's centre at `frame`, or None."""
    return b.evaluate(f"(() => {{ const p = player.ball({frame}); return player.view.project([p.x, p.y, p.z]); }})()")


def clear_moments(b, steps: int) -> list[int]:
    """Frames where the ball is on screen and no car is drawn within 70 px of it (nothing hides it)."""
    return b.evaluate(f"""(() => {{
      const out = [], w = document.getElementById('field').clientWidth, h = document.getElementById('field').clientHeight;
      player.view.setCamera('stadium');
      for (let f = 0; f < {steps}; f += 15) {{
        const bl = player.ball(f), p = player.view.project([bl.x, bl.y, bl.z]);
        if (!p || p[0] < 40 || p[0] > w - 40 || p[1] < 40 || p[1] > h - 40) continue;
        let clear = true;
        for (let i = 0; i < player.cars; i++) {{
          const c = player.car(i, f), q = player.view.project([c.x, c.y, c.z]);
          if (q && Math.hypot(q[0] - p[0], q[1] - p[1]) < 70) clear = false;
        }}
        if (clear) out.push(f);
      }}
      return out; }})()""")


def patch(img: np.ndarray, at, radius: int = 3) -> np.ndarray:
    x, y = int(round(at[0])), int(round(at[1]))
    return img[y - radius:y + radius + 1, x - radius:x + radius + 1]


def test_two_moments_differ_where_the_ball_moved(page, shots):
    b, payload = page
    moments = clear_moments(b, payload["steps"])
    first = moments[0]
    second = next(f for f in moments if f > first and np.hypot(*np.subtract(ball_on_screen(b, f), ball_on_screen(b, first))) > 150)
    seek(b, first)
    before, at_before = canvas_shot(b), ball_on_screen(b, first)
    seek(b, second)
    after, at_after = canvas_shot(b), ball_on_screen(b, second)
    from PIL import Image

    Image.fromarray(after.astype(np.uint8)).save(shots / "replay-3d-player.png")
    diff = np.abs(after - before).sum(axis=2)
    # where the ball was and where it is now, the picture changed ...
    assert patch(diff, at_before).mean() > 60 and patch(diff, at_after).mean() > 60
    # ... and there the ball is drawn: a light grey (lit white), not the floor's green
    for img, at in ((before, at_before), (after, at_after)):
        centre = patch(img, at, 1).reshape(-1, 3).mean(axis=0)
        assert centre.min() > 110 and centre.max() - centre.min() < 25, centre
    # the stadium itself does not move: the picture's top band (the far wall and above) is unchanged
    assert np.mean(diff[:20] > 0) < 0.01


def test_scrubbing_a_five_minute_replay_to_its_end(page):
    b, payload = page
    assert payload["steps"] * payload["dt"] >= 300
    seek(b, 0)
    timings = []
    for target in (payload["steps"] - 1, 0) * 3:
        result = b.call("Runtime.evaluate", awaitPromise=True, returnByValue=True, expression=f"""(async () => {{
          const s = document.getElementById('scrub'), t0 = performance.now();
          s.value = {target}; s.dispatchEvent(new Event('input'));
          await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
          return [performance.now() - t0, player.frame()]; }})()""")["result"]["value"]
        assert result[1] == target
        timings.append(result[0] / 1000)
    b.evaluate(f"player.seek({payload['steps'] - 1}, false)")
    text = b.evaluate("document.getElementById('stepinfo').textContent")
    assert text == f"step {payload['steps'] - 1} / {payload['steps'] - 1}"
    # From the input event until the browser has drawn the new frame twice (two animation frames).
    # Software WebGL on a loaded 2-core host varies a lot between tries: the median is the figure.
    print(f"scrub a 5-minute 3v3 replay to its end and back, {len(timings)} times: median "
          f"{np.median(timings) * 1000:.0f} ms, at most {max(timings) * 1000:.0f} ms")
    assert max(timings) < SCRUB_HANG_SECONDS


def test_cameras_follow_the_ball_and_ride_behind_a_car(page):
    b, payload = page
    size = b.evaluate("[document.getElementById('field').clientWidth, document.getElementById('field').clientHeight]")
    frame = clear_moments(b, payload["steps"])[2]
    seek(b, frame, "ball")
    x, y = ball_on_screen(b, frame)
    assert abs(x - size[0] / 2) < 2 and abs(y - size[1] / 2) < 2  # the orbit's centre is the ball
    seek(b, frame + 40, "ball")
    x, y = ball_on_screen(b, frame + 40)
    assert abs(x - size[0] / 2) < 2 and abs(y - size[1] / 2) < 2  # and stays so as it moves
    seek(b, frame, "0")
    car = b.evaluate(f"(() => {{ const c = player.car(0, {frame}); return player.view.project([c.x, c.y, c.z]); }})()")
    assert abs(car[0] - size[0] / 2) < size[0] * 0.05 and size[1] / 2 < car[1] < size[1]  # ahead, low, centred
    # dragging turns the stadium camera: the same point is drawn elsewhere
    seek(b, frame, "stadium")
    corner = "player.view.project([4096, 5120, 0])"
    start = b.evaluate(corner)
    rect = b.evaluate("(() => { const r = document.getElementById('field').getBoundingClientRect(); return [r.x, r.y]; })()")
    x0, y0 = rect[0] + size[0] / 2, rect[1] + size[1] / 2
    b.call("Input.dispatchMouseEvent", type="mousePressed", x=x0, y=y0, button="left", clickCount=1)
    b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x0 + 200, y=y0 + 40, button="left")
    b.call("Input.dispatchMouseEvent", type="mouseReleased", x=x0 + 200, y=y0 + 40, button="left", clickCount=1)
    moved = b.evaluate(corner)
    assert np.hypot(moved[0] - start[0], moved[1] - start[1]) > 50


def test_a_pad_is_lit_while_up_and_dark_while_down(page):
    b, payload = page
    seek(b, 0)
    checked = 0
    for pad, downs in enumerate(payload["padDowns"]):
        for start, end in downs:
            down, up = (start + end) // 2, end + 2
            if up >= payload["steps"] or b.evaluate(f"player.padUp({pad}, {down})") or not b.evaluate(
                    f"player.padUp({pad}, {up})"):
                continue
            centre = b.evaluate(f"player.view.project([{payload_pad(pad)}, 3])")
            near = b.evaluate(f"""(() => {{ for (const f of [{down}, {up}]) {{
                const bl = player.ball(f), q = player.view.project([bl.x, bl.y, bl.z]);
                if (q && Math.hypot(q[0] - {centre[0]}, q[1] - {centre[1]}) < 60) return true;
                for (let i = 0; i < player.cars; i++) {{ const c = player.car(i, f), p = player.view.project([c.x, c.y, c.z]);
                  if (p && Math.hypot(p[0] - {centre[0]}, p[1] - {centre[1]}) < 60) return true; }} }}
                return false; }})()""")
            if near:
                continue
            seek(b, down)
            dark = patch(canvas_shot(b), centre, 1).reshape(-1, 3).mean(axis=0)
            seek(b, up)
            lit = patch(canvas_shot(b), centre, 1).reshape(-1, 3).mean(axis=0)
            assert lit[0] > 180 and lit[1] > 140 and lit[2] < 120, lit  # yellow
            assert dark.max() - dark.min() < 25 and dark.max() < lit.max() / 2, (dark, lit)  # dark grey
            checked += 1
            break
        if checked >= 2:
            break
    assert checked >= 2


def payload_pad(pad: int) -> str:
    from league.game_values import BOOST_PADS

    x, y, _ = BOOST_PADS[pad]
    return f"{x}, {y}"


def test_the_timeline_marks_the_goals_with_the_score(page):
    b, payload = page
    marks = b.evaluate("Array.from(document.querySelectorAll('#timeline .tickscore')).map(s => s.textContent)")
    assert marks == [g["score"] for g in payload["goals"]] and marks[-1] == "2-2"
    b.evaluate("document.querySelectorAll('#timeline .tick')[1].click()")
    frame = b.evaluate("player.frame()")
    lead = round(payload["goalLead"] / payload["dt"])
    assert abs(frame - (payload["goals"][1]["step"] - lead)) <= 1
    assert "Pause" in b.evaluate("document.getElementById('play').textContent")  # jumping to a goal plays it
    b.evaluate("document.getElementById('play').click()")


def test_without_webgl_the_3d_view_says_so_and_the_player_still_runs(tmp_path):
    """Chromium with its 3D APIs turned off, as some locked-down browsers are: one sentence in the
    view's place, and the rest of the player (score, clock, cars, lists) drawn as usual."""
    import subprocess

    path = tmp_path / "player.html"
    path.write_text(player_html(player_payload(synthetic_replay(3, "blue-bot", "orange-bot", 1, 1, 0, 20.0)),
                                view="3d"), encoding="utf-8")
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-3d-apis",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    assert "cannot draw WebGL, so the 3D view is off; choose the 2D view" in dom
    assert 'id="viewnote" style="display: flex;"' in dom
    assert "blue-bot 0" in dom and "step 0 / " in dom and "B1" in dom


PLAYER = "document.querySelector('iframe[title^=\"Replay of game\"]')"


def test_the_replays_page_opens_in_3d_and_switches_to_2d(served, browser, shots):
    base, league = served
    browser.goto(f"{base}/?page=replays&game={league.replay_game}")
    view = f"(() => {{ const f = {PLAYER}; return f && f.contentDocument && f.contentDocument.body ? " \
           "f.contentDocument.body.dataset.view : ''; })()"
    wait_until(lambda: browser.evaluate(view) == "3d", RENDER_TIMEOUT, "the 3D player")
    wait_until(lambda: browser.evaluate(f"!!{PLAYER}.contentWindow.player"), RENDER_TIMEOUT, "the player to start")
    assert browser.evaluate(f"{PLAYER}.contentDocument.getElementById('viewnote').style.display") != "flex"
    # a moment with both cars near the ball, the camera following the ball, for the README
    browser.evaluate(f"(() => {{ const p = {PLAYER}.contentWindow.player; p.view.setCamera('ball'); "
                     "p.seek(170, false); })()")
    browser.evaluate(f"{PLAYER}.scrollIntoView({{block: 'center'}})")
    time.sleep(0.5)
    rect = browser.evaluate(f"(() => {{ const r = {PLAYER}.getBoundingClientRect(); "
                            "return [r.x, r.y, r.width, r.height]; })()")
    data = browser.call("Page.captureScreenshot", format="png",
                        clip={"x": rect[0], "y": rect[1], "width": rect[2], "height": rect[3], "scale": 1})["data"]
    (shots / "replay-3d.png").write_bytes(base64.b64decode(data))
    # the View choice: 2D, then back to 3D
    browser.evaluate("Array.from(document.querySelectorAll('[data-testid=stRadio] label'))"
                     ".find(l => l.textContent.startsWith('2D')).click()")
    wait_until(lambda: browser.evaluate(view) == "2d", RENDER_TIMEOUT, "the 2D player")
    assert "view=2d" in browser.evaluate("window.location.search")
    browser.evaluate("Array.from(document.querySelectorAll('[data-testid=stRadio] label'))"
                     ".find(l => l.textContent.startsWith('3D')).click()")
    wait_until(lambda: browser.evaluate(view) == "3d", RENDER_TIMEOUT, "the 3D player again")
    # a link with view=2d opens the top-down view
    browser.goto(f"{base}/?page=replays&game={league.replay_game}&view=2d")
    wait_until(lambda: browser.evaluate(view) == "2d", RENDER_TIMEOUT, "the 2D player from the link")
