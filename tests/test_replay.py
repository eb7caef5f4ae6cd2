"""Replay files: round trip, score consistency, refusal of bad files, size of a 5-minute game."""

import pickle

import numpy as np
import pytest
import RocketSim as rsim

from arena.replay import Replay, read_replay, write_replay
from arena.sim import new_arena
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
    events = np.array([[0, 1, -1], [100, 0, 0], [101, 1, -1], [300, 2, 1], [400, 0, 1]], np.int32)
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
