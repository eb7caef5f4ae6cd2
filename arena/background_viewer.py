"""Training's look at a snapshot: one game played at full speed, then sent to a running viewer in the
background at real time, so training never waits on the viewer.

    send_game_in_background("rocketsimvis", spec, policies, "ppo-1v1-v13", "necto", seed=7)

Nothing happens, at the cost of one port check, when the viewer is not running; one game is sent at a time.
"""

from __future__ import annotations

import threading

from agents.policy import Policy
from arena.engine.game import GameSpec
from arena.pacing import send_paced
from arena.viewers import Viewer, open_viewer
from arena.viewers.frame import Frame
from arena.watch import watch_game
from league.errors import LeagueError

VIEWER_THREAD = "rl-league-viewer"  # the background sender of `send_game_in_background`


class _Collect:
    """A viewer that keeps the frames it is sent."""

    name = "frames"

    def __init__(self) -> None:
        self.frames: list[Frame] = []

    def send(self, frame: Frame) -> None:
        self.frames.append(frame)

    def close(self) -> None:
        pass


def _stream(viewer: Viewer, frames: list[Frame], seconds_per_step: float) -> None:
    try:
        send_paced(viewer, frames, seconds_per_step)
    except (LeagueError, OSError):  # the viewer was closed: the game was only for watching
        pass
    finally:
        viewer.close()


def send_game_in_background(viewer_name: str, spec: GameSpec, policies: dict[str, Policy], blue: str, orange: str,
                            seed: int, deterministic: bool = False) -> threading.Thread | None:
    """Training's look at a snapshot: when `viewer_name` is running, play one game now at full speed (on
    this thread: the policies may be the learner's own network, which must not be read while it trains)
    and send its frames to the viewer at real time from a daemon thread, which is returned. None, at the
    cost of one port check, when the viewer is not running or the previous game is still being sent."""
    if any(t.name == VIEWER_THREAD and t.is_alive() for t in threading.enumerate()):
        return None
    try:
        viewer = open_viewer(viewer_name, tick_skip=spec.tick_skip)
    except LeagueError:
        return None
    try:
        collect = _Collect()
        watch_game(spec, policies, blue, orange, seed, live_path=None, viewer=collect, speed=0,
                   deterministic=deterministic)
    except BaseException:
        viewer.close()
        raise
    thread = threading.Thread(target=_stream, args=(viewer, collect.frames, spec.step_seconds), name=VIEWER_THREAD,
                              daemon=True)
    thread.start()
    return thread
