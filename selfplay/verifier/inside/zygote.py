"""The zygote: a long-lived process inside the sandbox that forks one test process per row.

Started once per worker by the host (inside bubblewrap when available). It never reads a
row: the host hands it, per row, a small control message (the limits) and two descriptors,
the row (a memfd the host wrote) and the verdict (a memfd the test process writes), which it
passes to the test process unread. Its memory therefore never holds a row's program, tests,
outputs or verdict, and neither does anything forked from it.

Per row, where the kernel allows, the test process is the first process of a new PID namespace
(killing it kills everything the row started, setsid or not) and gives itself a new IPC
namespace; after the row the zygote empties the sandbox's only writable places (/tmp,
/dev/shm and the program's directory, all tmpfs), without recursion however deep a tree the
row left (`osutil.rmtree`). Nothing a row writes, in files or in SysV/POSIX IPC objects,
survives it, and the memory they held is released. A worker whose scratch cannot be emptied
stops, and the host starts a fresh one. (Fresh tmpfs mounts per row would do the same for
0.35 ms a row, a new mount namespace for 5 ms; emptying an untouched tmpfs costs 10 us.)
Without namespaces (degraded mode) the row gets a process group and a scratch directory,
removed afterwards.
"""

from __future__ import annotations

import _sitebuiltins
import _thread
import builtins
import fcntl
import gc
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time

from . import harness, osutil, seccomp
from .channel import supervise

MAX_VERDICT_BYTES = 1 << 20
PROGRAM_DIR = "/run/selfplay"
SCRATCH = ("/tmp", "/dev/shm", PROGRAM_DIR)
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
    "pickle",
)


def set_limits(lim: dict) -> None:
    osutil.set_limits(lim["memory_mb"], lim["file_mb"], lim["max_procs"], lim["timeout_s"])


def setup_row(isolated: bool, scratch: str | None = None) -> str:
    """Give the calling process (the row's first) its own scratch; returns the program's
    directory. Raises OSError where an isolation step fails."""
    if not isolated:
        os.setsid()
        os.chdir(scratch)
        directory = os.path.join(scratch, ".selfplay")
        os.mkdir(directory)
        return directory
    if not osutil.unshare(osutil.CLONE_NEWIPC):
        raise OSError("unshare(ipc) failed")
    os.chdir("/tmp")
    osutil.drop_privileges()
    return PROGRAM_DIR


