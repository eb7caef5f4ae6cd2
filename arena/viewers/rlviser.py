"""RLViser, through the optional package `rlviser-py` (`pip install 'rl-league[rlviser]'`).

rlviser-py sends RLViser its game state over UDP from 0.0.0.0:34254 to 127.0.0.1:45243 (both
fixed): `render(tick_count, tick_rate, game_mode, boost_pad_states, ball, cars)` with RocketSim
`BallState` / `CarState` objects, as RLGym's own `RLViserRenderer` hands them. Its first render binds
34254 (a Rust panic if taken) and starts `./rlviser`, a program in the process's working folder,
when no process named rlviser runs; it never learns whether anyone listens. So before rlviser-py is
touched we check that RLViser's port is bound (nothing is sent otherwise), that ours is free and that
a process named rlviser runs (a port held by some other program is refused: a downloaded bot folder
the user stands in may hold an `rlviser` of its own), and the first render is made from an empty
private folder, so that even an RLViser gone in between starts nothing. While playing we check once
a second that RLViser is still there.

rlviser-py 0.6.14 requires numpy 2, which rlgym 2.0.1 refuses; pip then installs 0.6.13, which
speaks RLViser 0.8's protocol (a packet-type byte, then the state's bytes): use an RLViser of that line.
"""

from __future__ import annotations

import functools
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from arena.replay import car_rotations
from arena.viewers.frame import Frame
from arena.viewers.ports import udp_port_taken
from league.errors import LeagueError
from league.game_values import BOOST_PADS, TICKS_PER_SECOND

RLVISER_PORT = 45243  # where RLViser listens (fixed in rlviser-py)
CLIENT_PORT = 34254  # where rlviser-py sends from (fixed)
RECHECK_SECONDS = 1.0
RLVISER_PROCESS_NAMES = ("rlviser", "rlviser.exe")  # what rlviser-py looks for before it starts ./rlviser


def load_rlviser_py():
    """The rlviser_py module, or one sentence saying how to install it."""
    try:
        import rlviser_py
    except ImportError:
        raise LeagueError("--viewer rlviser needs the optional package rlviser-py: pip install 'rl-league[rlviser]' "
                          "(or pip install rlviser-py).") from None
    return rlviser_py


def rlviser_running() -> bool:
    """Whether a process named rlviser runs (a zombie does not count): when none does, rlviser-py's first
    render starts `./rlviser` from the working folder."""
    import psutil

    return any(p.info["name"] in RLVISER_PROCESS_NAMES and p.info["status"] != psutil.STATUS_ZOMBIE
               for p in psutil.process_iter(["name", "status"]))


@contextmanager
def in_an_empty_folder() -> Iterator[None]:
    """The process's working folder, for the block, a new empty folder only this user can write (removed
    after): a program rlviser-py starts from the working folder cannot be there."""
    back = os.open(".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
    folder = tempfile.mkdtemp(prefix="rl-league-rlviser-")
    try:
        os.chdir(folder)
        yield
    finally:
        os.fchdir(back)
        os.close(back)
        os.rmdir(folder)


def ball_state(frame: Frame):
    """The ball as a RocketSim BallState (its orientation is not recorded: identity)."""
    import RocketSim as rsim

    b = rsim.BallState()
    b.pos, b.vel, b.ang_vel = (rsim.Vec(*map(float, frame.ball[k:k + 3])) for k in (0, 3, 6))
    return b


def car_states(frame: Frame) -> list:
    """Each car as rlviser-py takes it: (id from 1, team, RocketSim CarConfig, CarState)."""
    import RocketSim as rsim

    rot = car_rotations(frame.cars[:, 3:6])
    octane = rsim.CarConfig(rsim.CarConfig.OCTANE)
    cars = []
    for i, car in enumerate(frame.cars):
        s = rsim.CarState()
        s.pos, s.vel, s.ang_vel = (rsim.Vec(*map(float, car[k:k + 3])) for k in (0, 6, 9))
        # RLGym's matrix columns (forward, left, up) go in as RLGym's renderer hands them.
        s.rot_mat = rsim.RotMat(*np.asarray(rot[i].T, dtype=np.float64).ravel().tolist())
        s.boost = float(frame.boost[i])
        s.is_on_ground = bool(frame.on_ground[i])
        s.is_demoed = bool(frame.demolished[i])
        cars.append((i + 1, int(frame.teams[i]), octane, s))
    return cars


class Rlviser:
    """Sends frames to RLViser through rlviser-py; one sentence when RLViser is not running."""

    name = "RLViser"

    def __init__(self, tick_skip: int = 8):
        self.rlviser = load_rlviser_py()
        self._check_running()
        if udp_port_taken("0.0.0.0", CLIENT_PORT):
            raise LeagueError(f"UDP port {CLIENT_PORT}, which rlviser-py sends from, is taken (another program is "
                              "sending to RLViser): stop it, then run this command again.")
        if not rlviser_running():
            raise LeagueError(f"Something listens on 127.0.0.1:{RLVISER_PORT}, but no process named rlviser runs, and "
                              "rlviser-py would then start ./rlviser from the working folder, which the league never "
                              "does: start RLViser (named rlviser), then run this command again.")
        self.tick_rate = TICKS_PER_SECOND / tick_skip  # frames per second of game time
        self.rlviser.set_boost_pad_locations([tuple(map(float, p)) for p in BOOST_PADS])
        self.checked = time.monotonic()
        self.rendered = False

    def _check_running(self) -> None:
        if not udp_port_taken("127.0.0.1", RLVISER_PORT):
            raise LeagueError(f"RLViser is not running: nothing listens on 127.0.0.1:{RLVISER_PORT} (start RLViser, "
                              "then run this command again).")

    def send(self, frame: Frame) -> None:
        import RocketSim as rsim

        now = time.monotonic()
        if now - self.checked >= RECHECK_SECONDS:
            self.checked = now
            if not udp_port_taken("127.0.0.1", RLVISER_PORT):
                raise LeagueError("RLViser stopped listening.")
        pads = [] if frame.pads is None else [bool(p) for p in frame.pads]  # none drawn when not known
        render = functools.partial(self.rlviser.render, tick_count=frame.step, tick_rate=self.tick_rate,
                                   game_mode=rsim.GameMode.SOCCAR, boost_pad_states=pads, ball=ball_state(frame),
                                   cars=car_states(frame))
        if self.rendered:
            render()
            return
        with in_an_empty_folder():  # the render that may start ./rlviser
            render()
        self.rendered = True

    def close(self) -> None:
        pass
