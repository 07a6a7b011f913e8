"""Host side of one sandboxed worker: the bubblewrap command line, cgroups and the zygote pipe.

`Worker` owns one zygote process. It sends a row, waits for the verdict with a hard deadline
of its own (in case the zygote itself is wedged) and restarts the zygote when it dies.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import struct
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

INSIDE_DIR = Path(__file__).with_name("inside")
MOUNT_POINT = "/opt/selfplay/selfplay_inside"
_HEADER = struct.Struct("<I")
# argv: [paths (JSON), package name, config (JSON)]
_BOOT = (
    "import sys,json,importlib;sys.path[:]=json.loads(sys.argv[1]);"
    "m=importlib.import_module(sys.argv[2]+'.zygote');sys.argv=sys.argv[2:];m.main()"
)
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


class IsolationUnavailable(RuntimeError):
    """Raised with `require_isolation=True` when the sandbox cannot be set up."""


def _python_roots() -> list[str]:
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


def sandbox_sys_path() -> list[str]:
    """The host's import path, less the working directory and anything outside the roots."""
    roots = _python_roots()
    paths = []
    for p in sys.path:
        rp = os.path.realpath(p) if p else ""
        if rp and os.path.isdir(rp) and any(rp == r or rp.startswith(r + "/") for r in roots):
            paths.append(rp)
    return paths


def bwrap_command(python: str, scratch_mb: int = 128) -> list[str]:
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
        # No bubblewrap reaper inside: it would hold the host's pipes in a process that rows
        # could reach through /proc. The zygote is PID 1 and keeps its capabilities, so rows
        # (which drop theirs) cannot open its /proc entries.
        "--as-pid-1",
        "--cap-add",
        "ALL",
    ]
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    for root in _python_roots():
        if not root.startswith("/usr/"):
            cmd += ["--ro-bind", root, root]
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/alternatives"):
        cmd += ["--ro-bind-try", f, f]
    cmd += ["--ro-bind", str(INSIDE_DIR), MOUNT_POINT]
    for name in ("nsswitch.conf", "hosts"):
        cmd += ["--ro-bind", str(INSIDE_DIR / "etc" / name), f"/etc/{name}"]
    size = str(scratch_mb * 1024 * 1024)
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp"]
    cmd += ["--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    cmd += ["--remount-ro", "/"]
    cmd += ["--clearenv"]
    for k, v in SANDBOX_ENV.items():
        cmd += ["--setenv", k, v]
    cmd += ["--chdir", "/tmp", python]
    return cmd


def probe_bwrap() -> str | None:
    """None if bubblewrap can start a sandbox here, else the reason it cannot."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed; install the 'bubblewrap' package"
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


@dataclass
class Worker:
    """One zygote process; not thread-safe (each pool thread owns one)."""

    use_bwrap: bool
    preload: tuple[str, ...] = ()
    cgroup: object | None = None
    scratch_mb: int = 128
    facts: dict = field(default_factory=dict)
    proc: subprocess.Popen | None = None

    def start(self) -> None:
        python = os.path.realpath(sys.executable)
        config = json.dumps({"sandboxed": self.use_bwrap, "preload": list(self.preload)})
        if self.use_bwrap:
            prefix, env = bwrap_command(python, self.scratch_mb), {}
            root, package = os.path.dirname(MOUNT_POINT), os.path.basename(MOUNT_POINT)
        else:
            # Degraded mode: no namespaces, the zygote runs as a plain child process.
            prefix, env = [python], dict(SANDBOX_ENV)
            root, package = str(INSIDE_DIR.parent), INSIDE_DIR.name
        paths = json.dumps([root, *sandbox_sys_path()])
        argv = [*prefix, "-I", "-S", "-B", "-c", _BOOT, paths, package, config]
        if self.cgroup is not None:
            argv = self.cgroup.wrap(argv)
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        hello = self._read(deadline=time.monotonic() + 60)
        if not hello or not hello.get("ready"):
            self.stop()
            raise RuntimeError("the sandbox worker failed to start")
        self.facts = hello["facts"]

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def _read(self, deadline: float) -> dict | None:
        import select

        fd = self.proc.stdout.fileno()
        buf = bytearray()
        need = _HEADER.size
        header_done = False
        while len(buf) < need:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, need - len(buf))
            if not chunk:
                return None
            buf += chunk
            if not header_done and len(buf) == _HEADER.size:
                need += _HEADER.unpack(buf)[0]
                header_done = True
        return json.loads(buf[_HEADER.size :])

    def grade(self, request: dict) -> dict:
        """Send one row, return the zygote's raw verdict; a dead or wedged zygote is replaced
        and the row reported as an error."""
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self.start()
        data = json.dumps(request).encode()
        try:
            self.proc.stdin.write(_HEADER.pack(len(data)) + data)
            self.proc.stdin.flush()
            # The zygote enforces the time limit; this deadline only catches a wedged zygote.
            reply = self._read(time.monotonic() + request["limits"]["timeout_s"] + 30)
        except (BrokenPipeError, OSError, ValueError):
            reply = None
        if reply is None:
            self.stop()
            return {
                "status": "error",
                "tests_passed": 0,
                "duration_s": 0.0,
                "detail": "the sandbox worker died; it was restarted",
            }
        return reply
