"""The viewers handed hostile input (issue 56, items 3 and 7): a viewer port out of range is one sentence,
and `--viewer rlviser` never starts a program from the folder the command runs in (rlviser-py starts
`./rlviser` on its first render when no process named rlviser runs). Real UDP sockets, real rlviser-py,
a real planted program."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.replay import write_replay
from league.cli import app
from dashboard_fixture import synthetic_replay
from test_watch import CLIENT_PORT, RLVISER_PORT, ports_free

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("viewers") / "game.replay"
    write_replay(path, synthetic_replay(3, "rule", "atba", 1, 0, 0, 2.0))
    return path


@pytest.mark.parametrize("port", ["-1", "65536", "1e20", "0", "99999999999999999999999", "nine"])
@pytest.mark.parametrize("command", ["replay", "watch"])
def test_a_viewer_port_out_of_range_is_one_sentence(command, port, replay_file, home):
    args = (["replay", "play", str(replay_file)] if command == "replay" else
            ["watch", "rule", "atba", "--home", str(home.root)])
    result = runner.invoke(app, [*args, "--viewer", "rocketsimvis", f"--viewer-port={port}"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"Error: --viewer-port must be a UDP port from 1 to 65535, not {port!r}."], result.output


def planted(folder: Path) -> Path:
    """An executable `rlviser` in `folder` that leaves a marker when run; the marker's path."""
    marker = folder / "planted-program-ran"
    program = folder / "rlviser"
    program.write_text(f"#!/bin/sh\necho ran > '{marker}'\n")
    program.chmod(0o755)
    return marker


def rlviser_bound():
    """A UDP socket on RLViser's port, held by this test (a program not named rlviser)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", RLVISER_PORT))
    return sock


def run_python(code: str, args, cwd: Path) -> subprocess.CompletedProcess:
    """rlviser-py keeps one socket per process (its ports are fixed): each run is a process of its own."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


LEAGUE = "import sys; from league.cli import main; sys.argv = ['league'] + sys.argv[1:]; main()"


@pytest.fixture
def rlviser_ports():
    pytest.importorskip("rlviser_py")
    if not ports_free(RLVISER_PORT, CLIENT_PORT):
        pytest.skip("RLViser's or rlviser-py's port is taken here")


@pytest.mark.usefixtures("rlviser_port_lock")
def test_rlviser_port_held_by_another_program_starts_nothing_from_the_working_folder(rlviser_ports, replay_file,
                                                                                      tmp_path):
    marker = planted(tmp_path)
    sock = rlviser_bound()
    try:
        result = run_python(LEAGUE, ["replay", "play", replay_file, "--viewer", "rlviser", "--speed", 0], tmp_path)
    finally:
        sock.close()
    time.sleep(0.5)  # a program started by the run would have written its marker by now
    assert not marker.exists(), "the planted ./rlviser ran"
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "no process named rlviser" in line and "45243" in line, line


@pytest.mark.usefixtures("rlviser_port_lock")
def test_rlviser_gone_before_the_first_frame_starts_nothing_from_the_working_folder(rlviser_ports, replay_file,
                                                                                    tmp_path):
    """RLViser checked running when the viewer opens, then gone before its first frame: rlviser-py's first
    render would start ./rlviser; it is called from an empty folder of its own, so the planted one never runs."""
    marker = planted(tmp_path)
    fake = tmp_path / "bin" / "rlviser"  # a process named rlviser, as RLViser's is
    fake.parent.mkdir()
    shutil.copy("/bin/sleep", fake)
    process = subprocess.Popen([fake, "60"])
    code = """import os, sys
from arena.replay import read_replay
from arena.viewers.frame import replay_frames
from arena.viewers.rlviser import Rlviser
viewer = Rlviser()
print("open", flush=True)
sys.stdin.readline()  # RLViser is gone now
for frame in replay_frames(read_replay(sys.argv[1])):
    viewer.send(frame)
print(os.getcwd())
"""
    sock = rlviser_bound()
    try:
        run = subprocess.Popen([sys.executable, "-c", code, str(replay_file)], cwd=tmp_path, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
        opened = run.stdout.readline()
        process.kill()
        process.wait()  # reaped: no process named rlviser is left, not even a zombie
        out, err = run.communicate("go\n", timeout=120)
    finally:
        sock.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert opened == "open\n", err
    time.sleep(0.5)  # a program started by the run would have written its marker by now
    assert not marker.exists(), "the planted ./rlviser ran"
    assert run.returncode == 0, err
    assert out.strip() == str(tmp_path)  # the working folder is given back
