"""Replay files: round trip, score consistency, refusal of bad files, size of a 5-minute game."""

import errno
import json
import math
import os
import pickle
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
import RocketSim as rsim

from arena.replay import MAX_FILE_BYTES, Replay, encode, read_replay, write_replay
from arena.engine.sim import new_arena
from league.errors import LeagueError

TICK_SKIP = 8


def simulate(steps: int, team_size: int = 1, seed: int = 0) -> Replay:
    """A replay of real RocketSim physics with random controls held for a while."""
    rng = np.random.default_rng(seed)
    arena, cars = new_arena(team_size)
    n = len(cars)
    ball = np.zeros((steps, 9), np.float32)
    car = np.zeros((steps, n, 12), np.float32)
    boost = np.zeros((steps, n), np.float32)
    ground = np.zeros((steps, n), bool)
    demo = np.zeros((steps, n), bool)
    for t in range(steps):
        if t % 15 == 0:
            for c in cars:
                ctl = rsim.CarControls()
                ctl.throttle, ctl.steer = 1.0, float(rng.uniform(-1, 1))
                ctl.boost = bool(rng.random() < 0.3)
                ctl.jump = bool(rng.random() < 0.05)
                c.set_controls(ctl)
        arena.step(TICK_SKIP)
        gs = arena.get_gym_state()
        b = np.asarray(gs[2])[0]
        ball[t] = np.concatenate([b[0:3], b[7:10], b[10:13]])
        for i in range(n):
            cs = np.asarray(gs[3 + i])[0]
            car[t, i] = np.concatenate([cs[11:14], cs[33:36], cs[18:21], cs[21:24]])
            boost[t, i], ground[t, i], demo[t, i] = cs[10], cs[8] > 0, cs[7] > 0
    goal, touch, later_goal = (int(f * (steps - 1)) for f in (0.25, 0.6, 0.8))  # events within the game
    events = np.array([[0, 1, -1], [goal, 0, 0], [goal + 1, 1, -1], [touch, 2, 1], [later_goal, 0, 1]], np.int32)
    meta = {"blue": "a", "orange": "b", "team_size": team_size, "seed": seed, "score": [1, 1],
            "length_seconds": steps * TICK_SKIP / 120, "tick_skip": TICK_SKIP, "car_teams": [0] * team_size + [1] * team_size}
    return Replay(meta, ball, car, boost, ground, demo, events, np.array([0, 0, 0, 1, 1], np.int8))


def test_round_trip_keeps_everything_within_fixed_point_resolution(tmp_path):
    rep = simulate(300, team_size=2)
    path = tmp_path / "r.replay"
    write_replay(path, rep)
    back = read_replay(path)
    assert back.meta["blue"] == "a" and back.meta["version"] == 1 and back.steps == 300
    assert np.allclose(back.ball[:, :6], rep.ball[:, :6], atol=0.13)
    assert np.allclose(back.ball[:, 6:], rep.ball[:, 6:], atol=6e-4)
    assert np.allclose(back.cars[..., 3:6], rep.cars[..., 3:6], atol=6e-5)
    assert np.array_equal(back.on_ground, rep.on_ground) and np.array_equal(back.demolished, rep.demolished)
    assert np.allclose(back.boost, np.rint(rep.boost))
    assert back.score_from_events() == (1, 1) == tuple(back.meta["score"])
    assert [g["scorer"] for g in back.goals()] == [0, 1]
    assert len(back.events_of("touch")) == 1 and len(back.events_of("kickoff")) == 2
    # Writing what was read gives the same bytes: the format is a fixed point.
    write_replay(tmp_path / "again.replay", back)
    assert read_replay(tmp_path / "again.replay").ball.tobytes() == back.ball.tobytes()


def test_five_minute_1v1_replay_is_at_most_200_kb(tmp_path):
    steps = int(300 * 120 / TICK_SKIP)  # 2250 decision steps
    size = write_replay(tmp_path / "long.replay", simulate(steps))
    print(f"5-minute 1v1 replay: {size / 1024:.1f} KiB")
    assert size <= 200 * 1024


def test_inconsistent_score_is_refused(tmp_path):
    rep = simulate(50)
    rep.meta["score"] = [2, 1]
    write_replay(tmp_path / "bad.replay", rep)
    with pytest.raises(LeagueError, match="do not add up"):
        read_replay(tmp_path / "bad.replay")


class Evil:
    def __reduce__(self):
        return (exec, ("open('PWNED', 'w').write('x')",))


