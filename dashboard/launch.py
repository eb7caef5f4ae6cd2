"""How the dashboard is started: the streamlit invocation that `league dashboard` becomes.

Kept light: importing this module imports neither streamlit nor the app.
"""

from __future__ import annotations

import errno
import importlib.util
import ipaddress
import socket
import sys
from pathlib import Path

from league.errors import LeagueError
from league.files import printable

APP_PATH = Path(__file__).with_name("app.py")
DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"
LOOPBACK_NAMES = frozenset({"localhost"})
NO_LOGIN = "the dashboard has no login"


def is_loopback(address: str) -> bool:
    """Whether `address` reaches this machine only: 127.0.0.0/8, ::1 or `localhost`.

    Decided on the text, not on what a name resolves to, so the rule is the same on every
    machine: any other name (even one of this machine's) counts as reachable from others.
    """
    if address.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def url(address: str, port: int) -> str:
    """The http URL of `address`:`port` (an IPv6 address in brackets)."""
    return f"http://[{address}]:{port}" if ":" in address else f"http://{address}:{port}"


def check_serving(address: str, port: int, *, allow_remote: bool) -> str | None:
    """Check, before streamlit starts, that the dashboard can serve on `address`:`port`.

    One LeagueError sentence for a port outside 1..65535, an empty address, an address that does
    not resolve, an address other machines can reach without `allow_remote` (the dashboard has
    no login), an address that is not this machine's, or a port already in use. The check binds
    and listens on every address the name resolves to, as streamlit (tornado) will, then closes
    them. Returns the warning to print when the dashboard will be reachable from other machines.
    """
    shown = printable(repr(address) if address.strip() != address or " " in address else address)
    if not 1 <= port <= 65535:
        raise LeagueError(f"The port {port} is not a port: choose one from 1 to 65535 with --port.")
    if not address:
        raise LeagueError("The address is empty: give one with --address (127.0.0.1 serves this machine only).")
    try:
        found = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        words = exc.strerror if isinstance(exc, socket.gaierror) and exc.strerror else "not a host name"
        raise LeagueError(f"The address {shown} does not resolve ({words}): give this machine's address or "
                          "name with --address.") from None
    if not is_loopback(address) and not allow_remote:
        raise LeagueError(f"The address {shown} can be reached from other machines, and {NO_LOGIN}: serve on "
                          "127.0.0.1 (the default), or pass --allow-remote to show the league to anyone who can "
                          "reach that address.")
    for family, kind, proto, _, where in dict.fromkeys(found):
        _try_bind(family, kind, proto, where, address, shown, port)
    if is_loopback(address):
        return None
    return (f"Warning: {NO_LOGIN}; anyone who can reach {shown} on port {port} sees the whole league "
            "(its agents, ratings, games and replays).")


def _try_bind(family: int, kind: int, proto: int, where: tuple, address: str, shown: str, port: int) -> None:
    """Bind and listen as tornado does (SO_REUSEADDR; IPv6 sockets IPv6 only), then close."""
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            sock.bind(where)
            sock.listen(1)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise LeagueError(f"Port {port} on {shown} is already in use (another dashboard or server?): "
                                  "choose another with --port.") from None
            if exc.errno == errno.EADDRNOTAVAIL and address.lower() in LOOPBACK_NAMES and family == socket.AF_INET6:
                return  # `localhost` names ::1 on a machine without IPv6: tornado skips it too
            if exc.errno == errno.EADDRNOTAVAIL:
                raise LeagueError(f"The address {shown} is not an address of this machine: give one of its own "
                                  "with --address (127.0.0.1 serves this machine only).") from None
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise LeagueError(f"Port {port} on {shown} needs privileges this user lacks: choose one above "
                                  "1023 with --port.") from None
            raise LeagueError(f"Cannot serve on {shown} port {port}: {exc.strerror}.") from None


def streamlit_command(home_root: Path, port: int, address: str) -> list[str]:
    """The streamlit invocation: headless, no file watching, no usage statistics, the home after `--`.

    A LeagueError when streamlit is not installed.
    """
    if importlib.util.find_spec("streamlit") is None:
        raise LeagueError("The dashboard needs streamlit; install it with `pip install -e '.[dashboard]'`.")
    return [sys.executable, "-m", "streamlit", "run", str(APP_PATH),
            "--server.port", str(port), "--server.address", address, "--server.headless", "true",
            "--server.fileWatcherType", "none", "--server.runOnSave", "false",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer",
            "--", "--home", str(home_root)]
