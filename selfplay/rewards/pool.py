"""One verifier per process, shared by every reward call in it.

Trainers call reward functions from worker processes (forked, or spawned and handed a
pickled function), so the pool is created lazily on first use in each process and never
pickled. After a fork the child forgets the parent's pool without touching it (its worker
processes belong to the parent) and starts its own on first use.

Settings come from the environment, because trainers construct reward functions
themselves: SELFPLAY_REWARD_WORKERS (default: CPU count), SELFPLAY_REWARD_TIMEOUT
(seconds per row, default 10), SELFPLAY_REWARD_MEMORY_MB (default 1024).
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selfplay.verifier import Verifier

_lock = threading.Lock()
_pools: dict[tuple, Verifier] = {}
_owner = os.getpid()


def _settings(workers: int | None, timeout_s: float | None) -> tuple[int | None, float, int]:
    env_workers = os.environ.get("SELFPLAY_REWARD_WORKERS")
    return (
        workers or (int(env_workers) if env_workers else None),
        timeout_s or float(os.environ.get("SELFPLAY_REWARD_TIMEOUT") or 10.0),
        int(os.environ.get("SELFPLAY_REWARD_MEMORY_MB") or 1024),
    )


def shared_verifier(workers: int | None = None, timeout_s: float | None = None) -> Verifier:
    """The process-wide verifier for these settings, created on first use."""
    global _owner
    key = _settings(workers, timeout_s)
    with _lock:
        if _owner != os.getpid():  # a child that inherited a copy of the table
            _pools.clear()
            _owner = os.getpid()
        pool = _pools.get(key)
        if pool is None:
            from selfplay.verifier import Verifier

            pool = Verifier(workers=key[0], timeout_s=key[1], memory_mb=key[2])
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
    global _lock, _owner
    _lock = threading.Lock()  # another thread may have held it at the fork
    _pools.clear()
    _owner = os.getpid()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(close_shared)
