"""What the Replays page shows of one replay: the browser player, its events and a ball timeline.

Pure functions over `arena.replay.Replay` (no Streamlit), so they are tested directly. The
player is one self-contained HTML page (a view + controls) embedded in an iframe: positions go
to the browser once, as base64 int16 arrays, and the browser animates them on its own, so
play, pause, speed and scrubbing never wait on the server. The page is one shell (score, clock,
controls, a timeline with the goals, the cars' boost, goal and touch lists) around one of two
views of the field: 3D (WebGL, dashboard/player3d.js; no library, so it works offline) or the
2D top-down canvas (dashboard/field2d.js), which stays for a quick look.

The browser's code lives in files of its own, read once at import: the page (dashboard/player.html,
markup and style with /*SLOT*/ marks), the shell's script (player.js) and each view's (player3d.js,
field2d.js). Python only fills the slots: the data, and which view's script and controls.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from arena.replay import Replay, car_rotations
from league.game_values import TICKS_PER_SECOND
from dashboard.boost_pads import pad_downtimes
from dashboard.field import TEAM_NAMES, geometry

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
_BROWSER = Path(__file__).parent
PLAYER_PAGE = (_BROWSER / "player.html").read_text(encoding="utf-8")
PLAYER_JS = (_BROWSER / "player.js").read_text(encoding="utf-8")
VIEW_JS = dict(zip(VIEWS, ((_BROWSER / name).read_text(encoding="utf-8") for name in ("player3d.js", "field2d.js"))))
# Each view's own controls, beside the player's (the 3D view's camera menu, filled by player3d.js).
VIEW_CONTROLS = dict(zip(VIEWS, ('<select id="camera" title="Camera: the whole stadium (drag to turn, wheel to zoom), '
                                 'the ball, or behind a car"></select>', "")))


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
    rot = car_rotations(cars[:, :, 3:6])
    forward, up = rot[..., 0], rot[..., 2]
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
        "VIEW_CONTROLS": VIEW_CONTROLS[view],
        "GEOMETRY": _script_json(geometry()),
        "PAYLOAD": _script_json(payload),
        "START": str(start),
        "AUTOPLAY": "true" if autoplay else "false",
        "VIEW_NAME": view,
        "VIEW_JS": VIEW_JS[view],
        "PLAYER_JS": PLAYER_JS,
    }
    # One pass, so nothing substituted (the replay's names among it) is read again as a slot.
    return re.sub(r"/\*([A-Z_]+)\*/", lambda m: slots.get(m.group(1), m.group(0)), PLAYER_PAGE)


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
