"""Joining a Ray cluster for the verifier: `connect`, and one-sentence failures.

Ray is optional: `import_ray` raises `RayUnavailable` naming the pip command when it is
missing, and an address nobody listens on fails at once (Ray itself keeps retrying).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

INSTALL = "pip install 'selfplay[ray]'"

# A loopback cluster started by `address="local"`: its processes bind and advertise 127.0.0.1
# (so nothing beyond this machine reaches it), no usage statistics, and no token written to
# the home directory.
LOOPBACK = "127.0.0.1"
LOOPBACK_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}


class RayUnavailable(RuntimeError):
    """Ray is missing or the cluster cannot be reached; the message is one sentence."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"Ray is not installed; install it with {INSTALL}") from None
    return ray


def loopback_only() -> None:
    """Make a cluster this process starts bind and advertise 127.0.0.1 only.

    Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER once, when it is imported, and otherwise
    swaps a loopback node address for the machine's own; so the variable is set before the
    import, and a Ray imported earlier gets the constant it would have read.
    """
    for key, value in LOOPBACK_ENV.items():
        os.environ.setdefault(key, value)
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False


def connect(address: str | None) -> bool:
    """Connect this process to Ray: `"local"` starts a loopback cluster, anything else is a
    cluster address, None joins the cluster this process already belongs to (or the one in
    RAY_ADDRESS). Returns True when this call connected, so the caller should disconnect."""
    if address == "local":
        loopback_only()
    ray = import_ray()
    if ray.is_initialized():
        return False
    _reachable(address)
    try:
        if address == "local":
            ray.init(address="local", include_dashboard=False, log_to_driver=False,
                     _node_ip_address=LOOPBACK)  # fmt: skip
        else:
            ray.init(address=address, log_to_driver=False)
    except Exception as e:  # ConnectionError, ValueError, RuntimeError: all one sentence
        where = f"at {address}" if address else "(no address given)"
        raise RayUnavailable(
            f"cannot connect to the Ray cluster {where}: {first_line(e)}"
        ) from None
    return True


def _reachable(address: str | None) -> None:
    """Fail fast on a `host:port` nobody listens on: Ray itself keeps retrying for minutes."""
    host, _, port = (address or "").rpartition(":")
    if not host or "/" in host or not port.isdigit():
        return  # "local", "auto", "ray://...", or for Ray to read
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise RayUnavailable(
            f"cannot connect to the Ray cluster at {address}: {reason.rstrip('.').lower()}"
        ) from None


def first_line(e: BaseException) -> str:
    """An exception as one short clause."""
    text = str(e).strip()
    return text.splitlines()[0].rstrip(".") if text else type(e).__name__
