"""A row's test process, from its fork to its exit.

The zygote forks it *before* the row arrives (while the previous row still runs), and it
prepares everything that does not depend on the row: the new PID namespace it is the first
process of, a new IPC namespace, no capabilities, the row's limits, the seccomp filter, and
the solution process (forked now, so it has never seen any row).
Then it blocks on its control socket (descriptor 3) until the zygote hands it the row and the
verdict as two descriptors it has never read. It grades the row, writes the verdict, tells the
zygote `done`, and exits, taking its namespace, and with it every process the row started,
with it.

Descriptors while prepared: 3 the control socket, 4 a placeholder for the verdict, 5-7 its
ends of the solution's channel, stdout and stderr, 8-11 the solution's ends (closed once the
solution process is forked).
"""

from __future__ import annotations

import fcntl
import marshal
import os
import signal
import socket
import sys
import time

from . import harness, osutil, seccomp

PROGRAM_DIR = "/run/selfplay"
PR_SET_PDEATHSIG = 1


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


def install_filter() -> int | None:
    """The seccomp filter for this process and all it forks: with a listener (the test
    process answers refusals) where the kernel has one, else answering EPERM directly."""
    try:
        return seccomp.install(notify=True)
    except OSError:
        try:
            seccomp.install(notify=False)
        except OSError:
            pass
    return None


def read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _prepare(limits: dict, fds: tuple, scratch, devnull: int, seccomp_ok: bool, rep):
    """Everything before the row: returns the solution's channel and the phases so far."""
    t0 = time.perf_counter()
    osutil.set_role("test")
    if scratch is not None:
        # Without the sandbox, die with the zygote (inside it, the zygote is PID 1 of the
        # sandbox: everything dies with it).
        osutil.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]
    os.dup2(devnull, 0)  # never the host's channel
    os.dup2(devnull, 4)  # the verdict's place, until the row comes
    os.dup2(high[0], 3)
    for target, fd in enumerate(high[1:], start=5):
        os.dup2(fd, target)
    osutil.close_fds_from(5 + len(high) - 1)
    directory = setup_row(scratch is None, scratch)
    set_limits(limits)  # not dumpable: inherited from the zygote (fork keeps the flag)
    # The memory cgroup's first victims are the row's processes, never the zygote.
    osutil.write_file("/proc/self/oom_score_adj", b"1000")
    sys.setrecursionlimit(10_000)  # SIGPIPE and SIGINT: as the zygote left them (its main)
    t1 = time.perf_counter()
    # The filter is installed before the solution process is forked (it inherits it); its
    # refusals are answered by this process while it waits for the solution (`Channel.pump`).
    # This process's own refusals (the tests') get EPERM from a second filter installed after
    # the fork, which takes precedence over the first here: it never waits on itself.
    listener = install_filter() if seccomp_ok else None
    chan = harness.spawn(limits, directory, set_limits, rep)
    if listener is not None:
        chan.listener = listener
        seccomp.install(notify=False)
    return chan, {"setup": t1 - t0, "spawn": time.perf_counter() - t1}


def _await_row() -> tuple[int, int] | None:
    """Block until the zygote hands over (row, verdict); None if it never will."""
    ctl = socket.socket(fileno=3)
    try:
        msg, fds, _, _ = socket.recv_fds(ctl, 16, 2)
    except OSError:
        return None
    finally:
        ctl.detach()
    if msg != b"row" or len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return None
    return fds[0], fds[1]


def main(limits: dict, fds: tuple, scratch, devnull: int, seccomp_ok: bool) -> None:
    """The test process (in the child, right after the fork); never returns."""
    rep = harness.Reporter()
    try:
        try:
            chan, phases = _prepare(limits, fds, scratch, devnull, seccomp_ok, rep)
            failure = None
        except BaseException as e:  # reported in the verdict, once there is one
            failure = e
        handed = _await_row()
        if handed is None:
            return
        row_fd, verdict_fd = handed
        phases_go = time.monotonic()
        os.dup2(verdict_fd, 4)
        os.close(verdict_fd)
        rep.attach(4)
        if failure is not None:
            raise failure
        t = time.perf_counter()
        req = marshal.loads(read_all(row_fd))  # written by the host, never by a row
        os.close(row_fd)
        phases.update(read=time.perf_counter() - t, t_go=phases_go)
        req["limits"] = limits
        verdict = harness.Row(req, rep, chan, phases).run()
        verdict["phases"]["t_end"] = time.monotonic()
        rep.write({"v": verdict})
    except BaseException as e:
        try:
            detail = f"harness error: {e!r}"[:500]
            rep.write({"v": {"status": "error", "tests_passed": 0, "detail": detail}})
        except BaseException:
            pass
    finally:
        try:
            os.write(3, b"done")  # the zygote answers the host now, and cleans up after
        except BaseException:
            pass
        os._exit(0)