def test_bad_files_are_refused_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = tmp_path / "good.replay"
    write_replay(good, simulate(50))
    data = good.read_bytes()
    (tmp_path / "trunc.replay").write_bytes(data[: len(data) // 2])
    (tmp_path / "junk.replay").write_bytes(b"\x00" * 1000)
    np.savez(tmp_path / "pickled.npz", meta=np.array([Evil()], dtype=object))
    (tmp_path / "pickle.replay").write_bytes(pickle.dumps(Evil()))
    for name in ("trunc.replay", "junk.replay", "pickled.npz", "pickle.replay", "missing.replay"):
        with pytest.raises(LeagueError):
            read_replay(tmp_path / name)
    assert not (tmp_path / "PWNED").exists()


def test_write_is_atomic_no_temp_files_left(tmp_path):
    write_replay(tmp_path / "x" / "g.replay", simulate(20))
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["g.replay"]


# --------------------------------------------------------------------------- hostile files


def one_sentence(exc: pytest.ExceptionInfo) -> str:
    """The refusal message, checked to be one line ending in a full stop."""
    text = str(exc.value)
    assert "\n" not in text and text.endswith("."), text
    return text


@pytest.fixture(scope="module")
def good_members(tmp_path_factory) -> dict[str, np.ndarray]:
    """The members of a valid 2v2 replay, to damage one at a time."""
    path = tmp_path_factory.mktemp("good") / "good.replay"
    write_replay(path, simulate(60, team_size=2))
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def meta_member(meta) -> np.ndarray:
    return np.frombuffer(json.dumps(meta).encode(), np.uint8)


def write_members(path, arrays: dict[str, np.ndarray]):
    with open(path, "wb") as f:  # a file object: np.savez would append .npz to a name
        np.savez_compressed(f, **arrays)
    return path


def refused(path, match: str | None = None) -> str:
    with pytest.raises(LeagueError) as exc:
        read_replay(path)
    text = one_sentence(exc)
    assert match is None or match in text, text
    return text


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path, good_members):
    # A cars member of 72 MB of zeros (2 MB deflated here; a 3 GB one deflates to 3 MB): more than
    # an hour-long 3v3 game at tick_skip 1 could hold.
    shape = (2, 3_000_000, 1, 12)
    path = tmp_path / "bomb.replay"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, array in good_members.items():
            with z.open(f"{name}.npy", "w", force_zip64=True) as f:
                if name != "cars":
                    np.lib.format.write_array(f, array)
                    continue
                header = np.lib.format.header_data_from_array_1_0(np.zeros(0, np.uint8))
                np.lib.format.write_array_header_1_0(f, dict(header, shape=shape))
                chunk = bytes(1 << 20)
                for _ in range(math.prod(shape) >> 20):
                    f.write(chunk)
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        refused(path, "'cars' member inflates to")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak  # nothing was inflated


def test_an_array_header_claiming_a_huge_shape_is_refused_before_allocation(tmp_path, good_members):
    # Before the check, numpy allocated the claimed 900 GB up front: a MemoryError.
    path = tmp_path / "claims.replay"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, array in good_members.items():
            with z.open(f"{name}.npy", "w") as f:
                if name == "ball":
                    header = np.lib.format.header_data_from_array_1_0(np.zeros(0, np.uint8))
                    np.lib.format.write_array_header_1_0(f, dict(header, shape=(2, 50_000_000_000, 9)))
                else:
                    np.lib.format.write_array(f, array)
    refused(path, "'ball' member's shape [2, 50000000000, 9] does not fit its size")


def test_a_zip_directory_claiming_a_huge_member_is_refused(tmp_path, good_members):
    path = write_members(tmp_path / "lies.replay", good_members)
    data = bytearray(path.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the first entry of the zip's central directory
    while data[entry + 46:entry + 46 + len(b"ball.npy")] != b"ball.npy":  # its file name follows 46 bytes
        entry = data.index(b"PK\x01\x02", entry + 4)
    struct.pack_into("<I", data, entry + 24, 3_000_000_000)  # its uncompressed size: 3 GB
    path.write_bytes(bytes(data))
    refused(path, "'ball' member inflates to 3,000,000,000 bytes")


def _without(arrays, name):
    return {k: v for k, v in arrays.items() if k != name}


def _meta(arrays) -> dict:
    return json.loads(arrays["meta"].tobytes())


def _with_meta(arrays, **changes):
    return dict(arrays, meta=meta_member({**_meta(arrays), **changes}))


MALFORMED = {
    "no flags member": lambda a: _without(a, "flags"),
    "an extra member": lambda a: dict(a, extra=np.zeros(3, np.uint8)),
    "a 1-D ball": lambda a: dict(a, ball=a["ball"].reshape(-1)),
    "meta a JSON list": lambda a: dict(a, meta=meta_member([_meta(a)])),
    "meta nested too deeply": lambda a: dict(a, meta=np.frombuffer(b"[" * 50_000, np.uint8)),
    "meta without a score": lambda a: dict(a, meta=meta_member({k: v for k, v in _meta(a).items() if k != "score"})),
    "car_teams shorter than the cars": lambda a: _with_meta(a, car_teams=[0, 1]),
    "car_teams not matching team_size": lambda a: _with_meta(a, team_size=1),
    "car_teams of floats": lambda a: _with_meta(a, car_teams=[0.0, 0.0, 1.0, 1.0]),
    "tick_skip zero": lambda a: _with_meta(a, tick_skip=0),
    "tick_skip a string": lambda a: _with_meta(a, tick_skip="8"),
    "tick_skip too large": lambda a: _with_meta(a, tick_skip=121),
    "boost as float64": lambda a: dict(a, boost=a["boost"].astype(np.float64)),
    "events as int64": lambda a: dict(a, events=a["events"].astype(np.int64)),
    "fewer boost steps than ball steps": lambda a: dict(a, boost=a["boost"][:-1], flags=a["flags"][:-1]),
    "fewer car steps than ball steps": lambda a: dict(a, cars=a["cars"][:, :-1]),
    "events of two columns": lambda a: dict(a, events=a["events"][:, :2].copy()),
    "an event of a car that does not exist": lambda a: dict(a, events=a["events"] + np.array([0, 0, 9], np.int32)),
    "an event after the game": lambda a: dict(a, events=a["events"] + np.array([1000, 0, 0], np.int32)),
    "an event of an unknown kind": lambda a: dict(a, events=a["events"] * np.array([1, 7, 1], np.int32)),
    "event teams not one per event": lambda a: dict(a, event_team=a["event_team"][:-1]),
}


@pytest.mark.parametrize("damage", list(MALFORMED), ids=list(MALFORMED))
def test_malformed_members_are_refused_in_one_sentence(tmp_path, good_members, damage):
    refused(write_members(tmp_path / "bad.replay", MALFORMED[damage](good_members)))


def test_the_untouched_members_still_read(tmp_path, good_members):
    assert read_replay(write_members(tmp_path / "ok.replay", good_members)).steps == 60


# --------------------------------------------------------------------------- writing


def test_each_writer_gets_its_own_temporary_file(tmp_path, monkeypatch):
    temps = []
    replace = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (temps.append(Path(src).name), replace(src, dst)))
    data = encode(simulate(10))
    for _ in range(2):  # two writers in one process (threads, or Ray tasks in one worker) share the pid
        write_replay(tmp_path / "g.replay", data)
    assert len(set(temps)) == 2, temps
    assert [p.name for p in tmp_path.iterdir()] == ["g.replay"]


def test_a_failed_write_removes_its_temporary_file_and_raises(tmp_path, monkeypatch):
    def disk_full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    write_replay(tmp_path / "g.replay", simulate(10))
    before = (tmp_path / "g.replay").read_bytes()
    monkeypatch.setattr(os, "fsync", disk_full)  # the data is written; making it durable fails
    with pytest.raises(OSError) as exc:
        write_replay(tmp_path / "g.replay", simulate(12))
    assert exc.value.errno == errno.ENOSPC
    assert [p.name for p in tmp_path.iterdir()] == ["g.replay"]  # no half-written temporary file left
    assert (tmp_path / "g.replay").read_bytes() == before


def test_a_zip_directory_of_thousands_of_entries_is_refused_before_it_is_listed(tmp_path, good_members):
    path = write_members(tmp_path / "crowd.replay", good_members)
    with zipfile.ZipFile(path, "a") as z:
        for i in range(2000):
            z.writestr(f"{i}.npy", b"")
    refused(path, "zip directory")


# --------------------------------------------------------------------------- the file rule


@pytest.mark.parametrize("kind, words", [
    ("fifo", "is a named pipe (FIFO), not a file."),
    ("device", "is a device, not a file."),
    ("folder", "is a folder, not a file."),
    ("link to a fifo", "is a named pipe (FIFO), not a file."),
])
def test_only_a_regular_file_is_read(tmp_path, kind, words):
    # Before: "does not exist" for each, from a Path.is_file() check made apart from the open.
    path = tmp_path / "x.replay"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    text = refused(path, words)
    assert text.startswith("The replay file ")


def test_a_missing_replay_and_a_control_character_in_its_name(tmp_path):
    text = refused(tmp_path / "gone\x1b[31m.replay", "does not exist")
    assert "\x1b" not in text and "gone\\x1b[31m.replay" in text


def test_a_replay_larger_than_any_replay_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.replay"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse
    refused(path, f"more than a replay file can be ({MAX_FILE_BYTES:,})")
