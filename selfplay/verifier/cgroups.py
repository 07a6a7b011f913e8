"""Per-worker cgroups: a pids limit (fork and thread bombs) and a memory limit (backstop).

cgroup v1 (separate `pids` and `memory` hierarchies) and v2 (one unified hierarchy, usable
where the current cgroup is delegated to us) are both supported. When neither is writable the
verifier still runs, and says so: rlimits and the PID namespace remain, but a fork bomb is then
only bounded by the row's time limit.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from dataclasses import dataclass, field

ROOT = "/sys/fs/cgroup"


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


@dataclass
class WorkerCgroup:
    """The cgroup directories of one worker; `wrap` makes a command start inside them."""

    dirs: list[str] = field(default_factory=list)
    version: int = 0

    def wrap(self, argv: list[str]) -> list[str]:
        joins = " && ".join(f"echo $$ > {shlex.quote(d)}/cgroup.procs" for d in self.dirs)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "sh", *argv]

    def remove(self) -> None:
        # The sandbox's last processes may still be exiting when the worker is stopped.
        for d in self.dirs:
            for _ in range(250):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _v2_base() -> str | None:
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return os.path.join(ROOT, line[3:].strip().lstrip("/"))
    except OSError:
        return None
    return None


def sweep_stale() -> None:
    """Remove empty worker cgroups left by selfplay processes that died without closing."""
    for root in (os.path.join(ROOT, "pids"), os.path.join(ROOT, "memory"), _v2_base() or ""):
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) != 3 or parts[0] != "selfplay" or not parts[1].isdigit():
                continue
            if os.path.exists(f"/proc/{parts[1]}"):
                continue  # its owner is alive
            try:
                os.rmdir(os.path.join(root, name))
            except OSError:
                pass  # still has processes: leave it


def create(max_procs: int, memory_bytes: int) -> tuple[WorkerCgroup | None, str]:
    """Make one worker's cgroups; returns (group or None, a description for the report)."""
    name = f"selfplay-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    pids_root, mem_root = os.path.join(ROOT, "pids"), os.path.join(ROOT, "memory")
    if os.path.isdir(pids_root) and os.access(pids_root, os.W_OK):
        group = WorkerCgroup(version=1)
        for root, settings in (
            (pids_root, {"pids.max": str(max_procs)}),
            (mem_root, {"memory.limit_in_bytes": str(memory_bytes)}),
        ):
            d = os.path.join(root, name)
            try:
                os.mkdir(d)
            except OSError:
                continue
            if all(_write(os.path.join(d, k), v) for k, v in settings.items()):
                group.dirs.append(d)
            else:
                os.rmdir(d)
        if group.dirs:
            return group, "cgroup v1: " + ", ".join(
                os.path.basename(os.path.dirname(d)) for d in group.dirs
            )
    base = _v2_base()
    if base and os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
        d = os.path.join(base, name)
        try:
            os.mkdir(d)
        except OSError as e:
            return None, f"cgroup v2 is not delegated to this user ({e.strerror})"
        ok = _write(os.path.join(d, "pids.max"), str(max_procs))
        _write(os.path.join(d, "memory.max"), str(memory_bytes))
        if ok:
            return WorkerCgroup([d], 2), "cgroup v2: pids, memory"
        os.rmdir(d)
        return None, "cgroup v2 has no pids controller enabled for this user"
    return None, "no writable cgroup hierarchy"


def set_memory(group: WorkerCgroup, memory_bytes: int) -> None:
    """Raise or lower a worker's memory backstop (for rows with their own memory limit)."""
    for d in group.dirs:
        if "/memory/" in d or group.version == 2:
            _write(
                os.path.join(d, "memory.limit_in_bytes" if group.version == 1 else "memory.max"),
                str(memory_bytes),
            )
