"""Watching games: `league replay play --viewer`, `league watch`, training's evaluation game to a viewer.

The viewers are real UDP listeners on 127.0.0.1 in the test, checking each packet against the
viewer's format: RocketSimVis' JSON as rlgym-tools' renderer sends it, and rlviser-py's bytes
(RLViser 0.8's protocol: a packet-type byte, then the state, little-endian). Games are real
RocketSim games; with no listener a command ends in one sentence, at once.
"""

from __future__ import annotations

import json
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from arena.replay import car_rotations, read_replay, write_replay
from arena.viewers.frame import replay_frames
from league.cli import app
from league.errors import LeagueError
from league.game_values import BACK_WALL_Y, BOOST_PADS
from dashboard_fixture import synthetic_replay

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


class Listener:
    """A UDP socket on 127.0.0.1 collecting datagrams on a thread; `close_after`: stop listening after N."""

    def __init__(self, port: int = 0, close_after: int | None = None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)  # room for a burst, where allowed
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.packets: list[bytes] = []
        self.close_after = close_after
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                self.packets.append(self.sock.recv(1 << 20))
            except socket.timeout:
                continue
            if self.close_after is not None and len(self.packets) >= self.close_after:
                break
        self.sock.close()

    def finish(self, settle: float = 0.3) -> list[bytes]:
        time.sleep(settle)  # datagrams already sent are in the socket's buffer
        self.stop.set()
        self.thread.join()
        return self.packets


def free_udp_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory) -> Path:
    """A 1v1 replay of 40 s with goals for both sides (ball and cars moving as in a game)."""
    path = tmp_path_factory.mktemp("watch") / "game.replay"
    write_replay(path, synthetic_replay(5, "rule", "atba", 1, 2, 1, 40.0))
    return path


def check_rocketsimvis(message: dict, frame, atol: float = 0.01, boost_atol: float = 0.01) -> None:
    """One RocketSimVis message against the frame it shows: field names, units, car count. `atol`,
    `boost_atol`: a live game's packets hold full precision, its replay 0.25 uu (and uu/s) steps and whole boost."""
    assert set(message) <= {"ball_phys", "cars", "boost_pad_states"}
    assert set(message["ball_phys"]) == {"pos", "vel", "ang_vel"}
    np.testing.assert_allclose(message["ball_phys"]["pos"], frame.ball[0:3], atol=atol)  # uu, as recorded
    np.testing.assert_allclose(message["ball_phys"]["vel"], frame.ball[3:6], atol=atol)  # uu/s
    assert len(message["cars"]) == len(frame.teams)
    rot = car_rotations(frame.cars[:, 3:6])
    for i, car in enumerate(message["cars"]):
        assert set(car) == {"team_num", "phys", "boost_amount", "on_ground", "is_demoed"}
        assert set(car["phys"]) == {"pos", "forward", "up", "vel", "ang_vel"}
        assert car["team_num"] == frame.teams[i]
        np.testing.assert_allclose(car["phys"]["pos"], frame.cars[i, 0:3], atol=atol)
        np.testing.assert_allclose(car["phys"]["forward"], rot[i, :, 0], atol=1e-4)
        np.testing.assert_allclose(car["phys"]["up"], rot[i, :, 2], atol=1e-4)
        assert abs(np.linalg.norm(car["phys"]["forward"]) - 1) < 1e-3
        assert car["boost_amount"] == pytest.approx(float(frame.boost[i]), abs=boost_atol)  # 0..100, RocketSim's scale
        assert 0 <= car["boost_amount"] <= 100
        assert car["on_ground"] is bool(frame.on_ground[i]) and car["is_demoed"] is bool(frame.demolished[i])


