"""The zygote: a long-lived process inside the sandbox that forks one fresh test process per row.

Started once per worker by the host (inside bubblewrap when available). It never runs row
code itself; per row it forks a test process that, where the kernel allows, is the first
process of a new PID namespace, so killing it kills everything the row started, setsid or
not. The sandbox's only writable places, /tmp and /dev/shm, are private to this worker (which
grades one row at a time) and wiped after every row, so nothing a row writes survives it.
Requests and responses are length-prefixed JSON on stdin/stdout.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time

from . import harness, osutil

_HEADER = struct.Struct("<I")
MAX_VERDICT_BYTES = 1 << 20
SCRATCH = ("/tmp", "/dev/shm")
PRELOAD = (
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "heapq",
    "bisect",
    "string",
    "typing",
    "dataclasses",
    "json",
    "random",
    "fractions",
    "decimal",
    "statistics",
    "copy",
    "operator",
    "enum",
    "datetime",
    "textwrap",
    "unicodedata",
    "array",
    "cmath",
)


def read_frame(fd: int) -> dict | None:
    head = b""
    while len(head) < 4:
        chunk = os.read(fd, 4 - len(head))
        if not chunk:
            return None
        head += chunk
    (n,) = _HEADER.unpack(head)
    data = bytearray()
    while len(data) < n:
        chunk = os.read(fd, min(1 << 20, n - len(data)))
        if not chunk:
            return None
        data += chunk
    return json.loads(data)


def write_frame(fd: int, obj: dict) -> None:
    data = json.dumps(obj).encode()
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


class Zygote:
    def __init__(self, config: dict):
        self.config = config
        for name in PRELOAD + tuple(config.get("preload", ())):
            try:
                __import__(name)
            except Exception:
                pass
        self.dirty = False
        osutil.set_dumpable(False)
        self.facts = self._probe()
        self.devnull = os.open(os.devnull, os.O_RDWR)
        gc.collect()
        gc.freeze()  # keep the shared heap untouched by the children's collectors

    def _probe(self) -> dict:
        facts = {
            "sandbox": bool(self.config.get("sandboxed")),
            "pid_namespace": False,
            "private_scratch": False,
            "network": True,
            "privileges_dropped": False,
        }
        if facts["sandbox"]:
            osutil.loopback_down()
            facts["network"] = osutil.network_reachable()
            facts["private_scratch"] = self._wipe()
            self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
            if osutil.unshare(osutil.CLONE_NEWPID):
                pid = os.fork()
                if pid == 0:
                    osutil.drop_privileges()
                    os._exit(0 if os.getpid() == 1 and osutil.effective_caps() == 0 else 1)
                osutil.setns(self.own_pidns, osutil.CLONE_NEWPID)
                _, status = os.waitpid(pid, 0)
                facts["pid_namespace"] = facts["privileges_dropped"] = status == 0
        return facts

    @staticmethod
    def _wipe() -> bool:
        """Empty the writable scratch places; False if anything could not be removed."""
        clean = True
        for top in SCRATCH:
            try:
                entries = list(os.scandir(top))
            except OSError:
                return False
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
                except OSError:
                    clean = False
        return clean

    def serve(self) -> None:
        write_frame(1, {"ready": True, "facts": self.facts})
        while not self.dirty:
            req = read_frame(0)
            if req is None:
                return
            write_frame(1, self.grade(req))

    def grade(self, req: dict) -> dict:
        limits = req["limits"]
        start = time.monotonic()
        deadline = start + limits["timeout_s"]
        isolated = self.facts["pid_namespace"]
        scratch = None if isolated else tempfile.mkdtemp(prefix="selfplay-row-")
        r, w = os.pipe()
        if isolated:
            osutil.unshare(osutil.CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            self._child(req, r, w, isolated, scratch)
        if isolated:
            osutil.setns(self.own_pidns, osutil.CLONE_NEWPID)
        os.close(w)
        buf, timed_out = self._collect(r, deadline)
        if timed_out:
            self._kill(pid, isolated)
        _, status = os.waitpid(pid, 0)
        if isolated:
            if not self._wipe():
                # Something the row left could not be removed: this sandbox is no longer
                # clean, so end it; the host starts a fresh one.
                self.dirty = True
        else:
            self._kill(pid, isolated)  # stragglers in the row's process group
            shutil.rmtree(scratch, ignore_errors=True)
        os.close(r)
        return self._verdict(buf, timed_out, status, time.monotonic() - start)

    def _child(self, req, r, w, isolated, scratch) -> None:
        try:
            os.close(r)
            os.dup2(w, 3)
            for fd in (0, 1, 2):
                os.dup2(self.devnull, fd)  # never the host's channel
            osutil.close_fds_from(4)
            if isolated:
                os.chdir("/tmp")
                osutil.drop_privileges()
            else:
                os.setsid()
                os.chdir(scratch)
            osutil.set_dumpable(False)
            lim = req["limits"]
            osutil.set_limits(lim["memory_mb"], lim["file_mb"], lim["max_procs"], lim["timeout_s"])
            # A solution that hangs up must surface as BrokenPipeError, not kill the harness.
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            harness.run(req, 3)
        except BaseException as e:
            try:
                harness.Reporter(3).write(
                    {
                        "v": {
                            "status": "error",
                            "tests_passed": 0,
                            "detail": f"harness error: {e!r}"[:500],
                        }
                    }
                )
            except BaseException:
                pass
        finally:
            os._exit(0)

    def _collect(self, r: int, deadline: float) -> tuple[bytes, bool]:
        buf = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(buf), True
            ready, _, _ = select.select([r], [], [], remaining)
            if not ready:
                return bytes(buf), True
            chunk = os.read(r, 1 << 16)
            if not chunk:
                return bytes(buf), False
            if len(buf) < MAX_VERDICT_BYTES:
                buf += chunk

    def _kill(self, pid: int, isolated: bool) -> None:
        try:
            if isolated:
                os.kill(pid, signal.SIGKILL)  # the namespace dies with its first process
            else:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    @staticmethod
    def _verdict(buf: bytes, timed_out: bool, status: int, duration: float) -> dict:
        passed_so_far, verdict = 0, None
        for line in buf.splitlines():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and isinstance(msg.get("p"), int):
                passed_so_far = msg["p"]
            elif isinstance(msg, dict) and isinstance(msg.get("v"), dict):
                verdict = msg["v"]
        if verdict is None:
            if timed_out:
                verdict = {"status": "timeout", "detail": "time limit exceeded"}
            elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
                verdict = {"status": "timeout", "detail": "CPU time limit exceeded"}
            elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
                verdict = {"status": "memory", "detail": "test process was killed (out of memory)"}
            else:
                verdict = {"status": "error", "detail": "test process ended without a verdict"}
            verdict["tests_passed"] = passed_so_far
        verdict["duration_s"] = duration
        return verdict


def main() -> None:
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Zygote(config).serve()
