"""RocketSimVis: one JSON game state per UDP datagram to 127.0.0.1:9273.

The message is what rlgym-tools' `RocketSimVisRenderer` sends (and RocketSimVis' networking-format.md
describes): `ball_phys` and each car's `phys` hold `pos`, `vel` and `ang_vel` (uu, uu/s, rad/s),
a car's also `forward` and `up` (unit vectors); each car has `team_num` (0 blue, 1 orange),
`boost_amount` (0..100, RocketSim's scale, as the renderer sends it), `on_ground` and `is_demoed`;
`boost_pad_states` (RLGym's pad order) when the pads are known. A replay does not record the ball's
orientation or the pads: RocketSimVis then spins the ball by its angular velocity itself and
draws no pads. Fields the league does not record (controls, flips) are left out, as the format allows.

A connected UDP socket reports the ICMP "port unreachable" of a port nobody listens on as
ConnectionRefusedError on a later send: that is how a viewer closed mid-game is noticed.
"""

from __future__ import annotations

import json
import socket

import numpy as np

from arena.replay import car_rotations
from arena.viewers.frame import Frame
from arena.viewers.ports import udp_port_taken
from league.errors import LeagueError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9273


def _round(values: np.ndarray, digits: int = 3) -> list[float]:
    return np.round(values.astype(np.float64), digits).tolist()


def message(frame: Frame) -> dict:
    """The frame as RocketSimVis reads it."""
    rot = car_rotations(frame.cars[:, 3:6])
    ball = frame.ball
    j = {
        "ball_phys": {"pos": _round(ball[0:3]), "vel": _round(ball[3:6]), "ang_vel": _round(ball[6:9])},
        "cars": [
            {
                "team_num": int(team),
                "phys": {"pos": _round(car[0:3]), "forward": _round(rot[i, :, 0], 5), "up": _round(rot[i, :, 2], 5),
                         "vel": _round(car[6:9]), "ang_vel": _round(car[9:12])},
                "boost_amount": round(float(frame.boost[i]), 2),
                "on_ground": bool(frame.on_ground[i]),
                "is_demoed": bool(frame.demolished[i]),
            }
            for i, (car, team) in enumerate(zip(frame.cars, frame.teams))
        ],
    }
    if frame.pads is not None:
        j["boost_pad_states"] = [bool(p) for p in frame.pads]
    return j


class RocketSimVis:
    """Sends frames to RocketSimVis at `host:port`; one sentence when nothing listens there."""

    name = "RocketSimVis"

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        self.address = (host, port)
        if not udp_port_taken(host, port):
            raise LeagueError(f"RocketSimVis is not running: nothing listens on {host}:{port} (start it with "
                              f"`python src/main.py` in its folder, then run this command again).")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect(self.address)

    def send(self, frame: Frame) -> None:
        try:
            self.sock.send(json.dumps(message(frame), separators=(",", ":")).encode())
        except ConnectionRefusedError:
            raise LeagueError(f"RocketSimVis stopped listening on {self.address[0]}:{self.address[1]}.") from None

    def close(self) -> None:
        self.sock.close()