def test_replay_play_sends_every_frame_to_rocketsimvis(replay_file):
    replay = read_replay(replay_file)
    listener = Listener()
    result = cli("replay", "play", replay_file, "--viewer", "rocketsimvis", "--viewer-port", listener.port,
                 "--speed", 0)
    packets = listener.finish()
    assert result.exit_code == 0, result.output
    assert f"Sent {replay.steps} frames" in result.output
    messages = [json.loads(p) for p in packets]
    assert len(messages) == replay.steps
    frames = list(replay_frames(replay))
    for t in (0, replay.steps // 2, replay.steps - 1):
        check_rocketsimvis(messages[t], frames[t])
    assert all("boost_pad_states" not in m for m in messages)  # a replay does not record the pads
    goals = replay.goals()
    assert len(goals) == 3
    for g in goals:  # the goal's frame: the ball past the scored-on goal line
        y = messages[g["step"]]["ball_phys"]["pos"][1]
        assert (y > BACK_WALL_Y) if g["team"] == 0 else (y < -BACK_WALL_Y), (g, y)


def test_replay_play_from_a_moment_and_paced(replay_file):
    """--from skips the start; --speed holds frames back to the game clock (here 20x: 5 s of game in 0.25 s)."""
    replay = read_replay(replay_file)
    listener = Listener()
    started = time.monotonic()
    result = cli("replay", "play", replay_file, "--viewer", "rocketsimvis", "--viewer-port", listener.port,
                 "--speed", 20, "--from", 35)
    took = time.monotonic() - started
    packets = listener.finish()
    assert result.exit_code == 0, result.output
    first = int(35 / replay.seconds_per_step())
    assert len(packets) == replay.steps - first
    assert json.loads(packets[0])["ball_phys"]["pos"] == pytest.approx(replay.ball[first, 0:3].tolist(), abs=0.01)
    assert took >= (replay.steps - 1 - first) * replay.seconds_per_step() / 20 * 0.9


@pytest.mark.parametrize("args", [
    ["replay", "play", "{file}", "--viewer", "rocketsimvis", "--viewer-port", "{port}"],
    ["watch", "rule", "atba", "--viewer", "rocketsimvis", "--viewer-port", "{port}", "--home", "{home}"],
])
def test_no_viewer_listening_is_one_sentence(args, replay_file, home):
    port = free_udp_port()
    started = time.monotonic()
    result = cli(*[a.format(file=replay_file, port=port, home=home.root) for a in args])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"Error: RocketSimVis is not running: nothing listens on 127.0.0.1:{port} (start it with `python src/main.py` "
        "in its folder, then run this command again)."]
    assert time.monotonic() - started < 10  # refused before any game is played, never waiting on the network
    assert not home.live.exists() or not list(home.live.iterdir())


def test_bad_viewer_speed_and_missing_viewer_are_one_sentence(replay_file, home):
    for args, words in ((["replay", "play", replay_file], "Name a viewer"),
                        (["replay", "play", replay_file, "--viewer", "vlc"], "Unknown viewer 'vlc'"),
                        (["replay", "play", replay_file, "--viewer", "rocketsimvis", "--speed", "nan"], "--speed must"),
                        (["replay", "play", replay_file, "--viewer", "rocketsimvis", "--from", "999"], "past the replay"),
                        (["watch", "rule", "nobody", "--home", home.root], "nobody"),
                        (["watch", "rule", "atba", "--speed", "-1", "--home", home.root], "--speed must")):
        result = cli(*args)
        assert result.exit_code == 2 and words in result.output, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1


def test_a_viewer_closed_mid_replay_is_one_sentence(replay_file):
    listener = Listener(close_after=5)
    result = cli("replay", "play", replay_file, "--viewer", "rocketsimvis", "--viewer-port", listener.port,
                 "--speed", 5)
    listener.finish(0)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"Error: RocketSimVis stopped listening on 127.0.0.1:{listener.port}."