class Zygote:
    def __init__(self, config: dict):
        self.config = config
        for name in PRELOAD + tuple(config.get("preload", ())):
            try:
                __import__(name)
            except Exception:
                pass
        # The interpreter runs with -S (no site module): scripts still expect exit() and quit().
        builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
        builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
        self.control = socket.socket(fileno=0)
        self.dirty = False
        osutil.set_dumpable(False)
        seccomp.prepare()
        self.facts = self._probe()
        self.devnull = os.open(os.devnull, os.O_RDWR)
        gc.collect()
        gc.freeze()  # keep the shared heap untouched by the children's collectors

    def _probe(self) -> dict:
        facts = {
            "sandbox": bool(self.config.get("sandboxed")),
            "pid_namespace": False,
            "private_scratch": False,
            "ipc_namespace": False,
            "network": True,
            "privileges_dropped": False,
            "seccomp": False,
        }
        if facts["sandbox"]:
            osutil.loopback_down()
            facts["network"] = osutil.network_reachable()
            self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
            facts["private_scratch"] = self._wipe()
            if osutil.unshare(osutil.CLONE_NEWPID):
                pid = os.fork()
                if pid == 0:
                    os._exit(64 | _probe_row())
                osutil.setns(self.own_pidns, osutil.CLONE_NEWPID)
                _, status = os.waitpid(pid, 0)
                bits = os.WEXITSTATUS(status) & 3 if os.WIFEXITED(status) else 0
                for key in ("pid_namespace", "ipc_namespace", "privileges_dropped"):
                    facts[key] = bool(bits & 1)
                facts["seccomp"] = bits == 3
        return facts

    @staticmethod
    def _wipe() -> bool:
        return all([osutil.rmtree(top) for top in SCRATCH])

    # -- the loop -------------------------------------------------------------------------
    def send(self, obj: dict) -> None:
        self.control.send(json.dumps(obj).encode())

    def serve(self) -> None:
        self.send({"ready": True, "facts": self.facts})
        while not self.dirty:
            try:
                data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 4)
            except OSError:
                return
            if not data:
                return
            try:
                control = json.loads(data)
                if len(fds) != 2:
                    raise ValueError("a row needs two descriptors")
                reply = self.grade(control["limits"], fds[0], fds[1])
            except (ValueError, KeyError, TypeError) as e:
                reply = {"error": f"bad control message: {e}"}
            finally:
                for fd in fds:
                    os.close(fd)
            self.send(reply)

    def grade(self, limits: dict, row_fd: int, verdict_fd: int) -> dict:
        start = time.monotonic()
        deadline = start + float(limits["timeout_s"])
        isolated = self.facts["pid_namespace"] and self.facts["private_scratch"]
        scratch = None if isolated else tempfile.mkdtemp(prefix="selfplay-row-")
        # Everything the row's processes need is made here, before the fork: in the zygote it
        # is cheap, in a freshly forked process every new object costs page faults.
        chan_t, chan_p = socket.socketpair()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.memfd_create("stdin")
        fds = (
            row_fd,
            verdict_fd,
            chan_t.detach(),
            out_r,
            err_r,
            chan_p.detach(),
            out_w,
            err_w,
            stdin,
        )
        if isolated:
            osutil.unshare(osutil.CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            self._test_process(limits, fds, scratch)
        forked = time.monotonic()
        if isolated:
            osutil.setns(self.own_pidns, osutil.CLONE_NEWPID)
        for fd in fds[2:]:
            os.close(fd)
        status, timed_out = self._wait(pid, deadline, isolated)
        self._reap()
        if isolated and not self._wipe():
            self.dirty = True  # the host replaces a worker it cannot clean
        if scratch is not None:
            osutil.rmtree(scratch)
            try:
                os.rmdir(scratch)
            except OSError:
                pass
        return {
            "status": status,
            "timed_out": timed_out,
            "duration_s": time.monotonic() - start,
            "fork_s": forked - start,
            "t_done": time.monotonic(),
        }

    def _wait(self, pid: int, deadline: float, isolated: bool) -> tuple[int, bool]:
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        timed_out = False
        try:
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    self._kill(pid, isolated)
                    _, status = os.waitpid(pid, 0)
                    break
                if pidfd is not None:
                    select.select([pidfd], [], [], remaining)
                else:
                    time.sleep(min(remaining, 0.002))
        finally:
            if pidfd is not None:
                os.close(pidfd)
        if not isolated:
            self._kill(pid, isolated)  # stragglers in the row's process group
        return status, timed_out

    @staticmethod
    def _kill(pid: int, isolated: bool) -> None:
        try:
            if isolated:
                os.kill(pid, signal.SIGKILL)  # the namespace dies with its first process
            else:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    @staticmethod
    def _reap() -> None:
        """Collect zombies reparented to us (the row's processes, after its namespace died)."""
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    # -- the test process -----------------------------------------------------------------
    def _test_process(self, limits: dict, fds: tuple, scratch) -> None:
        """The row's test process. Descriptors: 3 the row, 4 the verdict, 5-7 its ends of the
        solution's channel, stdout and stderr, 8-11 the solution's ends."""
        rep = harness.Reporter(4)
        isolated = scratch is None
        try:
            t0 = time.perf_counter()
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]
            os.dup2(self.devnull, 0)  # never the host's channel
            for target, fd in enumerate(high, start=3):
                os.dup2(fd, target)
            osutil.close_fds_from(3 + len(high))
            directory = setup_row(isolated, scratch)
            osutil.set_dumpable(False)
            set_limits(limits)
            # The memory cgroup's first victims are the row's processes, never the zygote.
            osutil.write_file("/proc/self/oom_score_adj", b"1000")
            # A solution that hangs up must surface as BrokenPipeError, not kill the harness.
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            # As PID 1 of the row's namespace, signals with their default action that the
            # row's processes send here are dropped; Python's SIGINT handler would not be.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            sys.setrecursionlimit(10_000)
            t1 = time.perf_counter()
            # One filter for the row, installed here before the solution process is forked
            # (it inherits it): refusals are answered by a thread of this process.
            listener = _install_filter() if self.facts["seccomp"] else None
            chan = harness.spawn(limits, directory, set_limits, rep)
            if listener is not None:
                _thread.start_new_thread(supervise, (listener, rep.emit))
            t2 = time.perf_counter()
            req = json.loads(_read_all(3))
            os.close(3)
            phases = {"setup": t1 - t0, "spawn": t2 - t1, "read": time.perf_counter() - t2}
            req["limits"] = limits
            verdict = harness.Row(req, rep, chan, phases).run()
            verdict["phases"]["t_end"] = time.monotonic()
            rep.write({"v": verdict})
        except BaseException as e:
            try:
                rep.write(
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


def _install_filter() -> int | None:
    """The seccomp filter for this process and all it forks: with a supervisor listener where
    the kernel has one, else answering EPERM directly."""
    try:
        return seccomp.install(notify=True)
    except OSError:
        try:
            seccomp.install(notify=False)
        except OSError:
            pass
    return None


def _probe_row() -> int:
    """In a probe child: 1 if a row's isolation works (PID 1 of a new namespace, IPC namespace,
    no capabilities), | 2 if the seccomp filter refuses a call and its supervisor hears of it."""
    bits = 0
    try:
        setup_row(True)
        if os.getpid() == 1 and osutil.effective_caps() == 0:
            bits |= 1
        listener = seccomp.install(notify=True)
        pid = os.fork()
        if pid == 0:  # refused, and answered EPERM by the parent below
            os._exit(0 if not osutil.unshare(osutil.CLONE_NEWNS) else 1)
        heard = seccomp.answer(listener, {}) is not None
        _, status = os.waitpid(pid, 0)
        if heard and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            bits |= 2
    except BaseException:
        pass
    return bits


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def main() -> None:
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Zygote(config).serve()
