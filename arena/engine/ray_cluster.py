"""Ray for our worker pools (arena.engine.pool): a cluster joined at an address checked first, or a
local instance whose servers listen on 127.0.0.1 only; either let go when the work ends."""

from __future__ import annotations

import contextlib
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from league.errors import LeagueError

LOOPBACK = "127.0.0.1"  # a local instance serves this machine only
# How long a cluster address has to answer: Ray itself retries a wrong one for minutes, or forever.
CONNECT_TIMEOUT_SECONDS = 5.0
# --address: host:port (a head node's GCS), ray://host:port (Ray Client); the host a name, IPv4 or [IPv6].
ADDRESS_PATTERN = re.compile(r"(?P<client>ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})")
# Every Ray GCS serves this gRPC method (it is how ray.init learns the cluster's id), so an answer
# to it, or a refusal for want of Ray's auth token, tells a GCS from whatever else holds the port.
GCS_PROBE_METHOD = "/ray.rpc.NodeInfoGcsService/GetClusterId"


def check_address(address: str) -> None:
    """Refuse, in one sentence and within about CONNECT_TIMEOUT_SECONDS, an --address that is
    malformed or where no Ray cluster answers (`auto` is left to Ray, which says so at once)."""
    if address == "auto":
        return
    match = ADDRESS_PATTERN.fullmatch(address)
    if not match or not 1 <= int(match["port"]) <= 65535:
        raise LeagueError(f"{address!r} is not a Ray address; give the head node's host:port (e.g. 10.0.0.5:6379), "
                          "ray://host:port for Ray Client, or auto.")
    host, port = match["host"].strip("[]"), int(match["port"])
    if match["client"] or os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        _require_open_port(address, host, port)  # Ray Client and TLS have handshakes of their own
    else:
        _require_gcs(address, host, port)


def _require_open_port(address: str, host: str, port: int) -> None:
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS).close()
    except OSError as exc:
        reason = (f"no answer within {CONNECT_TIMEOUT_SECONDS:g} s" if isinstance(exc, TimeoutError)
                  else (exc.strerror or str(exc)).lower())
        raise LeagueError(f"Cannot reach a Ray cluster at {address}: {reason}.") from None


def _require_gcs(address: str, host: str, port: int) -> None:
    import grpc  # Ray's own dependency

    with grpc.insecure_channel(f"[{host}]:{port}" if ":" in host else f"{host}:{port}") as channel:
        probe = channel.unary_unary(GCS_PROBE_METHOD, request_serializer=bytes, response_deserializer=bytes)
        try:
            probe(b"", timeout=CONNECT_TIMEOUT_SECONDS)  # b"": the empty request message
            return
        except grpc.RpcError as exc:
            code = exc.code()
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return  # a GCS asking for Ray's token, which ray.init presents
    reason = {
        grpc.StatusCode.DEADLINE_EXCEEDED: f"no answer within {CONNECT_TIMEOUT_SECONDS:g} s",
        grpc.StatusCode.UNAVAILABLE: "nothing answers there (an unknown host, or a closed port)",
    }.get(code, "something answers there, but not a Ray cluster")
    raise LeagueError(f"Cannot reach a Ray cluster at {address}: {reason}; is its head node up, and is this its "
                      "GCS port (6379 unless `ray start --port` chose another)?")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0].rstrip(".") if lines else type(exc).__name__


def _start_local_instance(ray: Any, workers: int) -> None:
    """Start a Ray instance on this machine whose servers listen on the loopback interface only.

    Ray binds its servers (GCS, raylet, workers, agents) to the node's IP, and ray.init turns a
    loopback `_node_ip_address` back into the machine's network address, except where Ray runs
    single-machine (macOS and Windows, by its ENABLE_RAY_CLUSTER switch, read from
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER once at import). The switch is held off while the instance
    starts, so it is started single-machine; tests/test_ray_hardening.py checks the sockets.
    """
    try:
        # address="local": a new instance even where `ray start` runs a cluster on this machine (which
        # ray.init would otherwise join).
        with _single_machine():
            ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
                     _node_ip_address=LOOPBACK)
    except Exception as exc:  # Ray's own failures (no room in /tmp, a port taken): not a bug of ours
        raise LeagueError(f"Cannot start a local Ray instance: {_first_line(exc)}.") from None


@contextmanager
def _single_machine() -> Iterator[None]:
    """Ray's single-machine switch held on: a loopback address stays loopback (started or joined)."""
    from ray._private import ray_constants

    clusters = getattr(ray_constants, "ENABLE_RAY_CLUSTER", True)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = clusters


@contextmanager
def ray_session(workers: int, address: str | None) -> Iterator[Any]:
    """Ray, connected to the cluster at `address` or to a local instance started here; either is
    let go on leaving. A Ray this process has already initialised is used as it is."""
    try:
        import ray
    except ImportError:
        raise LeagueError("The Ray backend needs Ray: pip install 'rl-league[ray]'.") from None
    if ray.is_initialized():
        yield ray
        return
    if address:
        check_address(address)
        loopback = (match := ADDRESS_PATTERN.fullmatch(address)) is not None and match["host"] == LOOPBACK
        try:  # a local instance of another process of ours (a league role's learner joins the command's)
            with _single_machine() if loopback else contextlib.nullcontext():
                ray.init(address=address, log_to_driver=False)
        except Exception as exc:  # what ray.init raises is about the cluster (ConnectionError, RuntimeError, ...)
            raise LeagueError(f"Cannot connect to the Ray cluster at {address}: {_first_line(exc)}.") from None
    else:
        _start_local_instance(ray, workers)
    try:
        yield ray
    finally:
        ray.shutdown()