def test_watch_plays_a_live_game_to_rocketsimvis_and_the_dashboard(home):
    """A real game at full speed: every frame to the viewer (pads known live), the game under live/."""
    listener = Listener()
    result = cli("watch", "rule-pro", "random", "--speed", 0, "--game-seconds", 12, "--seed", 4, "--viewer",
                 "rocketsimvis", "--viewer-port", listener.port, "--home", home.root)
    packets = listener.finish()
    assert result.exit_code == 0, result.output
    (live,) = list(home.live.iterdir())
    replay = read_replay(live)
    assert replay.meta["live"] is False and replay.meta["blue"] == "rule-pro" and replay.meta["seed"] == 4
    blue, orange = replay.meta["score"]
    assert f"Final score {blue}-{orange}" in result.output
    assert blue >= 1  # rule-pro scores on random within 12 s from this seed (a goal at 0:04)
    messages = [json.loads(p) for p in packets]
    assert len(messages) == replay.steps
    frames = list(replay_frames(replay))
    for t in (0, replay.steps - 1):
        check_rocketsimvis({k: v for k, v in messages[t].items() if k != "boost_pad_states"}, frames[t], atol=0.13,
                           boost_atol=0.5)
        assert len(messages[t]["boost_pad_states"]) == len(BOOST_PADS)
    assert all(messages[0]["boost_pad_states"])  # kick-off: every pad up
    assert not all(messages[-1]["boost_pad_states"])  # 12 s later some pad has been taken
    for g in replay.goals():
        y = messages[g["step"]]["ball_phys"]["pos"][1]
        assert (y > BACK_WALL_Y) if g["team"] == 0 else (y < -BACK_WALL_Y)
        assert f"goal for {'blue' if g['team'] == 0 else 'orange'}" in result.output


def test_watch_a_mixed_team_game(home):
    """2v2 with mixed teams (one member per car, league.teams): four cars in every packet, blue first."""
    listener = Listener()
    result = cli("watch", "rule+atba", "random+rule-pro", "--stage", "2v2", "--speed", 0, "--game-seconds", 3,
                 "--viewer", "rocketsimvis", "--viewer-port", listener.port, "--home", home.root)
    packets = listener.finish()
    assert result.exit_code == 0, result.output
    assert "rule+atba (blue) vs random+rule-pro (orange), 2v2" in " ".join(result.output.split())
    (live,) = list(home.live.iterdir())
    replay = read_replay(live)
    assert (replay.meta["blue"], replay.meta["orange"], replay.meta["team_size"]) == ("rule+atba", "random+rule-pro", 2)
    assert len(packets) == replay.steps == 3 * 15
    assert {tuple(c["team_num"] for c in json.loads(p)["cars"]) for p in packets} == {(0, 0, 1, 1)}


def test_watch_paces_to_the_game_clock_and_rewrites_the_live_file(home):
    """At 4x a 4 s game takes about a second, and the live file is readable while the game plays."""
    seen = []
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            files = list(home.live.glob("*.replay")) if home.live.is_dir() else []
            if files:
                try:
                    r = read_replay(files[0])
                    seen.append((r.meta["live"], r.steps))
                except LeagueError:
                    pass
            time.sleep(0.05)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    started = time.monotonic()
    result = cli("watch", "rule", "atba", "--speed", 4, "--game-seconds", 4, "--seed", 1, "--home", home.root)
    took = time.monotonic() - started
    stop.set()
    poller.join()
    assert result.exit_code == 0, result.output
    assert took >= 4 / 4 * 0.9
    live_steps = [steps for live, steps in seen if live]
    assert live_steps and min(live_steps) < max(live_steps)  # it grew while the game played
    (live,) = list(home.live.iterdir())
    final = read_replay(live)  # its last write is the whole game
    assert final.meta["live"] is False and final.steps >= max(live_steps) and final.steps == 4 * 15


