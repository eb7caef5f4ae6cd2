"""What the Replays page shows of one replay: the browser player, its events and a ball timeline.

Pure functions over `arena.replay.Replay` (no Streamlit), so they are tested directly. The
player is one self-contained HTML page (a view + controls) embedded in an iframe: positions go
to the browser once, as base64 int16 arrays, and the browser animates them on its own, so
play, pause, speed and scrubbing never wait on the server. The page is one shell (score, clock,
controls, a timeline with the goals, the cars' boost, goal and touch lists) around one of two
views of the field: 3D (WebGL, dashboard/player3d.js; no library, so it works offline) or the
2D top-down canvas (dashboard/field.py), which stays for a quick look.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from arena.replay import Replay
from league.game_values import TICKS_PER_SECOND
from dashboard.boost_pads import pad_downtimes
from dashboard.field import FIELD_JS, TEAM_NAMES, geometry

GOAL_LEAD_SECONDS = 3.0  # jumping to a goal starts this long before it, to see the build-up
# Per car and step: position (uu), the forward and up unit vectors (times UNIT_SCALE), boost,
# flags (1 on ground, 2 demolished) and speed (uu/s).
CAR_FIELDS = ("x", "y", "z", "fx", "fy", "fz", "ux", "uy", "uz", "boost", "flags", "speed")
BALL_FIELDS = ("x", "y", "z", "speed")
UNIT_SCALE = 10000
VIEWS = ("3d", "2d")
# The frame budget: what the player embeds (the whole replay goes to the browser at once) is at most
# MAX_FRAMES_PER_SECOND frames a second of game clock (what a screen shows; a league game records
# 15) and MAX_FRAMES frames in all (10 minutes at 15 a second, about 1.8 MB of page in 3v3), the
# steps taken evenly; events land on the frame that holds their step.
MAX_FRAMES_PER_SECOND = 60
MAX_FRAMES = 9_000
PLAYER3D_JS = (Path(__file__).parent / "player3d.js").read_text(encoding="utf-8")


def format_clock(seconds: float) -> str:
    """m:ss for a non-negative number of seconds."""
    seconds = max(0.0, float(seconds))
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def game_clock(seconds: float, game_seconds: float | None) -> str:
    """The clock `seconds` into a game as its scoreboard shows it (the player's `gameClock`): counting down
    from the game's length as Rocket League's does, "+m:ss OT" past it; counting up if the length is unknown."""
    if not game_seconds:
        return format_clock(seconds)
    left = game_seconds - seconds
    return format_clock(left) if left >= 0 else f"+{format_clock(-left)} OT"


def car_labels(replay: Replay) -> list[str]:
    """B1, B2, ... for blue cars and O1, O2, ... for orange, in replay car order."""
    counts = [0, 0]
    labels = []
    for team in replay.teams:
        counts[team] += 1
        labels.append(f"{'BO'[team]}{counts[team]}")
    return labels


def _b64_int16(values: np.ndarray) -> str:
    clipped = np.clip(np.rint(values), -32767, 32767).astype("<i2")
    return base64.b64encode(np.ascontiguousarray(clipped).tobytes()).decode("ascii")


def events_table(replay: Replay) -> pd.DataFrame:
    """Goals, kickoffs and touches in game order: step, time (the game clock), kind, team, car, score after."""
    labels = car_labels(replay)
    dt, length = replay.seconds_per_step(), replay.meta.get("game_seconds")
    rows = []
    for kind in ("kickoff", "goal", "touch"):
        for e in (replay.goals() if kind == "goal" else replay.events_of(kind)):
            car = e.get("scorer", e.get("car", -1))
            team = e.get("team", -1)
            if kind != "goal" and 0 <= car < len(replay.teams):
                team = replay.teams[car]
            rows.append({"step": e["step"], "time": game_clock(e["step"] * dt, length), "kind": kind,
                         "team": TEAM_NAMES[team] if team in (0, 1) else "",
                         "car": labels[car] if 0 <= car < len(labels) else ""})
    table = pd.DataFrame(rows, columns=["step", "time", "kind", "team", "car"])
    table = table.sort_values(["step", "kind"], kind="stable").reset_index(drop=True)
    blue = orange = 0
    scores = []
    for kind, team in zip(table["kind"], table["team"]):
        if kind == "goal":
            blue += team == "blue"
            orange += team == "orange"
        scores.append(f"{blue}-{orange}")
    table["score"] = scores
    return table


def car_axes(angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and up unit vectors [..., 3] of cars turned by (pitch, yaw, roll) [..., 3]: RLGym's
    `euler_to_rotation`, whose inverse (arena.tournament_play) wrote the angles into the replay."""
    cp, cy, cr = (np.cos(angles[..., k].astype(np.float64)) for k in range(3))
    sp, sy, sr = (np.sin(angles[..., k].astype(np.float64)) for k in range(3))
    forward = np.stack([cp * cy, cp * sy, sp], axis=-1)
    up = np.stack([-cr * cy * sp - sr * sy, -cr * sy * sp + sr * cy, cp * cr], axis=-1)
    return forward, up


def frame_stride(replay: Replay, max_frames: int = MAX_FRAMES) -> int:
    """Replay steps per embedded frame, so the player holds at most MAX_FRAMES_PER_SECOND frames a
    second of game clock and `max_frames` in all."""
    per_screen = max(1, TICKS_PER_SECOND // (MAX_FRAMES_PER_SECOND * int(replay.meta["tick_skip"])))
    return max(per_screen, -(-replay.steps // max_frames))


def player_payload(replay: Replay, max_frames: int = MAX_FRAMES) -> dict:
    """The replay as the browser player reads it (compact: int16 arrays in base64), for either view:
    every `frame_stride` step (each event on the frame that holds its step)."""
    stride = frame_stride(replay, max_frames)
    frames = np.arange(0, replay.steps, stride)
    last = len(frames) - 1

    def frame_of(step: int) -> int:  # an event of the final step comes after its last frame
        return min(step // stride, last)

    ball_state = replay.ball[frames]
    ball = np.column_stack([ball_state[:, 0:3], np.linalg.norm(ball_state[:, 3:6], axis=1)])
    cars = replay.cars[frames]
    flags = replay.on_ground[frames].astype(np.int16) + 2 * replay.demolished[frames].astype(np.int16)
    car_speed = np.linalg.norm(cars[:, :, 6:9], axis=2)
    forward, up = car_axes(cars[:, :, 3:6])
    car_block = np.concatenate([cars[:, :, 0:3], forward * UNIT_SCALE, up * UNIT_SCALE,
                                np.stack([replay.boost[frames], flags, car_speed], axis=2)], axis=2)
    meta = replay.meta
    labels = car_labels(replay)
    names = [meta.get(TEAM_NAMES[t], TEAM_NAMES[t]) for t in replay.teams]
    goals, score = [], [0, 0]
    for g in replay.goals():
        score[g["team"]] += 1
        goals.append(dict(g, step=frame_of(g["step"]), label=labels[g["scorer"]] if 0 <= g["scorer"] < len(labels)
                          else "", score=f"{score[0]}-{score[1]}"))
    touches = [dict(t, step=frame_of(t["step"]), label=labels[t["car"]] if 0 <= t["car"] < len(labels) else "",
                    team=replay.teams[t["car"]] if 0 <= t["car"] < len(labels) else t["team"])
               for t in replay.events_of("touch")]
    # A pad down over steps [a, b) is down in the frames whose step falls there: [ceil(a/stride), ceil(b/stride)).
    pad_downs = [[(-(-a // stride), -(-b // stride)) for a, b in downs if -(-a // stride) < -(-b // stride)]
                 for downs in pad_downtimes(replay)]
    return {
        "steps": len(frames),
        "stride": stride,
        "replaySteps": replay.steps,
        "cars": len(replay.teams),
        "dt": replay.seconds_per_step() * stride,
        "teams": replay.teams,
        "labels": labels,
        "names": names,
        "blue": meta.get("blue", "blue"),
        "orange": meta.get("orange", "orange"),
        "gameSeconds": meta.get("game_seconds"),
        "ball": _b64_int16(ball),
        "carData": _b64_int16(car_block),
        "carFields": len(CAR_FIELDS),
        "unitScale": UNIT_SCALE,
        "padDowns": pad_downs,
        "goals": goals,
        "touches": touches,
        "goalLead": GOAL_LEAD_SECONDS,
    }


def _script_json(value) -> str:
    """JSON safe to inline in a <script> element: no `<` at all (only strings can hold one, so its
    escape means the same), so no `</script`, `<!--` or `<script` in a replay's names can change how
    the browser reads the element; non-ASCII (U+2028 among it) escaped by json.dumps."""
    return json.dumps(value).replace("<", "\\u003c")


def player_html(payload: dict, start_step: int = 0, autoplay: bool = False, view: str = "3d") -> str:
    """A self-contained HTML page that plays the replay in `view` ("3d" or "2d"): field, controls,
    events; from the frame that holds the replay's step `start_step`."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
    start = int(min(max(start_step // payload["stride"], 0), max(payload["steps"] - 1, 0)))
    slots = {
        "VIEW_CONTROLS": _CAMERA_CONTROL if view == "3d" else "",
        "GEOMETRY": _script_json(geometry()),
        "PAYLOAD": _script_json(payload),
        "START": str(start),
        "AUTOPLAY": "true" if autoplay else "false",
        "VIEW_NAME": view,
        "VIEW_JS": PLAYER3D_JS if view == "3d" else FIELD_JS,
    }
    # One pass, so nothing substituted (the replay's names among it) is read again as a slot.
    return re.sub(r"/\*([A-Z_]+)\*/", lambda m: slots.get(m.group(1), m.group(0)), _PLAYER_TEMPLATE)


def ball_timeline(replay: Replay, max_points: int = 1500) -> pd.DataFrame:
    """Ball speed and position over the game, thinned to at most `max_points` rows."""
    stride = max(1, int(np.ceil(replay.steps / max_points)))
    idx = np.arange(0, replay.steps, stride)
    ball = replay.ball[idx]
    return pd.DataFrame({
        "seconds": idx * replay.seconds_per_step(),
        "speed": np.linalg.norm(ball[:, 3:6], axis=1),
        "x": ball[:, 0], "y": ball[:, 1], "z": ball[:, 2],
    })


_CAMERA_CONTROL = '<select id="camera" title="Camera: the whole stadium (drag to turn, wheel to zoom), the ball, or behind a car"></select>'

_PLAYER_TEMPLATE = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8">
<style>
  body { margin: 0; font-family: "Source Sans Pro", sans-serif; background: #0e1117; color: #eee; }
  #wrap { display: flex; gap: 12px; }
  #left { flex: 1 1 auto; min-width: 0; }
  #right { flex: 0 0 250px; font-size: 13px; }
  #hud { display: flex; justify-content: space-between; align-items: baseline; padding: 4px 2px; }
  #score { font-size: 22px; font-weight: 700; }
  .blue { color: #5b9dff; } .orange { color: #ff9d45; }
  #clock { font-size: 20px; font-variant-numeric: tabular-nums; }
  #stage { position: relative; overflow: hidden; border-radius: 6px; }
  canvas { display: block; width: 100%; border-radius: 6px; }
  #controls { display: flex; gap: 8px; align-items: center; padding: 6px 0; }
  #controls button, #controls select { background: #262730; color: #eee; border: 1px solid #555;
    border-radius: 4px; padding: 3px 9px; font-size: 14px; cursor: pointer; }
  #stepinfo { margin-left: auto; }
  /* The scrubber has a row of its own, the goal marks right under it and exactly as wide: a mark at
     fraction p sits where the thumb's centre does, half a thumb in from either end (THUMB below). */
  #scrub { display: block; width: 100%; margin: 0; }
  #timeline { position: relative; height: 24px; }
  .tick { position: absolute; top: 0; width: 3px; height: 10px; border-radius: 1px; cursor: pointer;
    transform: translateX(-50%); }
  .tickscore { position: absolute; top: 10px; font-size: 11px; transform: translateX(-50%); white-space: nowrap;
    cursor: pointer; }
  h4 { margin: 8px 0 4px; font-size: 14px; }
  .list { max-height: 150px; overflow-y: auto; border: 1px solid #333; border-radius: 4px; }
  .list div { padding: 2px 6px; cursor: pointer; white-space: nowrap; }
  .list div:hover { background: #333; }
  .carrow { display: flex; align-items: center; gap: 6px; margin: 3px 0; }
  .bar { flex: 1; min-width: 60px; height: 8px; background: #333; border-radius: 3px; overflow: hidden; }
  .bar > div { height: 100%; background: #ffd000; }
  .muted { color: #999; }
  .carlabel { position: absolute; transform: translate(-50%, -100%); font-size: 11px; line-height: 12px;
    text-align: center; pointer-events: none; text-shadow: 0 0 3px #000, 0 0 2px #000; white-space: nowrap; }
  .carlabel .bar { width: 34px; min-width: 34px; height: 4px; margin: 1px auto 0; }
  #viewnote { position: absolute; inset: 0; display: none; align-items: center; justify-content: center;
    padding: 24px; text-align: center; color: #ccc; background: #1b2a1f; }
</style></head>
<body data-view="/*VIEW_NAME*/">
<div id="wrap">
  <div id="left">
    <div id="hud">
      <span id="score"></span>
      <span id="clock"></span>
    </div>
    <div id="stage"><canvas id="field"></canvas><div id="viewnote"></div></div>
    <div id="controls">
      <button id="play" title="Play / pause (space)">&#9654; Play</button>
      <button id="back" title="One step back">&#9664;</button>
      <button id="fwd" title="One step forward">&#9654;</button>
      <select id="speed" title="Playback speed">
        <option value="0.25">0.25x</option><option value="0.5">0.5x</option><option value="1" selected>1x</option>
        <option value="2">2x</option><option value="4">4x</option><option value="8">8x</option>
      </select>
      /*VIEW_CONTROLS*/
      <span id="stepinfo" class="muted"></span>
    </div>
    <input id="scrub" type="range" min="0" value="0" step="1" title="Scrub through the game">
    <div id="timeline" title="Goals, with the score after each"></div>
  </div>
  <div id="right">
    <h4>Cars</h4><div id="cars"></div>
    <h4>Goals</h4><div id="goals" class="list"></div>
    <h4>Touches</h4><div id="touches" class="list"></div>
  </div>
</div>
<script>
const G = /*GEOMETRY*/;
const D = /*PAYLOAD*/;
/*VIEW_JS*/
function decode(b64) {
  const bin = atob(b64); const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Int16Array(bytes.buffer);
}
const BALL = decode(D.ball), CARS = decode(D.carData), NF = D.carFields, T = D.steps, C = D.cars, U = D.unitScale;
const canvas = document.getElementById("field");
const scrub = document.getElementById("scrub"), playBtn = document.getElementById("play");
const speedSel = document.getElementById("speed");
scrub.max = Math.max(T - 1, 0);
let frame = /*START*/, pos = frame, playing = false, last = null;

function clock(sec) { sec = Math.max(0, sec); const m = Math.floor(sec / 60), s = Math.floor(sec % 60);
  return m + ":" + String(s).padStart(2, "0"); }
function stepTime(step) { return step * D.dt; }
// The game clock at frame f, as the scoreboard shows it: counting down from the game's length (then
// "+m:ss OT"), as Rocket League's does; a replay that does not give its length counts up.
function gameClock(f) {
  if (!D.gameSeconds) return clock(stepTime(f));
  const left = D.gameSeconds - stepTime(f);
  return left >= 0 ? clock(left) : "+" + clock(-left) + " OT";
}
function ball(f) { const o = f * 4; return { x: BALL[o], y: BALL[o + 1], z: BALL[o + 2], speed: BALL[o + 3] }; }
function car(i, f) {
  const o = (f * C + i) * NF;
  return { x: CARS[o], y: CARS[o + 1], z: CARS[o + 2],
           fwd: [CARS[o + 3] / U, CARS[o + 4] / U, CARS[o + 5] / U], up: [CARS[o + 6] / U, CARS[o + 7] / U, CARS[o + 8] / U],
           yaw: Math.atan2(CARS[o + 4], CARS[o + 3]), boost: CARS[o + 9],
           onGround: (CARS[o + 10] & 1) > 0, demolished: (CARS[o + 10] & 2) > 0, speed: CARS[o + 11],
           boosting: f > 0 && CARS[o + 9] < CARS[o + 9 - C * NF] && !(CARS[o + 10] & 2),
           team: D.teams[i], label: D.labels[i], name: D.names[i] };
}
// A pad is up at frame f unless f falls in one of its [from, to) down intervals.
function padUp(p, f) {
  const downs = D.padDowns[p];
  let lo = 0, hi = downs.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (downs[mid][1] <= f) lo = mid + 1; else hi = mid; }
  return !(lo < downs.length && downs[lo][0] <= f);
}
function scoreAt(f) { let b = 0, o = 0; for (const g of D.goals) if (g.step <= f) { if (g.team === 0) b++; else o++; } return [b, o]; }
const env = { G: G, D: D, ball: ball, car: car, padUp: padUp, scoreAt: scoreAt, redraw: () => view.draw(frame) };
const view = createView(canvas, env);

function layout() {
  view.layout(Math.max(320, document.getElementById("left").clientWidth));
  buildTimeline();
  draw();
}

function draw() {
  const f = frame;
  view.draw(f);
  const [b, o] = scoreAt(f);
  document.getElementById("score").innerHTML =
    '<span class="blue">' + esc(D.blue) + " " + b + '</span> &ndash; <span class="orange">' + o + " " + esc(D.orange) + "</span>";
  document.getElementById("clock").textContent = D.gameSeconds ? gameClock(f) : clock(stepTime(f)) + " / " + clock(stepTime(T - 1));
  document.getElementById("stepinfo").textContent = "step " + f * D.stride + " / " + (D.replaySteps - 1);
  scrub.value = f;
  let rows = "";
  for (let i = 0; i < C; i++) {
    const c = car(i, f);
    const state = c.demolished ? "demolished" : (c.onGround ? "" : "air");
    rows += '<div class="carrow"><span class="' + ["blue", "orange"][c.team] + '" style="width:26px">' + c.label +
      '</span><div class="bar" title="boost ' + c.boost + '"><div style="width:' + c.boost + '%"></div></div>' +
      '<span class="muted" style="flex:0 0 auto;text-align:right;font-size:12px">' + c.speed + " uu/s " + state + "</span></div>";
  }
  const bl = ball(f);
  document.getElementById("cars").innerHTML = rows + '<div class="muted">ball ' + bl.speed + " uu/s, z " + bl.z + "</div>";
}

function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }

function seek(step, play) {
  frame = Math.min(Math.max(Math.round(step), 0), T - 1); pos = frame;
  setPlaying(play); draw();
}
function setPlaying(p) {
  playing = p && frame < T - 1; last = null;
  playBtn.innerHTML = playing ? "&#10074;&#10074; Pause" : "&#9654; Play";
  if (playing) requestAnimationFrame(tick);
}
function tick(now) {
  if (!playing) return;
  if (last !== null) {
    pos += (now - last) / 1000 * parseFloat(speedSel.value) / D.dt;
    const f = Math.min(Math.floor(pos), T - 1);
    if (f !== frame) { frame = f; draw(); }
    if (frame >= T - 1) { setPlaying(false); return; }
  }
  last = now;
  requestAnimationFrame(tick);
}

const THUMB = 16;  // px: Chromium's and Firefox's range thumb; its centre runs from THUMB/2 to width - THUMB/2
function buildTimeline() {
  const tl = document.getElementById("timeline"); tl.innerHTML = "";
  for (const g of D.goals) {
    const p = g.step / Math.max(T - 1, 1), jump = () => seek(g.step - D.goalLead / D.dt, true);
    const left = "calc(" + THUMB / 2 + "px + (100% - " + THUMB + "px) * " + p + ")";
    const d = document.createElement("div"); d.className = "tick";
    d.style.left = left; d.style.background = G.teamColors[g.team];
    d.title = ["Blue", "Orange"][g.team] + " goal at " + gameClock(g.step) + ": " + g.score; d.onclick = jump;
    const s = document.createElement("span"); s.className = "tickscore " + ["blue", "orange"][g.team];
    s.style.left = left; s.textContent = g.score; s.onclick = jump;
    tl.appendChild(d); tl.appendChild(s);
  }
}

function fillList(id, items, text, onPick) {
  const el = document.getElementById(id);
  if (!items.length) { el.innerHTML = '<div class="muted">none</div>'; return; }
  for (const it of items) {
    const d = document.createElement("div"); d.innerHTML = text(it); d.onclick = () => onPick(it); el.appendChild(d);
  }
}
fillList("goals", D.goals, (g) => gameClock(g.step) + ' <span class="' + ["blue", "orange"][g.team] + '">' +
  ["Blue", "Orange"][g.team] + "</span> goal" + (g.label ? " (" + g.label + ")" : "") + " " + g.score,
  (g) => seek(g.step - D.goalLead / D.dt, true));
fillList("touches", D.touches, (t) => gameClock(t.step) + ' <span class="' + ["blue", "orange"][t.team] + '">' +
  t.label + "</span> touch", (t) => seek(t.step, false));

playBtn.onclick = () => { if (frame >= T - 1) { frame = 0; pos = 0; } setPlaying(!playing); };
document.getElementById("back").onclick = () => seek(frame - 1, false);
document.getElementById("fwd").onclick = () => seek(frame + 1, false);
scrub.oninput = () => seek(parseInt(scrub.value), false);
document.addEventListener("keydown", (e) => {
  if (e.code === "Space" && e.target.tagName !== "SELECT") { e.preventDefault(); playBtn.click(); } });
window.addEventListener("resize", layout);
layout();
if (/*AUTOPLAY*/) setPlaying(true);
// For the page's owner (and the browser tests): where the player is, and a way to move it.
window.player = { seek: seek, frame: () => frame, cars: C, ball: ball, car: car, padUp: padUp, view: view };
</script>
</body></html>
"""
