"""Replay files: one compact, versioned file per game (format documented in docs/replay.md).

A replay holds, at every decision step, the ball and every car (position, orientation,
velocity, angular velocity, boost, on-ground, demolished), the events (goals with scorer,
kickoffs, touches) and the game's metadata. Physics values are stored as int16 fixed-point
numbers with the scales below, stored as step-to-step differences split into byte planes
(smooth motion compresses well), and the whole file is a deflate-compressed NumPy .npz archive
read with `allow_pickle=False`, so opening a replay never runs code.

The writer is atomic (temp file, fsync, rename): a replay either exists whole or not at all.
The reader trusts nothing in the file: every member's name, size, dtype and shape, and the
metadata, are checked before use, so a hostile file is refused in one sentence (docs/replay.md).
"""

from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from league.errors import QUOTED_CHARS, LeagueError, clipped_line
from league.files import open_regular, printable, write_file_atomic
from league.game_values import TICKS_PER_SECOND

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

# Bounds of a replay this rl-league could write, so a hostile file (a zip bomb, an array header
# claiming terabytes) is refused from the sizes in its zip directory, before anything is inflated.
MAX_TEAM_SIZE = 3
MAX_CARS = 2 * MAX_TEAM_SIZE
MAX_TICK_SKIP = TICKS_PER_SECOND  # one decision per second of game clock
MAX_GAME_SECONDS = 3600  # an hour of game clock; league games last 5 minutes
MAX_STEPS = MAX_GAME_SECONDS * TICKS_PER_SECOND  # at tick_skip 1, a decision every physics tick
MAX_EVENTS = (MAX_STEPS + 1) * (MAX_CARS + 2)  # at most a touch per car, a goal and a kick-off per step
MAX_META_BYTES = 64 * 1024  # the metadata JSON is a few hundred bytes
NPY_HEADER_BYTES = 4096  # a member's own .npy header (magic, dtype, shape), padded to 64 bytes
# Each member: the dtype it must have, and its largest data in bytes.
MEMBERS: dict[str, tuple[np.dtype, int]] = {
    "meta": (np.dtype(np.uint8), MAX_META_BYTES),
    "ball": (np.dtype(np.uint8), 2 * MAX_STEPS * len(BALL_COLS)),
    "cars": (np.dtype(np.uint8), 2 * MAX_STEPS * MAX_CARS * len(CAR_COLS)),
    "boost": (np.dtype(np.uint8), MAX_STEPS * MAX_CARS),
    "flags": (np.dtype(np.uint8), MAX_STEPS * MAX_CARS),
    "events": (np.dtype(np.int32), MAX_EVENTS * 3 * 4),
    "event_team": (np.dtype(np.int8), MAX_EVENTS),
}
# Stored (not compressed), the members are this large; a file larger still is not ours.
MAX_FILE_BYTES = sum(size + NPY_HEADER_BYTES for _, size in MEMBERS.values()) + (1 << 20)
# The zip's end record: 22 bytes at the very end (np.savez writes no archive comment, and no zip64
# records into files this small), giving the size of the directory that lists the members. Listing
# a directory of millions of tiny entries would cost far more memory than the file's size, so that
# size is checked before zipfile reads it.
ZIP_END_RECORD = struct.Struct("<4s4xHHIIH")  # signature, entries here, entries, dir size, dir offset, comment
ZIP_END_SIGNATURE = b"PK\x05\x06"
ZIP64_LOCATOR_BYTES, ZIP64_LOCATOR_SIGNATURE = 20, b"PK\x06\x07"  # would come just before the end record
MAX_ZIP_DIRECTORY_BYTES = 4096  # seven entries of under 100 bytes each
# Metadata every replay has, with the type each must have (ints: not bools).
META_TYPES: dict[str, type | tuple[type, ...]] = {
    "blue": str, "orange": str, "team_size": int, "car_teams": list, "seed": int, "score": list,
    "length_seconds": (int, float), "tick_skip": int,
}
LIVE_KEY = "live"  # metadata of a watched game's file (arena.watch): true while the game is still being played


def is_live(meta: dict[str, Any]) -> bool:
    """Whether a replay's metadata says its game is still being played (a watched game's file, rewritten
    as it plays: arena.watch writes the key, the dashboard's Live page reads it)."""
    return meta.get(LIVE_KEY) is True


