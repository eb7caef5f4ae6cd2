"""`league dashboard`'s address and port, checked before streamlit starts (issue 37, item 7).

The command becomes streamlit with os.execv; the tests that get that far replace os.execv, so
nothing is started and the pytest process is never replaced.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from dashboard.launch import check_serving, is_loopback
from league.errors import LeagueError
from dashboard_fixture import build_empty_league


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return build_empty_league(tmp_path_factory.mktemp("serve") / "league").root


@pytest.fixture
def launched(monkeypatch):
    """The command streamlit would have been started with (none: not started)."""
    calls: list[list[str]] = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: calls.append(list(argv)))
    return calls


@pytest.fixture
def held_port():
    """A port on 127.0.0.1 that a listening socket of this test holds."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dashboard(home, *args: str):
    from league.cli import app

    return CliRunner().invoke(app, ["dashboard", "--home", str(home), *args])


def one_sentence(result) -> str:
    text = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and text.endswith("."), result.output
    return text


def test_a_port_in_use_is_one_sentence_before_streamlit_starts(home, held_port):
    # Before: streamlit started, printed its own "Port N is not available" and exited 1.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-m", "league.cli", "dashboard", "--home", str(home),
                           "--port", str(held_port)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2, (done.stdout, done.stderr)
    message = " ".join(done.stderr.split())
    assert f"Port {held_port} on 127.0.0.1 is already in use" in message and "--port" in message
    assert "not available" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_a_port_in_use_through_the_runner(home, held_port, launched):
    text = one_sentence(dashboard(home, "--port", str(held_port)))
    assert f"Port {held_port}" in text and "--port" in text and not launched


def test_an_address_that_does_not_resolve(home, launched):
    # Before: a socket.gaierror traceback.
    text = one_sentence(dashboard(home, "--address", "evil host", "--port", str(free_port())))
    assert "'evil host' does not resolve" in text and "gaierror" not in text and not launched


def test_an_address_of_another_machine_is_refused(home, launched):
    # 192.0.2.1 (TEST-NET-1) is nobody's address: binding it fails.
    text = one_sentence(dashboard(home, "--address", "192.0.2.1", "--allow-remote", "--port", str(free_port())))
    assert "192.0.2.1 is not an address of this machine" in text and not launched


def test_every_interface_needs_allow_remote(home, launched):
    # Before: the dashboard, which has no login, served other machines without a word.
    text = one_sentence(dashboard(home, "--address", "0.0.0.0", "--port", str(free_port())))
    assert "no login" in text and "--allow-remote" in text and not launched


def test_allow_remote_serves_every_interface_with_a_warning(home, launched):
    port = free_port()
    result = dashboard(home, "--address", "0.0.0.0", "--allow-remote", "--port", str(port))
    assert result.exit_code == 0, result.output
    [command] = launched
    assert command[command.index("--server.address") + 1] == "0.0.0.0"
    assert command[command.index("--server.port") + 1] == str(port)
    text = " ".join(result.output.split())
    assert "no login" in text and "anyone who can reach 0.0.0.0" in text


def test_loopback_addresses_need_no_flag(home, launched):
    assert dashboard(home, "--port", str(free_port())).exit_code == 0
    assert dashboard(home, "--address", "localhost", "--port", str(free_port())).exit_code == 0
    assert dashboard(home, "--address", "127.0.0.2", "--port", str(free_port())).exit_code == 0
    assert len(launched) == 3


def test_help_says_there_is_no_login():
    from league.cli import app

    text = " ".join(CliRunner().invoke(app, ["dashboard", "--help"], terminal_width=200).output.split())
    assert "--allow-remote" in text and "no login" in text


@pytest.mark.parametrize("address, loopback", [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("localhost", True), ("LocalHost", True),
    ("0.0.0.0", False), ("::", False), ("", False), ("10.0.0.1", False), ("myhost", False),
    ("::ffff:10.0.0.1", False), ("128.0.0.1", False),
])
def test_is_loopback(address, loopback):
    assert is_loopback(address) is loopback


@pytest.mark.parametrize("port", [0, -1, 65536])
def test_a_port_out_of_range_is_refused(port):
    with pytest.raises(LeagueError, match="1 to 65535"):
        check_serving("127.0.0.1", port, allow_remote=False)


def test_an_empty_address_is_refused():
    with pytest.raises(LeagueError, match="empty"):
        check_serving("", free_port(), allow_remote=True)


def test_check_serving_leaves_the_port_free():
    port = free_port()
    assert check_serving("127.0.0.1", port, allow_remote=False) is None
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # closed again: streamlit can bind it
