"""The Ray backend's edges, on a real local Ray instance and the real `league` command: the local
instance listens on the loopback interface only, and a bad or unreachable --address ends in one
sentence and exit code 2 within seconds."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from league.cli import app
from league.registry import Registry

pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}
SECONDS_TO_FAIL = 20  # a bad address must fail within this (interpreter start and imports included)


def listening_sockets(process: psutil.Process) -> list[tuple[str, str, int]]:
    """(process name, address, port) of every TCP socket `process` and its descendants listen on."""
    found = []
    for proc in [process, *process.children(recursive=True)]:
        try:
            for conn in proc.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    found.append((proc.name(), conn.laddr.ip, conn.laddr.port))
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.mark.slow  # starts a local Ray instance: CI runs it after the default suite
def test_the_local_ray_instance_listens_on_loopback_only(home):
    import ray

    from arena.engine.game import GameSpec
    from arena.game_pool import GamePool
    from league.registry import Registry
    from league.schedule import round_robin

    reg = Registry.open(home.db_path)
    agents = {name: reg.agent_store.get(name) for name in ("rule", "random")}
    reg.close()
    todo = round_robin(list(agents), 2, seed=3)
    spec = GameSpec(team_size=1, tick_skip=8, mode="timed", game_seconds=2.0)
    pool = GamePool(agents, spec, home.root, "replays/tournament-1", {"tournament_id": 1}, 1, 1, "again", "ray")
    try:
        next(pool.play(todo))  # the instance is up, and has played a game through it
        gcs_host = ray.get_runtime_context().gcs_address.rsplit(":", 1)[0]
        sockets = listening_sockets(psutil.Process())
    finally:
        pool.close()  # stops the instance it started
    assert not ray.is_initialized()
    assert gcs_host == "127.0.0.1"
    assert sockets, "found none of the Ray processes' listening sockets"
    assert {ip for _, ip, _ in sockets} <= LOOPBACK, sockets


@pytest.fixture(scope="module")
def league_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("ray") / "league"
    result = CliRunner().invoke(app, ["init", "--home", str(home)])
    assert result.exit_code == 0, result.output
    return home


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens on it once the socket is closed


@pytest.mark.parametrize("address", ["not a url", "http://10.0.0.5:6379", "10.0.0.5:99999"])
def test_a_malformed_ray_address_is_one_sentence_and_stores_nothing(league_home, address):
    result = CliRunner().invoke(app, ["tournament", "--games", "2", "--placement", "ray", "--address", address,
                                      "--home", str(league_home)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "is not a Ray address" in lines[0], result.stderr
    assert Registry.open(league_home / "league.db", readonly=True).tournament_store.all() == []


@pytest.mark.slow  # a real `league` process each, timed from its start: CI runs it after the default suite
@pytest.mark.parametrize("address, message", [
    ("127.0.0.1:CLOSED", "Cannot reach a Ray cluster at 127.0.0.1:"),
    ("10.255.255.1:6379", "Cannot reach a Ray cluster at 10.255.255.1:6379"),
])
def test_a_bad_or_unreachable_ray_address_is_one_sentence_within_seconds(league_home, address, message):
    address = address.replace("CLOSED", str(closed_port()))
    env = {k: v for k, v in os.environ.items() if k not in ("LEAGUE_HOME", "RAY_ADDRESS")}
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "league.cli", "tournament", "--games", "2", "--placement", "ray",
                             "--address", address, "--home", str(league_home)],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    took = time.monotonic() - start
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert message in lines[0], lines[0]
    assert took < SECONDS_TO_FAIL, f"took {took:.1f} s"
    assert Registry.open(league_home / "league.db", readonly=True).tournament_store.all() == []  # nothing stored for it