def car_rotations(angles: np.ndarray) -> np.ndarray:
    """Rotation matrices [..., 3, 3], in float64, of cars turned by (pitch, yaw, roll) [..., 3] (a replay's
    angles): columns forward, left, up, as RLGym's `euler_to_rotation` builds them. The one reading of a
    replay's angles, for the viewers and the dashboard's player; `car_angles` is its inverse."""
    cp, cy, cr = (np.cos(angles[..., k].astype(np.float64)) for k in range(3))
    sp, sy, sr = (np.sin(angles[..., k].astype(np.float64)) for k in range(3))
    forward = np.stack([cp * cy, cp * sy, sp], axis=-1)
    left = np.stack([cy * sp * sr - cr * sy, sy * sp * sr + cr * cy, -cp * sr], axis=-1)
    up = np.stack([-cr * cy * sp - sr * sy, -cr * sy * sp + sr * cy, cp * cr], axis=-1)
    return np.stack([forward, left, up], axis=-1)


def car_angles(forward: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(pitch, yaw, roll) [..., 3] of cars whose forward and up unit vectors are [..., 3] (RocketSim's rotation
    matrix columns, as a game hands them over): how a replay stores orientation, the inverse of `car_rotations`."""
    left = np.cross(up, forward)
    pitch = np.arcsin(np.clip(forward[..., 2], -1.0, 1.0))
    yaw = np.arctan2(forward[..., 1], forward[..., 0])
    roll = np.arctan2(-left[..., 2], up[..., 2])
    return np.stack([pitch, yaw, roll], axis=-1)


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
        return self.meta["tick_skip"] / TICKS_PER_SECOND


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
    """Write atomically (temp file, fsync, rename); returns the file size in bytes.

    The temporary name is unique per writer (the pid alone is shared by a process's threads,
    and by Ray tasks in one worker), and a failed write (a full disk) removes it and re-raises.
    """
    data = replay if isinstance(replay, bytes) else encode(replay)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomic(path, data)
    return len(data)


class _Malformed(Exception):
    """What is wrong with a replay file, as the end of the refusal's sentence."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A finite int or float (JSON reads NaN, Infinity and 400-digit integers)."""
    try:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    except OverflowError:
        return False


def _check_zip_directory(fh: BinaryIO) -> None:
    """Refuse a file whose zip directory is larger than a replay's (its size was checked when it was opened)."""
    size = fh.seek(0, os.SEEK_END)
    if size > MAX_FILE_BYTES:  # grew since it was opened
        raise _Malformed(f"it is {size:,} bytes, more than a replay can be ({MAX_FILE_BYTES:,})")
    fh.seek(max(0, size - ZIP64_LOCATOR_BYTES - ZIP_END_RECORD.size))
    tail = fh.read(ZIP64_LOCATOR_BYTES + ZIP_END_RECORD.size)
    end = tail[-ZIP_END_RECORD.size:]
    if len(end) < ZIP_END_RECORD.size or not end.startswith(ZIP_END_SIGNATURE):
        raise zipfile.BadZipFile("no zip end record")
    _, _, _, directory_bytes, _, comment = ZIP_END_RECORD.unpack(end)
    if directory_bytes > MAX_ZIP_DIRECTORY_BYTES or comment or tail.startswith(ZIP64_LOCATOR_SIGNATURE):
        raise _Malformed(f"its zip directory is not a replay's ({directory_bytes:,} bytes)")
    fh.seek(0)


def _npy_header(raw: BinaryIO, name: str, size: int) -> tuple[tuple[int, ...], int]:
    """A member's .npy header (its first bytes, in `raw`): the array's shape and where its data
    starts, checked (dtype, order, shape against the member's `size` in bytes) before anything is allocated."""
    dtype = MEMBERS[name][0]
    version = np.lib.format.read_magic(raw)
    if version not in ((1, 0), (2, 0)):
        raise _Malformed(f"its {name!r} member is .npy version {version}, which rl-league does not write")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, found = read_header(raw, max_header_size=NPY_HEADER_BYTES)
    if fortran:
        raise _Malformed(f"its {name!r} member is stored in Fortran (column-major) order, which rl-league does not "
                         "write")
    if found != dtype:
        raise _Malformed(f"its {name!r} member holds {found} values, not {dtype}")
    if any(n < 0 for n in shape) or math.prod(shape) * dtype.itemsize != size - raw.tell():
        raise _Malformed(f"its {name!r} member's shape {list(shape)} does not fit its size")
    return shape, raw.tell()


def _member_shape(z: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> tuple[int, ...]:
    """A member's shape, from its size in the zip directory and its .npy header alone: only the
    header's few bytes are inflated."""
    limit = MEMBERS[name][1]
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 1:  # 1: encrypted
        raise _Malformed(f"its {name!r} member is stored in a way rl-league does not write")
    if info.file_size > limit + NPY_HEADER_BYTES:
        raise _Malformed(f"its {name!r} member inflates to {info.file_size:,} bytes, more than a replay's can "
                         f"({limit + NPY_HEADER_BYTES:,})")
    with z.open(info) as f:
        head = f.read(NPY_HEADER_BYTES + 16)  # magic, version, header length, header
    return _npy_header(io.BytesIO(head), name, info.file_size)[0]


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> np.ndarray:
    """One member as an array (its header already checked by _member_shape, and checked again on what was inflated)."""
    data = z.read(info)  # zipfile inflates no more than the recorded size, and checks the CRC
    shape, offset = _npy_header(io.BytesIO(data), name, len(data))
    return np.frombuffer(data, MEMBERS[name][0], offset=offset).reshape(shape).copy()


def _member_infos(z: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """Every member's directory entry, by name, refusing an archive that holds other members than a replay's."""
    infos = z.infolist()
    names = [info.filename for info in infos]
    missing = sorted({f"{name}.npy" for name in MEMBERS} - set(names))
    if missing:
        raise _Malformed(f"it lacks the member {missing[0]!r}")
    extra = sorted(set(names) - {f"{name}.npy" for name in MEMBERS})
    if extra:
        raise _Malformed(f"it has an unexpected member {extra[0]!r}")
    if len(names) != len(MEMBERS):
        raise _Malformed("it lists a member twice")
    return {info.filename[:-len(".npy")]: info for info in infos}


def _parse_meta(member: np.ndarray) -> Any:
    if member.ndim != 1:
        raise _Malformed(f"its 'meta' member has shape {list(member.shape)}, not [bytes]")
    try:
        return json.loads(member.tobytes().decode())
    except RecursionError:  # the parser recurses into each nested bracket
        raise _Malformed("its metadata is nested too deeply to be a replay's") from None


def _check_meta(meta: dict[str, Any]) -> None:
    """Refuse metadata (whose format and version are ours) that lacks a key or holds a nonsense value."""
    for key, types in META_TYPES.items():
        if not isinstance(meta.get(key), types) or isinstance(meta[key], bool):
            raise _Malformed(f"its metadata lacks {key!r}, or has it of the wrong type")
    team_size, car_teams = meta["team_size"], meta["car_teams"]
    if not 1 <= team_size <= MAX_TEAM_SIZE or not all(_is_int(t) for t in car_teams) \
            or car_teams != [0] * team_size + [1] * team_size:
        raise _Malformed("its car_teams are not team_size blue cars, then as many orange ones (team_size 1 to "
                         f"{MAX_TEAM_SIZE})")
    if not 1 <= meta["tick_skip"] <= MAX_TICK_SKIP:
        raise _Malformed(f"its tick_skip is {meta['tick_skip']}, not 1 to {MAX_TICK_SKIP}")
    if len(meta["score"]) != 2 or not all(_is_int(goals) and goals >= 0 for goals in meta["score"]):
        raise _Malformed("its score is not two goal counts")
    if not _is_number(meta["length_seconds"]) or meta["length_seconds"] < 0:
        raise _Malformed("its length_seconds is not a number of seconds")
    if "game_seconds" in meta and not (_is_number(meta["game_seconds"]) and meta["game_seconds"] > 0):
        raise _Malformed("its game_seconds is not a positive number of seconds")


def _check_shapes(shapes: dict[str, tuple[int, ...]], cars: int) -> tuple[int, int]:
    """The steps and events of arrays of these shapes; refused if they disagree with each other or with the cars."""
    steps = shapes["ball"][1] if len(shapes["ball"]) == 3 else 0
    if steps < 1:
        raise _Malformed(f"its 'ball' member has shape {list(shapes['ball'])}, not [2, steps, {len(BALL_COLS)}]")
    expected = {"ball": (2, steps, len(BALL_COLS)), "cars": (2, steps, cars, len(CAR_COLS)), "boost": (steps, cars),
                "flags": (steps, cars)}
    for name, shape in expected.items():
        if shapes[name] != shape:
            raise _Malformed(f"its {name!r} member has shape {list(shapes[name])}, not {list(shape)} "
                             f"({steps} steps of {cars} cars)")
    events, event_team = shapes["events"], shapes["event_team"]
    if len(events) != 2 or events[1] != 3 or event_team != events[:1]:
        raise _Malformed(f"its events have shape {list(events)} and their teams {list(event_team)}, not [K, 3] and [K]")
    return steps, events[0]


def _check_events(arrays: dict[str, np.ndarray], steps: int, cars: int) -> None:
    """Refuse events that name a step, kind, car or team that does not exist."""
    step, kind, car = arrays["events"].T
    event_team = arrays["event_team"]
    # 0..steps: the events of a game's final step happen after its last frame was recorded.
    if not (((step >= 0) & (step <= steps)).all() and np.isin(kind, list(EVENT_NAMES)).all()
            and ((car >= -1) & (car < cars)).all() and ((event_team >= -1) & (event_team <= 1)).all()):
        raise _Malformed("its events name a step, kind, car or team that does not exist")


@dataclass(frozen=True)
class ReplayHeader:
    """What a replay holds, read without inflating its arrays: its checked metadata and sizes."""

    meta: dict[str, Any]
    steps: int
    events: int

    def seconds(self) -> float:
        """The game clock its steps cover."""
        return self.steps * self.meta["tick_skip"] / TICKS_PER_SECOND


@dataclass(frozen=True)
class ReadBudget:
    """The most of a replay a reader decodes (a page that holds the whole game in memory sets it
    below the format's bounds); a file over it is refused from its header, before it is inflated."""

    steps: int = MAX_STEPS
    events: int = MAX_EVENTS


class ReplayOverBudget(LeagueError):
    """A valid replay larger than the reader's ReadBudget (its header and the budget attached)."""

    def __init__(self, message: str, header: ReplayHeader, budget: ReadBudget):
        super().__init__(message)
        self.header, self.budget = header, budget


def _header(z: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], shown: str) -> ReplayHeader:
    """The metadata (inflated: a few KB) and every member's shape (from its .npy header), checked."""
    shapes = {name: _member_shape(z, info, name) for name, info in infos.items()}
    meta = _parse_meta(_read_member(z, infos["meta"], "meta"))
    if not isinstance(meta, dict) or meta.get("format") != REPLAY_FORMAT:
        raise LeagueError(f"{shown} is not an rl-league replay.")
    if meta.get("version") != REPLAY_VERSION:
        version = printable(clipped_line(repr(meta.get("version")), QUOTED_CHARS))
        raise LeagueError(f"{shown} is replay format version {version}; this rl-league reads version "
                          f"{REPLAY_VERSION}.")
    _check_meta(meta)
    steps, events = _check_shapes(shapes, len(meta["car_teams"]))
    return ReplayHeader(meta, steps, events)


def _load(path: Path, budget: ReadBudget | None, arrays: bool) -> tuple[ReplayHeader, dict[str, np.ndarray]]:
    """The header and (if `arrays`) every member, checked; one sentence (LeagueError) for any fault."""
    shown = printable(str(path))
    with open_regular(Path(path), MAX_FILE_BYTES, "replay file") as fh:
        try:
            _check_zip_directory(fh)
            with zipfile.ZipFile(fh) as z:
                infos = _member_infos(z)
                header = _header(z, infos, shown)
                if budget is not None and (header.steps > budget.steps or header.events > budget.events):
                    raise ReplayOverBudget(
                        f"{shown} holds {header.steps:,} steps and {header.events:,} events, more than the "
                        f"{budget.steps:,} steps and {budget.events:,} events read here.", header, budget)
                members = {name: _read_member(z, info, name) for name, info in infos.items()} if arrays else {}
            if arrays:
                _check_events(members, header.steps, len(header.meta["car_teams"]))
        except _Malformed as exc:
            raise LeagueError(f"{shown} is not a valid replay: {printable(str(exc))}.") from None
        except (OSError, ValueError, zipfile.BadZipFile, UnicodeDecodeError, EOFError) as exc:
            raise LeagueError(f"{shown} is not a readable replay file ({exc.__class__.__name__}).") from None
    return header, members


def read_replay_header(path: Path) -> ReplayHeader:
    """A replay's metadata, steps and events, checked as `read_replay` checks them, without
    inflating its arrays (a few KB of memory, whatever the replay's length)."""
    return _load(path, None, arrays=False)[0]


def read_replay(path: Path, budget: ReadBudget | None = None) -> Replay:
    """Load a replay; a missing, corrupt, foreign or malformed file is refused with one sentence,
    and one over `budget` with ReplayOverBudget, before its arrays are inflated.

    Nothing in the file is trusted (docs/replay.md, "Reading"): it is opened by the league's file
    rule (`league.files.open_regular`: a regular file of at most MAX_FILE_BYTES, checked on the open
    descriptor, so a FIFO or a device is refused at once, never read), then its zip directory and
    each member's uncompressed size are checked before anything is inflated, each array's dtype
    and shape (from its .npy header) before anything is allocated, the metadata and the shapes
    against each other, and only then are the arrays inflated and their events checked.
    """
    header, arrays = _load(path, budget, arrays=True)
    meta = header.meta
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
        raise LeagueError(f"{printable(str(path))} is corrupt: its goal events do not add up to its recorded score.")
    return replay
