"""A row's two processes as the zygote holds them: prepared, running, ended.

`Armed` is the test process (the first process of the row's PID namespace) and the solution
process (its sibling, also the zygote's child), with the zygote's end of the test process's
control socket. `finish` waits for the verdict and builds the zygote's reply to the host;
`kill` and `collect` end and reap the pair, counting what each cost.
"""

from __future__ import annotations

import mmap
import os
import resource
import select
import signal
import struct
import time

# A row's reply: b"R", wait status, timed out, seconds in the zygote, seconds its fork took,
# when the row arrived and when its verdict was complete (monotonic), and the seconds the
# previous row's cleanup took. Not JSON: see `Zygote._limits`. Then the system calls the
# filter refused the program, NUL-separated (`seccomp.Refusals`).
REPLY = struct.Struct("=ciBddddd6d")
# Followed by what the worker's processes have cost so far (CPU seconds, page faults): the test
# processes, the solution processes (each with what it reaped), the zygote itself.
ROLES = ("test", "solution", "zygote")
USAGE = tuple(f"{role}_{what}" for role in ROLES for what in ("cpu_s", "faults"))


class Ledger:
    """Numbers the zygote keeps about earlier rows (what their processes cost, how long their
    cleanup took), in memory its children do not inherit (MADV_DONTFORK): a row's processes
    are forked from the zygote, and an earlier row's numbers are a channel it controls."""

    def __init__(self, n: int):
        self.fmt = struct.Struct(f"={n}d")
        self.buf = mmap.mmap(-1, mmap.PAGESIZE)
        try:
            self.buf.madvise(mmap.MADV_DONTFORK)
        except (AttributeError, OSError):
            pass

    def add(self, i: int, value: float) -> None:
        self.set(i, struct.unpack_from("=d", self.buf, 8 * i)[0] + value)

    def set(self, i: int, value: float) -> None:
        struct.pack_into("=d", self.buf, 8 * i, value)

    def values(self) -> tuple:
        return self.fmt.unpack_from(self.buf)


# Slots of the zygote's ledger: USAGE, then the last cleanup's seconds.
TEARDOWN = len(USAGE)


