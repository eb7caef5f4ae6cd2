"""Replay files: one compact, versioned file per game (format documented in docs/replay.md).

A replay holds, at every decision step, the ball and every car (position, orientation,
velocity, angular velocity, boost, on-ground, demolished), the events (goals with scorer,
kickoffs, touches) and the game's metadata. Physics values are stored as int16 fixed-point
numbers with the scales below, stored as step-to-step differences split into byte planes
(smooth motion compresses well), and the whole file is a deflate-compressed NumPy .npz archive
read with `allow_pickle=False`, so opening a replay never runs code.

The writer is atomic (temp file, fsync, rename): a replay either exists whole or not at all.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from league.errors import LeagueError

REPLAY_FORMAT = "rl-league-replay"
REPLAY_VERSION = 1

# Fixed-point scales: stored = round(value * scale), as int16.
POS_SCALE = 4.0  # 0.25 uu resolution; |x| < 8192 uu
VEL_SCALE = 4.0  # 0.25 uu/s; |v| < 8192 uu/s
ANG_VEL_SCALE = 1000.0  # 0.001 rad/s; |w| < 32 rad/s
ANGLE_SCALE = 10000.0  # 0.0001 rad; angles in [-pi, pi]
INT16_MAX = 32767

# Column layout of the float arrays a game hands to the writer.
BALL_COLS = ("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz")
CAR_COLS = ("x", "y", "z", "pitch", "yaw", "roll", "vx", "vy", "vz", "wx", "wy", "wz")
_BALL_SCALES = np.array([POS_SCALE] * 3 + [VEL_SCALE] * 3 + [ANG_VEL_SCALE] * 3, dtype=np.float64)
_CAR_SCALES = np.array([POS_SCALE] * 3 + [ANGLE_SCALE] * 3 + [VEL_SCALE] * 3 + [ANG_VEL_SCALE] * 3, dtype=np.float64)

# Bits of the per-car flags byte.
FLAG_ON_GROUND, FLAG_DEMOLISHED = 1, 2

EVENT_KINDS = {"goal": 0, "kickoff": 1, "touch": 2}
EVENT_NAMES = {v: k for k, v in EVENT_KINDS.items()}


@dataclass
class Replay:
    """A game at every decision step. Arrays are float32 in game units unless noted."""

    meta: dict[str, Any]  # agents, team_size, seed, score, length_seconds, tick_skip, ... (see docs)
    ball: np.ndarray  # [T, 9] position, velocity, angular velocity
    cars: np.ndarray  # [T, C, 12] position, (pitch, yaw, roll), velocity, angular velocity
    boost: np.ndarray  # [T, C] 0..100
    on_ground: np.ndarray  # [T, C] bool
    demolished: np.ndarray  # [T, C] bool
    events: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int32))  # [K, 3] step, kind, car (-1: none)
    event_team: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))  # [K] team of the event (goals)

    @property
    def steps(self) -> int:
        return int(self.ball.shape[0])

    @property
    def teams(self) -> list[int]:
        """Team of each car (0 blue, 1 orange), blue cars first."""
        return list(self.meta["car_teams"])

    def goals(self) -> list[dict[str, int]]:
        return [{"step": int(s), "team": int(t), "scorer": int(c)}
                for (s, k, c), t in zip(self.events, self.event_team) if k == EVENT_KINDS["goal"]]

    def events_of(self, kind: str) -> list[dict[str, int]]:
        code = EVENT_KINDS[kind]
        return [{"step": int(s), "car": int(c), "team": int(t)}
                for (s, k, c), t in zip(self.events, self.event_team) if k == code]

    def score_from_events(self) -> tuple[int, int]:
        goals = self.goals()
        return sum(g["team"] == 0 for g in goals), sum(g["team"] == 1 for g in goals)

    def seconds_per_step(self) -> float:
        return self.meta["tick_skip"] / 120.0


def _quantize(values: np.ndarray, scales: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(values.astype(np.float64) * scales), -INT16_MAX, INT16_MAX).astype(np.int16)


def _dequantize(values: np.ndarray, scales: np.ndarray) -> np.ndarray:
    return (values.astype(np.float64) / scales).astype(np.float32)


def _delta_planes(q: np.ndarray) -> np.ndarray:
    """int16 [T, ...] -> uint8 [2, T, ...]: step-to-step differences (wrapping, so exact), split
    into low and high byte planes. Smooth motion makes both planes highly compressible."""
    delta = np.diff(q, axis=0, prepend=np.zeros_like(q[:1]))
    return np.ascontiguousarray(np.moveaxis(delta.view(np.uint8).reshape(q.shape + (2,)), -1, 0))


def _undelta_planes(planes: np.ndarray) -> np.ndarray:
    delta = np.ascontiguousarray(np.moveaxis(planes, 0, -1)).view(np.int16)[..., 0]
    return np.cumsum(delta, axis=0, dtype=np.int16)


def encode(replay: Replay) -> bytes:
    """The replay as the bytes of its file."""
    meta = dict(replay.meta, format=REPLAY_FORMAT, version=REPLAY_VERSION)
    flags = (replay.on_ground.astype(np.uint8) * FLAG_ON_GROUND) | (replay.demolished.astype(np.uint8) * FLAG_DEMOLISHED)
    arrays = {
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8),
        "ball": _delta_planes(_quantize(replay.ball, _BALL_SCALES)),
        "cars": _delta_planes(_quantize(replay.cars, _CAR_SCALES)),
        "boost": np.clip(np.rint(replay.boost), 0, 255).astype(np.uint8),
        "flags": flags.astype(np.uint8),
        "events": replay.events.astype(np.int32).reshape(-1, 3),
        "event_team": replay.event_team.astype(np.int8),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def write_replay(path: Path, replay: Replay | bytes) -> int:
    """Write atomically (temp file, fsync, rename); returns the file size in bytes."""
    data = replay if isinstance(replay, bytes) else encode(replay)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return len(data)


def read_replay(path: Path) -> Replay:
    """Load a replay; a missing, corrupt or foreign file is refused with one sentence."""
    if not Path(path).is_file():
        raise LeagueError(f"Replay file {path} does not exist.")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError, EOFError) as exc:
        raise LeagueError(f"{path} is not a readable replay file ({exc.__class__.__name__}).") from None
    if meta.get("format") != REPLAY_FORMAT:
        raise LeagueError(f"{path} is not an rl-league replay.")
    if meta.get("version") != REPLAY_VERSION:
        raise LeagueError(
            f"{path} is replay format version {meta.get('version')}; this rl-league reads version {REPLAY_VERSION}."
        )
    flags = arrays["flags"]
    replay = Replay(
        meta=meta,
        ball=_dequantize(_undelta_planes(arrays["ball"]), _BALL_SCALES),
        cars=_dequantize(_undelta_planes(arrays["cars"]), _CAR_SCALES),
        boost=arrays["boost"].astype(np.float32),
        on_ground=(flags & FLAG_ON_GROUND) > 0,
        demolished=(flags & FLAG_DEMOLISHED) > 0,
        events=arrays["events"],
        event_team=arrays["event_team"],
    )
    if tuple(meta["score"]) != replay.score_from_events():
        raise LeagueError(f"{path} is corrupt: its goal events do not add up to its recorded score.")
    return replay