def test_training_sends_its_game_in_the_background_when_a_viewer_listens(home, monkeypatch):
    import torch

    from agents.loading import load_policy
    from arena.engine.game import GameSpec
    from arena.background_viewer import VIEWER_THREAD, send_game_in_background
    from league.registry import Registry

    torch.set_num_threads(1)
    reg = Registry.open(home.db_path)
    policies = {n: load_policy(reg.agent_store.get(n)) for n in ("rule", "atba")}
    spec = GameSpec(team_size=1, tick_skip=8, mode="timed", game_seconds=1.0)
    port = free_udp_port()
    monkeypatch.setattr("arena.viewers.rocketsimvis.DEFAULT_PORT", port)
    started = time.monotonic()
    assert send_game_in_background("rocketsimvis", spec, policies, "rule", "atba", 3) is None  # nobody listens
    assert time.monotonic() - started < 0.5  # one port check: no game played
    listener = Listener(port)
    started = time.monotonic()
    thread = send_game_in_background("rocketsimvis", spec, policies, "rule", "atba", 3)
    returned = time.monotonic() - started
    assert thread is not None and thread.name == VIEWER_THREAD and thread.daemon
    assert send_game_in_background("rocketsimvis", spec, policies, "rule", "atba", 3) is None  # one at a time
    thread.join(timeout=10)
    sent = time.monotonic() - started
    packets = listener.finish()
    assert len(packets) == 15  # 1 s of game at 15 frames a second
    assert sent >= 14 / 15 * 0.9 and returned < sent  # sent at real time, after the call returned
    assert {tuple(c["team_num"] for c in json.loads(p)["cars"]) for p in packets} == {(0, 1)}


@pytest.mark.slow  # the evaluation's own games run on worker processes
def test_training_evaluation_sends_one_more_game_to_the_viewer(home, monkeypatch):
    import torch

    from agents.loading import load_policy
    from arena.background_viewer import VIEWER_THREAD
    from league.registry import Registry
    from training.evaluation import evaluate_snapshot

    torch.set_num_threads(1)
    reg = Registry.open(home.db_path)
    port = free_udp_port()
    monkeypatch.setattr("arena.viewers.rocketsimvis.DEFAULT_PORT", port)
    listener = Listener(port)
    rates = evaluate_snapshot(reg, "rule", load_policy(reg.agent_store.get("rule")), 1, 1, 1.0, 0, home.root,
                              workers=1, viewer="rocketsimvis")
    (thread,) = [t for t in threading.enumerate() if t.name == VIEWER_THREAD]
    thread.join(timeout=10)
    packets = listener.finish()
    assert set(rates) == {"random", "atba", "rule", "rule-pro"}  # the recorded evaluation games, as before
    assert len(reg.game_store.games()) == 4  # one per opponent; the viewer's game is not recorded
    assert len(packets) == 15  # and one more game, 1 s at 15 frames a second


def test_the_eval_viewer_key_is_off_by_default_and_checked():
    from league.config import load_config
    from league.errors import ConfigError

    assert load_config().training.eval_viewer == ""
    assert load_config(overrides={"training.eval_viewer": "rlviser"}).training.eval_viewer == "rlviser"
    with pytest.raises(ConfigError, match="rocketsimvis"):
        load_config(overrides={"training.eval_viewer": "vlc"})


# --------------------------------------------------------------------------- rlviser (rlviser-py)

RLVISER_PORT, CLIENT_PORT = 45243, 34254
STATE_HEADER = struct.Struct("<QfBII")  # tick_count, tick_rate, game_mode, pads, cars
BALL_POS_AT = STATE_HEADER.size + 8  # then the ball: its update counter (u64), its position (3 f32), ...


def ports_free(*ports) -> bool:
    for port, host in zip(ports, ("127.0.0.1", "0.0.0.0")):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind((host, port))
        except OSError:
            return False
        finally:
            s.close()
    return True


def league_subprocess(args, cwd: Path) -> subprocess.CompletedProcess:
    """rlviser-py keeps one socket per process (and its ports are fixed): each run is a process of its own."""
    code = "import sys; from league.cli import main; sys.argv = ['league'] + sys.argv[1:]; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.usefixtures("rlviser_port_lock")
