"""Per-worker cgroups: a pids limit (fork and thread bombs) and a memory limit (backstop).

Worker cgroups are made *beneath the caller's own cgroup*, never at the root of a hierarchy:
the caller's limits (a container's, a batch job's) keep applying to everything the sandbox
runs, and a row cannot ask for more memory than the caller has (`memory_ceiling_bytes`).

cgroup v1 (separate `pids` and `memory` hierarchies) and v2 (one unified hierarchy) are both
supported. On v2 a cgroup with processes cannot hand controllers to children, so where the
caller's cgroup still holds processes the caller is moved into a `selfplay-<pid>-main` leaf
beside the workers first (what `systemd-run --scope` does). When nothing is writable the
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
_UNLIMITED = 1 << 62


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


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


def _own_cgroups() -> dict[str, str]:
    """controller (or '' for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    text = _read("/proc/self/cgroup") or ""
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2].lstrip("/")
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def v1_base(controller: str) -> str | None:
    """The caller's cgroup directory in a v1 hierarchy, if that hierarchy is mounted."""
    root = os.path.join(ROOT, controller)
    path = _own_cgroups().get(controller)
    if (
        path is None
        or not os.path.isdir(root)
        or os.path.exists(os.path.join(ROOT, "cgroup.controllers"))
    ):
        return None
    return os.path.normpath(os.path.join(root, path))


def v2_base() -> str | None:
    if not os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
        return None
    path = _own_cgroups().get("")
    return None if path is None else os.path.normpath(os.path.join(ROOT, path))


def _limit_up(directory: str, stop: str, name: str) -> int:
    """The smallest `name` limit from `directory` up to `stop` (v1 and v2 files alike)."""
    best = _UNLIMITED
    d = directory
    while d.startswith(stop):
        value = _read(os.path.join(d, name))
        if value and value != "max":
            try:
                best = min(best, int(value))
            except ValueError:
                pass
        if d == stop:
            break
        d = os.path.dirname(d)
    return best


def memory_ceiling_bytes() -> int:
    """What the caller may use at most: the machine's memory and its own cgroup's limit."""
    total = _UNLIMITED
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            total = int(line.split()[1]) * 1024
    base = v1_base("memory")
    if base is not None:
        total = min(total, _limit_up(base, os.path.join(ROOT, "memory"), "memory.limit_in_bytes"))
    else:
        base = v2_base()
        if base is not None:
            total = min(total, _limit_up(base, ROOT, "memory.max"))
    return total


def sweep_stale() -> None:
    """Remove empty worker cgroups left by selfplay processes that died without closing."""
    roots = [v1_base("pids"), v1_base("memory"), v2_base()]
    roots += [os.path.join(ROOT, "pids"), os.path.join(ROOT, "memory")]  # older releases
    for root in {r for r in roots if r}:
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


def _v2_delegate(base: str) -> str | None:
    """Make `base` able to give pids and memory to child cgroups; None on success, else why."""
    control = _read(os.path.join(base, "cgroup.subtree_control")) or ""
    if {"pids", "memory"} <= set(control.split()):
        return None
    available = set((_read(os.path.join(base, "cgroup.controllers")) or "").split())
    if "pids" not in available:
        return "cgroup v2 offers no pids controller to this process"
    wanted = " ".join(f"+{c}" for c in ("pids", "memory") if c in available)
    if _write(os.path.join(base, "cgroup.subtree_control"), wanted):
        return None
    # "No internal processes": move this process into a leaf first, then delegate.
    leaf = os.path.join(base, f"selfplay-{os.getpid()}-main")
    try:
        os.makedirs(leaf, exist_ok=True)
    except OSError as e:
        return f"cgroup v2 is not delegated to this user ({e.strerror})"
    if not _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid())):
        return "cgroup v2: this process could not be moved into a leaf cgroup"
    if _write(os.path.join(base, "cgroup.subtree_control"), wanted):
        return None
    return "cgroup v2: other processes share this cgroup, so it cannot delegate controllers"


def create(max_procs: int, memory_bytes: int) -> tuple[WorkerCgroup | None, str]:
    """Make one worker's cgroups; returns (group or None, a description for the report)."""
    name = f"selfplay-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    memory_bytes = min(memory_bytes, memory_ceiling_bytes())
    pids_base, mem_base = v1_base("pids"), v1_base("memory")
    if pids_base is not None:
        group = WorkerCgroup(version=1)
        for base, settings in (
            (pids_base, {"pids.max": str(max_procs)}),
            (mem_base, {"memory.limit_in_bytes": str(memory_bytes)}),
        ):
            if base is None or not os.access(base, os.W_OK):
                continue
            d = os.path.join(base, name)
            try:
                os.mkdir(d)
            except OSError:
                continue
            if all(_write(os.path.join(d, k), v) for k, v in settings.items()):
                group.dirs.append(d)
            else:
                os.rmdir(d)
        if group.dirs:
            return group, "cgroup v1 beneath this process's own: " + ", ".join(
                d.split("/")[4] for d in group.dirs
            )
        return None, "cgroup v1 is not writable beneath this process's own cgroup"
    base = v2_base()
    if base is None:
        return None, "no cgroup hierarchy"
    problem = _v2_delegate(base)
    if problem:
        return None, problem
    d = os.path.join(base, name)
    try:
        os.mkdir(d)
    except OSError as e:
        return None, f"cgroup v2 is not delegated to this user ({e.strerror})"
    if _write(os.path.join(d, "pids.max"), str(max_procs)):
        _write(os.path.join(d, "memory.max"), str(memory_bytes))
        return WorkerCgroup([d], 2), "cgroup v2 beneath this process's own: pids, memory"
    os.rmdir(d)
    return None, "cgroup v2 has no pids controller enabled for this user"


def set_memory(group: WorkerCgroup, memory_bytes: int) -> None:
    """Raise or lower a worker's memory backstop (for rows with their own memory limit)."""
    memory_bytes = min(memory_bytes, memory_ceiling_bytes())
    for d in group.dirs:
        if "/memory/" in d or group.version == 2:
            _write(
                os.path.join(d, "memory.limit_in_bytes" if group.version == 1 else "memory.max"),
                str(memory_bytes),
            )
