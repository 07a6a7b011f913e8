"""One verifier per process, shared by every reward call in it.

Trainers call reward functions from worker processes (forked, or spawned and handed a
pickled function), so the pool is created lazily on first use in each process and never
pickled. After a fork the child forgets the parent's pool without touching it (its worker
processes belong to the parent) and starts its own on first use.

Settings come from the environment, because trainers construct reward functions
themselves: SELFPLAY_REWARD_WORKERS (default: CPU count; on Ray, per actor: the node's CPUs),
SELFPLAY_REWARD_TIMEOUT (seconds per row, default 10), SELFPLAY_REWARD_MEMORY_MB (default 1024).

Where it grades: SELFPLAY_RAY_ADDRESS names a Ray cluster (an address, or "local" to start
one on loopback) and the pool is a `RayVerifier` with one actor per node; unset, the pool joins
the cluster this process is already connected to (a Ray worker, as verl's and OpenRLHF's reward
code runs, or a driver that called `ray.init`), so a job grades on every node with no code
change; "off" keeps grading on this machine. Ray is never imported for the check: a process
that has not imported it is not connected. The processes of one Ray job share the actors (one
per node; `RayVerifier(shared=True)`), however many reward workers the trainer runs. A
child forked from a process connected to Ray grades on this machine (a Ray connection does not
survive a fork).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selfplay.verifier import Verifier
    from selfplay.verifier.cluster import RayVerifier

_lock = threading.Lock()
_pools: dict[tuple, Verifier | RayVerifier] = {}
_owner = os.getpid()
_ray_forked = False  # this process is a fork of one connected to Ray
JOINED = "joined"  # the cluster this process is already connected to
OFF = ("off", "none", "0", "false", "no")


def _settings(
    workers: int | None, timeout_s: float | None
) -> tuple[int | None, float, int, str | None, str]:
    env_workers = os.environ.get("SELFPLAY_REWARD_WORKERS")
    return (
        workers or (int(env_workers) if env_workers else None),
        timeout_s or float(os.environ.get("SELFPLAY_REWARD_TIMEOUT") or 10.0),
        int(os.environ.get("SELFPLAY_REWARD_MEMORY_MB") or 1024),
        ray_target(),
        # The same rule as every verifier: the sandbox, unless SELFPLAY_ISOLATION=none.
        os.environ.get("SELFPLAY_ISOLATION") or "sandbox",
    )


def ray_target() -> str | None:
    """The Ray cluster rewards grade on: an address, "local", `JOINED`, or None for this
    machine (see the module's docstring)."""
    address = os.environ.get("SELFPLAY_RAY_ADDRESS", "").strip()
    if address.lower() in OFF or _ray_forked:
        return None
    if address:
        return address
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", lambda: False)():
        return JOINED
    return None


def shared_verifier(
    workers: int | None = None, timeout_s: float | None = None
) -> Verifier | RayVerifier:
    """The process-wide verifier for these settings, created on first use."""
    global _owner
    key = _settings(workers, timeout_s)
    with _lock:
        if _owner != os.getpid():  # a child that inherited a copy of the table
            _pools.clear()
            _owner = os.getpid()
        pool = _pools.get(key)
        if pool is None:
            from selfplay.verifier.factory import make_verifier

            if key[3] is None:
                pool = make_verifier(key[0], key[1], key[2])
            else:
                address = None if key[3] == JOINED else key[3]
                pool = make_verifier(key[0], key[1], key[2], ray=address or "", shared=True)
            _pools[key] = pool
        return pool


def close_shared() -> None:
    """Stop this process's pools (also run at exit)."""
    with _lock:
        if _owner == os.getpid():
            for pool in _pools.values():
                pool.close()
        _pools.clear()


def _after_fork_in_child() -> None:
    global _lock, _owner, _ray_forked
    _lock = threading.Lock()  # another thread may have held it at the fork
    _pools.clear()
    _owner = os.getpid()
    # A Ray connection does not survive a fork: the child's copy looks connected but is not.
    ray = sys.modules.get("ray")
    _ray_forked = _ray_forked or bool(ray is not None and ray.is_initialized())


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(close_shared)
