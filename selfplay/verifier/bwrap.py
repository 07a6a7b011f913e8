"""The bubblewrap sandbox a worker's zygote runs in: its command line, the Python installation
it needs read-only, and whether bubblewrap works here at all."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from .readable import Readable, readable

INSIDE_DIR = Path(__file__).with_name("inside")
MOUNT_POINT = "/opt/selfplay/selfplay_inside"
SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    # Numerical libraries start one thread per core on import; one is enough here and keeps
    # the per-row process limit meaningful on many-core machines.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


# Places the sandbox mounts over: a Python installation below one of them (a virtual
# environment in /tmp, say) is bound elsewhere, at ROOTS_MOUNT/<n>.
_COVERED = ("/tmp", "/dev", "/proc", "/run", "/opt/selfplay")
ROOTS_MOUNT = "/opt/selfplay/roots"
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives")
# The top-level directories that merged-/usr systems make links (/lib -> usr/lib).
_TOPS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
SNAPSHOTS = "/opt/selfplay/snapshots"


def python_roots() -> list[str]:
    """Directories the sandbox needs read-only for the interpreter and installed packages."""
    roots = {sys.base_prefix, sys.prefix, sysconfig.get_paths()["stdlib"]}
    roots.update(site.getsitepackages())
    user_site = site.getusersitepackages()
    if isinstance(user_site, str) and os.path.isdir(user_site):
        roots.add(user_site)
    real = {os.path.realpath(r) for r in roots if os.path.isdir(r)}
    real.add(os.path.dirname(os.path.realpath(sys.executable)))
    # Drop nested duplicates: binding a parent already exposes its children.
    ordered = sorted(real)
    return [r for i, r in enumerate(ordered) if not any(r.startswith(p + "/") for p in ordered[:i])]


def root_mounts() -> list[tuple[str, str]]:
    """(host path, path inside the sandbox) of every Python root."""
    out = []
    for root in python_roots():
        covered = any(root == c or root.startswith(c + "/") for c in _COVERED)
        out.append((root, f"{ROOTS_MOUNT}/{len(out)}" if covered else root))
    return out


def to_sandbox_path(path: str, mounts: list[tuple[str, str]]) -> str | None:
    for host, inside in mounts:
        if path == host or path.startswith(host + "/"):
            return inside + path[len(host) :]
    return None


def sandbox_sys_path(mounts: list[tuple[str, str]] | None = None) -> list[str]:
    """The host's import path as the sandbox sees it, less the working directory and anything
    outside the Python roots."""
    mounts = root_mounts() if mounts is None else mounts
    paths = []
    for p in sys.path:
        rp = os.path.realpath(p) if p else ""
        inside = to_sandbox_path(rp, mounts) if rp and os.path.isdir(rp) else None
        if inside is not None:
            paths.append(inside)
    return paths


def sandbox_readable(packages: tuple[str, ...]) -> Readable:
    """What a row may read with these packages, the sandbox's own files included."""
    found = readable(packages)
    found.also = [str(INSIDE_DIR), *(f for f in ETC_FILES if os.path.exists(f))]
    return found


def readable_binds(readable: Readable, mounts: list[tuple[str, str]]) -> list[str]:
    """Bind what a row may read (`readable`), and nothing else of the host's files. Parents
    come before what is mounted inside them; the standard library's hidden parts are empty
    read-only directories (made read-only last: a package bound inside one needs its mount
    point made first)."""
    ops, links, hidden = [], [], []
    for path in readable.paths:
        real = os.path.realpath(path)
        ops.append((to_sandbox_path(real, mounts) or real, ["--ro-bind", real]))
        logical = _through_tops(path)
        if logical != real and to_sandbox_path(real, mounts) is None:
            links += ["--symlink", real, logical]  # libc.so.6 -> libc-2.31.so, say
    for path in readable.hidden:
        inside = to_sandbox_path(path, mounts) or path
        ops.append((inside, ["--size", "4096", "--tmpfs"]))
        hidden += ["--remount-ro", inside]
    cmd = []
    for inside, op in sorted(ops):
        cmd += [*op, inside]
    return cmd + links + hidden


def _through_tops(path: str) -> str:
    """`path` with a top-level link (/lib -> usr/lib) followed, as the sandbox has them."""
    parts = path.split("/", 2)
    if len(parts) == 3 and f"/{parts[1]}" in _TOPS and os.path.islink(f"/{parts[1]}"):
        return os.path.join(os.path.realpath(f"/{parts[1]}"), parts[2])
    return path


def bwrap_command(
    python: str, mounts: list[tuple[str, str]], readable: Readable, scratch_mb: int = 128
) -> list[str]:
    cmd = [
        "bwrap",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        # No bubblewrap reaper inside: it would hold the host's channel in a process that rows
        # could reach through /proc. The zygote is PID 1 and keeps its capabilities, so rows
        # (which drop theirs) cannot open its /proc entries, and it can give each row its own
        # mount, IPC and PID namespaces.
        "--as-pid-1",
        "--cap-add",
        "ALL",
    ]
    for top in _TOPS:
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
    for f in ETC_FILES:
        cmd += ["--ro-bind-try", f, f]
    for name in ("nsswitch.conf", "hosts"):
        cmd += ["--ro-bind", str(INSIDE_DIR / "etc" / name), f"/etc/{name}"]
    size = str(scratch_mb * 1024 * 1024)
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp"]
    cmd += ["--size", size, "--tmpfs", "/dev/shm", "--size", size, "--tmpfs", "/run/selfplay"]
    cmd += ["--ro-bind", str(INSIDE_DIR), MOUNT_POINT]
    # Where the zygote keeps the still copies of /proc's kernel-wide counters (`osutil`).
    cmd += ["--size", "4194304", "--tmpfs", SNAPSHOTS]
    cmd += readable_binds(readable, mounts)
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/"]
    cmd += ["--clearenv"]
    for k, v in SANDBOX_ENV.items():
        cmd += ["--setenv", k, v]
    cmd += ["--chdir", "/tmp", to_sandbox_path(python, mounts) or python]
    return cmd


def probe_bwrap(tries: int = 3) -> str | None:
    """None if bubblewrap can start a sandbox here, else the reason it cannot. A failure is
    tried again (a loaded machine can fail one namespace creation, or time out): only one
    that persists is reported."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    for attempt in range(tries):
        reason = _probe_once()
        if reason is None or attempt == tries - 1:
            return reason
        time.sleep(0.5 * (attempt + 1))
    return None


def _probe_once() -> str | None:
    try:
        res = subprocess.run(
            [
                "bwrap",
                "--unshare-user",
                "--unshare-pid",
                "--unshare-net",
                "--cap-add",
                "ALL",
                "--ro-bind",
                "/",
                "/",
                "--",
                "true",
            ],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap failed to start: {e}"
    if res.returncode != 0:
        return (
            "bubblewrap cannot create namespaces here: "
            + res.stderr.decode(errors="replace").strip()
        )
    return None