def test_rlviser_not_running_is_one_sentence(replay_file):
    if not ports_free(RLVISER_PORT):
        pytest.skip("something listens on RLViser's port here")
    result = cli("replay", "play", replay_file, "--viewer", "rlviser")  # refused before rlviser-py opens its socket
    assert result.exit_code == 2, result.output
    try:
        import rlviser_py  # noqa: F401
        expected = f"Error: RLViser is not running: nothing listens on 127.0.0.1:{RLVISER_PORT} (start RLViser, then run this command again)."
    except ImportError:
        expected = ("Error: --viewer rlviser needs the optional package rlviser-py: pip install 'rl-league[rlviser]' "
                    "(or pip install rlviser-py).")
    assert result.output.strip() == expected


@pytest.fixture
def rlviser_process(tmp_path):
    """A process named rlviser, as RLViser's is (a copy of sleep): rlviser-py then starts no ./rlviser of its
    own, and the league refuses to call it without one (issue 56, item 3)."""
    fake = tmp_path / "bin" / "rlviser"
    fake.parent.mkdir()
    shutil.copy(shutil.which("sleep"), fake)
    process = subprocess.Popen([fake, "120"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.usefixtures("rlviser_port_lock")  # its process named rlviser must not meet the other RLViser tests
def test_replay_play_sends_rlviser_py_packets(tmp_path, rlviser_process):
    """Every packet of a replay, received by a socket that cannot drop one: bound before the run, read only
    after the sending process has ended, and the replay short enough (51 frames at tick skip 24, a goal
    among them) that all its datagrams fit the socket's buffer at Linux's default size (212,992 bytes;
    a 1-byte datagram takes about 830 of them, a state about 1,300) with room to spare."""
    pytest.importorskip("rlviser_py")
    if not ports_free(RLVISER_PORT, CLIENT_PORT):
        pytest.skip("RLViser's or rlviser-py's port is taken here")
    path = tmp_path / "short.replay"
    write_replay(path, synthetic_replay(5, "rule", "atba", 1, 1, 0, 10.0, tick_skip=24))
    replay = read_replay(path)
    assert replay.steps == 51 and len(replay.goals()) == 1
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)  # more room where the system allows it
    sock.bind(("127.0.0.1", RLVISER_PORT))
    try:
        result = league_subprocess(["replay", "play", path, "--viewer", "rlviser", "--speed", 0], tmp_path)
        sock.settimeout(5)  # the sender has ended: its datagrams are in the buffer (or a moment from it)
        packets = [sock.recv(1 << 16) for _ in range(1 + 2 * replay.steps)]
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            sock.recv(1 << 16)  # and nothing more
    finally:
        sock.close()
    assert result.returncode == 0, result.stderr
    assert packets[0] == b"\x02"  # rlviser-py's Connection
    types, states = packets[1::2], packets[2::2]
    assert types == [b"\x01"] * replay.steps and len(states) == replay.steps  # a GameState type byte, then the state
    goal_steps = {g["step"] for g in replay.goals()}
    for t in sorted({0, replay.steps - 1} | goal_steps):
        tick, rate, mode, pads, cars = STATE_HEADER.unpack_from(states[t])
        assert (tick, rate, mode, pads, cars) == (t, 5.0, 0, 0, 2)  # soccar, 120/24 frames a second, no pads known
        ball = np.frombuffer(states[t], "<f4", 3, BALL_POS_AT)
        np.testing.assert_allclose(ball, replay.ball[t, 0:3], atol=0.01)  # uu, float32
        for i in range(2):  # each car's position is in the packet, as float32 uu
            assert np.asarray(replay.cars[t, i, 0:3], "<f4").tobytes() in states[t]
    g = replay.goals()[0]
    y = np.frombuffer(states[g["step"]], "<f4", 3, BALL_POS_AT)[1]
    assert abs(y) > BACK_WALL_Y
