"""The replay player's shell in headless Chromium (issue 60, item 5): the goal marks sit under the
scrubber at their moments, the goal and touch lists read the scoreboard's clock, and the 2D view
shows a taken pad dark until it is back.

Each player is a page opened from a file (no Streamlit server), in both views and at two widths.
"""

from __future__ import annotations

import json

import pytest

from dashboard.replay_view import player_html, player_payload
from dashboard_fixture import synthetic_replay
from test_dashboard_e2e import CHROMIUM, RENDER_TIMEOUT, browser, wait_until  # noqa: F401  (browser: a fixture)
from test_replay3d_browser import canvas_shot

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.slow,  # a headless Chromium
]
# Where a range input draws its thumb at fraction p: from half a thumb in to half a thumb short of its
# end. Chromium's default thumb is 16 px wide or less, so a mark is within this of the box's own fraction.
THUMB_SLACK_PX = 10


@pytest.fixture(scope="module")
def replay():
    return synthetic_replay(11, "blue-team", "orange-team", 2, 2, 2, 120.0)


def open_player(b, folder, replay, view: str, width: int = 1600):
    path = folder / f"player-{view}.html"
    path.write_text(player_html(player_payload(replay), view=view), encoding="utf-8")
    b.call("Emulation.setDeviceMetricsOverride", width=width, height=1100, deviceScaleFactor=1, mobile=False)
    b.goto(path.as_uri())
    wait_until(lambda: b.evaluate("!!(window.player && document.getElementById('field').width)"),
               RENDER_TIMEOUT, f"the {view} player to start")


@pytest.fixture()
def page(browser, tmp_path):
    yield browser, tmp_path
    browser.call("Emulation.clearDeviceMetricsOverride")


@pytest.mark.parametrize("view, width", [("3d", 1600), ("2d", 1600), ("3d", 900)])
def test_goal_marks_sit_under_their_moments_on_the_scrubber(page, replay, view, width):
    b, folder = page
    open_player(b, folder, replay, view, width)
    payload = player_payload(replay)
    boxes = b.evaluate("""(() => {
      const box = (el) => { const r = el.getBoundingClientRect(); return [r.x, r.width]; };
      return { scrub: box(document.getElementById('scrub')),
               ticks: Array.from(document.querySelectorAll('#timeline .tick')).map(box),
               scores: Array.from(document.querySelectorAll('#timeline .tickscore')).map(box) }; })()""")
    (left, span), last = boxes["scrub"], payload["steps"] - 1
    assert len(boxes["ticks"]) == len(boxes["scores"]) == len(payload["goals"]) == 4
    for goal, tick, score in zip(payload["goals"], boxes["ticks"], boxes["scores"]):
        at = left + span * goal["step"] / last  # the goal's moment on the scrubber
        for x, w in (tick, score):
            centre = x + w / 2
            assert left <= centre <= left + span, (goal["score"], centre, boxes["scrub"])
            assert abs(centre - at) <= THUMB_SLACK_PX, (goal["score"], centre, at, boxes["scrub"])


@pytest.mark.parametrize("view", ["3d", "2d"])
def test_goal_and_touch_lists_read_the_scoreboards_clock(page, replay, view):
    b, folder = page
    open_player(b, folder, replay, view)
    payload = player_payload(replay)
    for list_id, events in (("goals", payload["goals"]), ("touches", payload["touches"][:5])):
        rows = b.evaluate(f"Array.from(document.querySelectorAll('#{list_id} div')).map(d => d.textContent)")
        for event, row in zip(events, rows):
            b.evaluate(f"player.seek({event['step']}, false)")
            clock = b.evaluate("document.getElementById('clock').textContent")
            assert row.split(" ")[0] == clock, (list_id, row, clock)
    # the scoreboard counts down from the game's length, as in Rocket League
    b.evaluate("player.seek(0, false)")
    assert b.evaluate("document.getElementById('clock').textContent") == "2:00"


def test_the_2d_view_shows_a_taken_pad_dark_until_it_is_back(page, replay):
    b, folder = page
    open_player(b, folder, replay, "2d")
    payload = player_payload(replay)
    from league.game_values import BOOST_PADS

    checked = 0
    for pad, downs in enumerate(payload["padDowns"]):
        x, y, _ = BOOST_PADS[pad]
        for start, end in downs:
            down, up = (start + end) // 2, end + 2
            if up >= payload["steps"]:
                continue
            # nothing drawn over the pad at either moment: no car (with its boost ring) nor the ball's trail
            clear = b.evaluate(f"""(() => {{ for (const f of [{down}, {up}]) {{
                for (let k = Math.max(0, f - Math.round(1.5 / D.dt)); k <= f; k++) {{
                  const bl = player.ball(k); if (Math.hypot(bl.x - {x}, bl.y - {y}) < 400) return false; }}
                for (let i = 0; i < player.cars; i++) {{ const c = player.car(i, f);
                  if (Math.hypot(c.x - {x}, c.y - {y}) < 600) return false; }} }}
                return true; }})()""")
            if not clear:
                continue
            centre = b.evaluate(f"makeView(G, document.getElementById('field').clientWidth).px({x}, {y})")
            px, py = int(round(centre[0])), int(round(centre[1]))
            b.evaluate(f"player.seek({down}, false)")
            dark = canvas_shot(b)[py - 1:py + 2, px - 1:px + 2].reshape(-1, 3).mean(axis=0)
            b.evaluate(f"player.seek({up}, false)")
            lit = canvas_shot(b)[py - 1:py + 2, px - 1:px + 2].reshape(-1, 3).mean(axis=0)
            assert lit[0] > 140 and lit[0] - lit[2] > 60, (pad, lit)  # yellow
            assert dark.max() - dark.min() < 30 and dark.max() < lit.max() * 0.6, (pad, dark, lit)  # dark grey
            checked += 1
            break
        if checked >= 2:
            break
    assert checked >= 2, json.dumps(payload["padDowns"])[:300]
