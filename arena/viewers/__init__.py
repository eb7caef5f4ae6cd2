"""External viewers a game is sent to while it plays, or a replay while it is played back.

    viewer = open_viewer("rocketsimvis")       # one sentence (LeagueError) when it is not running
    for frame in replay_frames(replay): viewer.send(frame)
    viewer.close()

`frame` is one moment of a game in the replay file's layout (arena.viewers.frame); each viewer
module turns it into its own format: `rocketsimvis` (JSON over UDP, as rlgym-tools' renderer
sends it) and `rlviser` (through the optional package rlviser-py). A viewer has `name`,
`send(frame)` and `close()`; nothing here imports the league's stores or the game engine.
"""

from __future__ import annotations

from typing import Protocol

from arena.viewers.frame import Frame
from league.errors import LeagueError, quoted

VIEWERS = ("rocketsimvis", "rlviser")
MAX_PORT = 65535


class Viewer(Protocol):
    name: str

    def send(self, frame: Frame) -> None: ...

    def close(self) -> None: ...


def check_viewer_name(name: str) -> str:
    if name not in VIEWERS:
        raise LeagueError(f"Unknown viewer {name!r}; expected {' or '.join(VIEWERS)}.")
    return name


def check_viewer_port(port: int | str | None) -> int | None:
    """A viewer's UDP port from 1 to MAX_PORT, as a number; text (a command's --viewer-port) is read as a
    whole decimal number. Port 0 would let the system pick any port, nobody's viewer. None (not given) passes."""
    if port is None:
        return None
    value = port
    if isinstance(port, str):
        try:
            value = int(port.strip())
        except ValueError:  # not a whole number ("1e20", "nine"), or thousands of digits
            value = None
    if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PORT):
        raise LeagueError(f"--viewer-port must be a UDP port from 1 to {MAX_PORT}, not {quoted(str(port))}.")
    return value


def open_viewer(name: str, *, port: int | str | None = None, tick_skip: int = 8) -> Viewer:
    """The viewer `name` ("rocketsimvis" or "rlviser"), checked to be running. `port`: RocketSimVis'
    UDP port (default 9273; checked, check_viewer_port); rlviser-py's ports are fixed. `tick_skip`: physics
    ticks per frame."""
    check_viewer_name(name)
    if name == "rocketsimvis":
        from arena.viewers.rocketsimvis import DEFAULT_PORT, RocketSimVis

        return RocketSimVis(port=DEFAULT_PORT if port is None else check_viewer_port(port))
    if port is not None:
        raise LeagueError("--viewer-port is for RocketSimVis; rlviser-py's ports are fixed.")
    from arena.viewers.rlviser import Rlviser

    return Rlviser(tick_skip=tick_skip)