class Armed:
    """A row's two processes the zygote forked, prepared for a row, then running it: the test
    process (`pid`) and the solution process (`spid`)."""

    __slots__ = ("pid", "pidfd", "spid", "spidfd", "ctl", "limits", "scratch", "isolated",
                 "fork_s", "status", "s_status", "asked", "ipcns")  # fmt: skip

    def __init__(self, pid, spid, ctl, limits, scratch, isolated, fork_s):
        self.pid, self.spid, self.ctl, self.limits = pid, spid, ctl, limits
        self.pidfd, self.spidfd = _pidfd(pid), _pidfd(spid)
        self.scratch, self.isolated, self.fork_s = scratch, isolated, fork_s
        self.status: int | None = None  # wait statuses, once collected
        self.s_status: int | None = None
        self.asked = False  # the test process waits for the solution's status
        self.ipcns = -1  # the row's IPC namespace, emptied by the zygote once the row is over

    def close(self) -> None:
        self.ctl.close()
        for fd in (self.pidfd, self.spidfd):
            if fd is not None:
                os.close(fd)
        self.pidfd = self.spidfd = None
        if self.ipcns >= 0:
            os.close(self.ipcns)
            self.ipcns = -1

    def finish(self, received: float, usage: Ledger, refusals=None) -> bytes:
        """Wait for the row's verdict: `done` from its test process, its exit, or the time
        limit (then it is killed); the reply for the host. Meanwhile the solution process is
        reaped as soon as it ends (the test process's exit waits for that), its status given
        to the test process when it asks (`wait`), and the filter's refusals answered."""
        deadline = received + float(self.limits["timeout_s"])
        timed_out = done = False
        watch = [self.ctl]
        refused: list[str] = []
        if refusals is not None:
            watch.append(refusals.listener)
        while self.status is None:
            if self.s_status is None and self.spidfd is None:
                self.collect_solution(os.WNOHANG, usage)
            if self.asked and self.s_status is not None:
                self.asked = False
                try:
                    self.ctl.send(struct.pack("=i", self.s_status))
                except OSError:
                    pass
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                self.kill()
                self.collect(usage)
                break
            # A reaped process's pidfd stays readable: watched only while it runs.
            fds = watch + [self.pidfd] if self.pidfd is not None else list(watch)
            if self.s_status is None and self.spidfd is not None:
                fds.append(self.spidfd)
            polled = self.pidfd is None or (self.s_status is None and self.spidfd is None)
            ready, _, _ = select.select(fds, [], [], min(remaining, 0.002) if polled else remaining)
            if refusals is not None and refusals.listener in ready:
                # The test process's own refusals (any of its threads') are the tests', not
                # the program's.
                name = refusals.answer(self._is_test)
                if name is not None and len(refused) < 64:
                    refused.append(name)
            if self.ctl in ready:
                try:
                    msg = self.ctl.recv(16)
                except OSError:
                    msg = b""
                if msg == b"done":
                    done = True
                    break
                if msg == b"wait":
                    self.asked = True
                elif not msg:
                    watch.remove(self.ctl)  # closed: the process is gone or going
            if self.spidfd is not None and self.spidfd in ready:
                self.collect_solution(0, usage)
            if self.pidfd is None or self.pidfd in ready:
                self.collect_test(0 if self.pidfd is not None else os.WNOHANG, usage)
        now = time.monotonic()
        own = resource.getrusage(resource.RUSAGE_SELF)
        usage.set(4, own.ru_utime + own.ru_stime)
        usage.set(5, own.ru_minflt)
        status = 0 if done else (self.status or 0)
        *counts, teardown = usage.values()
        reply = REPLY.pack(
            b"R", status, timed_out, now - received, self.fork_s, received, now, teardown, *counts
        )
        return reply + "\0".join(refused).encode()

    def _is_test(self, tid: int) -> bool:
        """Whether thread `tid` (as this process numbers it) is one of the test process's."""
        try:
            os.stat(f"/proc/{self.pid}/task/{tid}")
            return True
        except OSError:
            return False

    def kill(self) -> None:
        for pid, done in ((self.pid, self.status), (self.spid, self.s_status)):
            if done is not None or pid <= 0:
                continue
            try:
                os.kill(pid, signal.SIGKILL)  # in the sandbox, the namespace dies with the first
            except (ProcessLookupError, PermissionError):
                pass
            if not self.isolated:
                try:
                    os.killpg(pid, signal.SIGKILL)  # each has a process group of its own
                except (ProcessLookupError, PermissionError):
                    pass

    def collect(self, usage: Ledger) -> None:
        """Reap both processes of a killed row: the solution first, since the test process,
        the namespace's init, finishes exiting only once every process in it is reaped."""
        self.collect_solution(0, usage)
        self.collect_test(0, usage)

    def collect_solution(self, flags: int, usage: Ledger) -> None:
        if self.s_status is None:
            self.s_status = wait(self.spid, flags, usage, 2)

    def collect_test(self, flags: int, usage: Ledger) -> None:
        if self.status is None:
            self.status = wait(self.pid, flags, usage, 0)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None  # before Linux 5.3: polled instead


def children() -> list[int]:
    """The calling process's children (all its threads')."""
    pids: list[int] = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return pids


def wait(pid: int, flags: int, usage: Ledger | None = None, at: int = 0) -> int | None:
    """The wait status of our child `pid`; None if it is still running (WNOHANG). What it
    cost is added to `usage[at:at + 2]` (CPU seconds, page faults)."""
    if pid <= 0:
        return 0
    try:
        done, status, ru = os.wait4(pid, flags)
    except ChildProcessError:  # reaped by `Zygote._reap` already
        return 0
    if not done:
        return None
    if usage is not None:
        usage.add(at, ru.ru_utime + ru.ru_stime)
        usage.add(at + 1, ru.ru_minflt)
    return status
