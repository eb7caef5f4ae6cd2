"""Frames sent to a viewer at the speed of the game's clock: the pacer, the one pacing loop, and a replay
played back through it.

    send_replay(read_replay(path), open_viewer("rocketsimvis"), speed=1.0)   # `league replay play`

A `Pacer` holds decision step t back until t steps of game clock, divided by `speed`, have passed since
the first; speed 0 never waits. `send_paced` is the loop that sends frames through one: a replay played
back (`send_replay`) and a game played ahead of its viewer (arena.background_viewer) both go through it,
and a game being played (arena.watch) asks its pacer to wait before each frame it plays.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from arena.replay import Replay
from arena.viewers import Viewer
from arena.viewers.frame import Frame, replay_frames
from league.errors import LeagueError

MAX_SPEED = 100.0


def check_speed(speed: float) -> float:
    """`speed` times real time: a finite number from 0 (as fast as the game plays) to MAX_SPEED."""
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and 0 <= speed <= MAX_SPEED):
        raise LeagueError(f"--speed must be a number from 0 (no waiting) to {MAX_SPEED:g} times real time, not {speed}.")
    return float(speed)


class Pacer:
    """Holds step t back until t * seconds_per_step / speed after the first step (speed 0: never waits)."""

    def __init__(self, seconds_per_step: float, speed: float):
        self.seconds_per_step, self.speed = seconds_per_step, check_speed(speed)
        self.start: float | None = None

    def wait(self, step: int) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = now - step * self.seconds_per_step / self.speed if self.speed else now
        if self.speed:
            delay = self.start + step * self.seconds_per_step / self.speed - now
            if delay > 0:
                time.sleep(delay)


def send_paced(viewer: Viewer, frames: Iterable[Frame], seconds_per_step: float, speed: float = 1.0) -> int:
    """Send `frames` to `viewer`, each held back to its step's moment at `speed` times real time; the frames sent."""
    pacer = Pacer(seconds_per_step, speed)
    sent = 0
    for frame in frames:
        pacer.wait(frame.step)
        viewer.send(frame)
        sent += 1
    return sent


def send_replay(replay: Replay, viewer: Viewer, speed: float = 1.0, start_step: int = 0) -> int:
    """Send `replay` from `start_step` to `viewer` at `speed` times real time; the frames sent."""
    return send_paced(viewer, replay_frames(replay, start_step), replay.seconds_per_step(), speed)
