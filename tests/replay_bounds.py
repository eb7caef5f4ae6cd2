"""A replay as large as arena/replay.py reads (issue 56, item 2), built for the tests of what reading one costs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from arena.replay import MAX_CARS, MAX_STEPS, MAX_TEAM_SIZE, REPLAY_FORMAT, REPLAY_VERSION


def write_bound_replay(path: Path, steps: int = MAX_STEPS) -> Path:
    """A valid replay as large as the reader takes: 3v3, tick skip 1, MAX_STEPS steps, the ball and the
    cars standing still (so every step-to-step difference is zero and the file deflates to ~75 KB)."""
    cars = MAX_CARS
    meta = {"format": REPLAY_FORMAT, "version": REPLAY_VERSION, "blue": "rule", "orange": "atba",
            "team_size": MAX_TEAM_SIZE, "car_teams": [0] * MAX_TEAM_SIZE + [1] * MAX_TEAM_SIZE, "seed": 1,
            "score": [0, 0], "length_seconds": steps / 120, "tick_skip": 1, "game_seconds": steps / 120}
    ball = np.zeros((2, steps, 9), np.uint8)
    ball[0, 0, 2] = 371 & 0xFF  # the ball at rest at z = 92.75 uu (371 quarter-units, as two byte planes)
    ball[1, 0, 2] = 371 >> 8
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8), "ball": ball,
              "cars": np.zeros((2, steps, cars, 12), np.uint8), "boost": np.zeros((steps, cars), np.uint8),
              "flags": np.ones((steps, cars), np.uint8), "events": np.zeros((0, 3), np.int32),
              "event_team": np.zeros(0, np.int8)}
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return path
