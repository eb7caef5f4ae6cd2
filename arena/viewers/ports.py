"""Whether a viewer is listening: UDP is connectionless, so we ask the system whether the port is taken."""

from __future__ import annotations

import errno
import socket


def udp_port_taken(host: str, port: int) -> bool:
    """Whether a UDP socket is bound to `host:port` (a viewer listening there): binding it ourselves fails.
    Nothing is sent, so asking costs no packet and no wait."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return True
        raise
    finally:
        probe.close()
    return False
