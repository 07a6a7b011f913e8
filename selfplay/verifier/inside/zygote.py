"""The zygote: a long-lived process inside the sandbox that forks each row's two processes.

Started once per worker by the host (inside bubblewrap when available). It never reads a
row: the host hands it, per row, a small control message (the limits) and two descriptors,
the row (a memfd the host wrote) and the verdict (a memfd the test process writes), which it
passes to the row's test process unread. Its memory therefore never holds a row's program,
tests, outputs or verdict, and neither does anything forked from it.

A row's processes are forked before the row arrives, once the previous row is cleaned up
(`prepare`): the test process (`testproc`) and, beside it rather than from it, the solution
process (`solution`), the first two processes of a new PID namespace (killing the first kills
everything the row started, setsid or not) sharing a new IPC namespace. When a row arrives it
goes to the prepared test process (`hand_off`); when the test process says it is done the
host gets its answer (`Armed.finish`), and only then does the zygote kill and reap what is left,
put back its own settings a row can write through /proc, and give the sandbox's only writable
places (/tmp, /dev/shm and the program's directory) a fresh tmpfs wherever the row changed
anything (`scratch.Scratch`: a lazy unmount frees a million files in the kernel in a fraction
of a second; modes, times, extended attributes and inode numbers start again; the program's
directory gets one mounted over the old, since every unmount stalls the machine). The next row
is taken only after that: nothing a row writes, in files or in SysV/POSIX IPC objects,
survives it, and the memory they held is released. Numbers about earlier rows (what their
processes cost) live in memory the children do not inherit (`rowprocs.Ledger`). A worker
whose scratch cannot be renewed retires: it answers the next row `retired`, unread, and the
host sends that row to a fresh worker. Without namespaces (degraded mode) each row process
gets a session and process group and the row a scratch directory, removed afterwards, and the
zygote kills whatever the row left (it inherits orphans as subreaper).
"""

from __future__ import annotations

import _sitebuiltins
import builtins
import fcntl
import gc
import json
import os
import select
import signal
import socket
import sys
import time

from . import osutil, preload, rowprocs, seccomp, solution, testproc
from .rowprocs import Armed
from .scratch import Scratch

PR_SET_CHILD_SUBREAPER = 36
ROW_NAMESPACES = osutil.CLONE_NEWPID | osutil.CLONE_NEWIPC
# Kernel settings under /proc that a row could otherwise write: rows run as uid 0 without
# capabilities, and the kernel lets the owner of many sysctls write them by the file's mode
# alone (core_pattern, drop_caches, every network setting of the worker's namespace).
# bubblewrap means to cover these, but skips them when its own access check fails, as it does
# before it adds capabilities: the zygote covers them itself, before any row exists.
PROC_COVERED = (
    "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/mtrr",
    "/proc/pressure",
)  # fmt: skip


class Zygote:
    def __init__(self, config: dict):
        self.config = config
        self._fork = preload.load(config.get("preload", ()))
        # The interpreter runs with -S (no site module): scripts still expect exit() and quit().
        builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
        builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
        self.control = socket.socket(fileno=0)
        self.devnull = os.open(os.devnull, os.O_RDWR)
        osutil.reserve_low_descriptors(self.devnull)
        self.devnull = fcntl.fcntl(self.devnull, fcntl.F_DUPFD_CLOEXEC, osutil.LOW_DESCRIPTORS)
        self.dirty = False
        self.armed: Armed | None = None
        self.rows = 0
        self.known_limits: dict[bytes, dict] = {}
        self.usage = rowprocs.Ledger(len(rowprocs.USAGE) + 1)
        self.scratch = Scratch(int(config.get("scratch_mb", 128)))
        osutil.set_dumpable(False)
        osutil.set_role("zygote")
        # What every row's process would otherwise set for itself (each call there costs page
        # faults): no_new_privs and locked securebits, and the recursion limit a row gets.
        osutil.lock_down()
        sys.setrecursionlimit(10_000)
        # Without the sandbox the zygote is not PID 1: a row's orphans would go to the
        # machine's init, which in a container may never reap them, and their zombies would
        # fill the worker's pids cgroup. As a subreaper it collects them itself (`_reap`).
        osutil.prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.refusals: seccomp.Refusals | None = None
        self.last_pid = -1
        self.facts = self._probe()
        gc.collect()
        gc.freeze()  # keep the shared heap untouched by the children's collectors
        # Every page the zygote has is copied into each fork's page tables and torn down at
        # its exit: give back the C heap's free pages first (about 7% of them).
        osutil.trim_heap()

    def _probe(self) -> dict:
        facts = {
            "sandbox": bool(self.config.get("sandboxed")),
            "pid_namespace": False,
            "private_scratch": False,
            "ipc_namespace": False,
            "network": True,
            "privileges_dropped": False,
            "seccomp": False,
            "kernel_settings_read_only": False,
        }
        if facts["sandbox"]:
            osutil.loopback_down()
            # Before /proc/sys is read-only: the zygote alone sets where the worker's PID
            # numbers go on (`prepare`).
            self.last_pid = _open_last_pid()
            facts["kernel_counters_still"] = osutil.still_counters(SNAPSHOTS)
            facts["kernel_settings_read_only"] = all(
                osutil.cover_read_only(p) for p in PROC_COVERED if os.path.exists(p)
            )
            facts["network"] = osutil.network_reachable()
            self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
            self.own_ipcns = os.open("/proc/self/ns/ipc", os.O_RDONLY)
            ipc = os.fstat(self.own_ipcns).st_ino
            facts["private_scratch"] = self.scratch.start()
            filtered = self._install_filter()
            if osutil.unshare(ROW_NAMESPACES):
                pid = os.fork()
                if pid == 0:
                    os._exit(64 | _probe_row(ipc))
                self._leave_row_namespaces()
                heard = self._hear_probe(pid)
                _, status = os.waitpid(pid, 0)
                bits = os.WEXITSTATUS(status) & 3 if os.WIFEXITED(status) else 0
                for key in ("pid_namespace", "ipc_namespace", "privileges_dropped"):
                    facts[key] = bool(bits & 1)
                # Without a listener the probe's refusal can only be seen in its result.
                facts["seccomp"] = bits == 3 and (heard or filtered and self.refusals is None)
        return facts

    def _install_filter(self) -> bool:
        """The seccomp filter, on this process and everything it forks from now on: its
        refusals reported here where the kernel can (Linux 5.0 and later), else answered EPERM
        by the kernel itself (no `seccomp_denied` signals then)."""
        for notify in (True, False) if self.config.get("seccomp_notify", True) else (False,):
            try:
                listener = seccomp.install(notify)
            except OSError:
                continue
            self.refusals = seccomp.Refusals(listener) if listener is not None else None
            return True
        return False

    def _hear_probe(self, pid: int) -> bool:
        """Whether the probe's refused call reached this process (and was answered)."""
        if self.refusals is None:
            return False
        ready, _, _ = select.select([self.refusals.listener], [], [], 10)
        callers: list[int] = []
        if ready:  # note the caller; a probe's refusal is never reported
            self.refusals.answer(lambda tid: callers.append(tid) or True)
        return callers == [pid]

    def _leave_row_namespaces(self) -> None:
        """Back to the zygote's own namespaces after forking into a row's; a zygote left in a
        row's IPC namespace would share it with the next rows, so it stops instead."""
        ok = osutil.setns(self.own_pidns, osutil.CLONE_NEWPID)
        if not (osutil.setns(self.own_ipcns, osutil.CLONE_NEWIPC) and ok):
            self.dirty = True

    # -- the loop -------------------------------------------------------------------------
    def send(self, obj: dict) -> None:
        self.control.send(json.dumps(obj).encode())

    def _limits(self, data: bytes) -> dict:
        """The limits of a control message; consecutive rows mostly share theirs, and
        parsing them again would cost page faults in a process whose every page is shared."""
        limits = self.known_limits.get(data)
        if limits is None:
            if len(self.known_limits) > 16:
                self.known_limits.clear()
            limits = self.known_limits[data] = json.loads(data)["limits"]
        return limits

    def serve(self) -> None:
        self.send({"ready": True, "facts": self.facts})
        try:
            while True:
                try:
                    data, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 4)
                except OSError:
                    return
                if not data:
                    return
                received = time.monotonic()
                if self.dirty:
                    # This row was never read: the host sends it again to a fresh worker.
                    for fd in fds:
                        os.close(fd)
                    self.send({"retired": True})
                    return
                try:
                    if len(fds) != 2:
                        raise ValueError("a row needs two descriptors")
                    limits = self._limits(data)
                    row = self.hand_off(limits, fds[0], fds[1])
                except (ValueError, KeyError, TypeError) as e:
                    self.send({"error": f"bad control message: {e}"})
                    continue
                finally:
                    for fd in fds:
                        os.close(fd)
                # Before the cleanup: the host needs nothing more of this row.
                self.control.send(row.finish(received, self.usage, self.refusals))
                t = time.monotonic()
                self.teardown(row)
                self.usage.set(rowprocs.TEARDOWN, time.monotonic() - t)
                del row  # the next row's processes are forked from here: nothing of this one
                # The next row's processes, prepared while the host turns this verdict round.
                # Not while this row runs: the zygote's every write would then copy a page
                # its prepared children share, and on a busy machine that costs more than the
                # overlap gains.
                self.armed = self.prepare(limits, quiet=True)
        finally:
            if self.armed is not None:
                self.teardown(self.armed)

    def prepare(self, limits: dict, quiet: bool = False) -> Armed | None:
        """Fork a row's test and solution processes for a row to come (see `testproc` and
        `solution`); with `quiet`, None where a fork fails (a row filled the process limit:
        the next row prepares its own)."""
        start = time.monotonic()
        isolated = self.facts["pid_namespace"] and self.facts["private_scratch"]
        scratch = None if isolated else self._scratch_dir()
        # Everything the row's processes need is made here, before the forks: in the zygote
        # it is cheap, in a freshly forked process every new object costs page faults.
        ctl, ctl_t = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        chan_t, chan_s = socket.socketpair()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.memfd_create("stdin")
        test_fds = (ctl_t.detach(), chan_t.detach(), out_r, err_r)
        solution_fds = (chan_s.detach(), out_w, err_w, stdin)
        plan = osutil.limit_plan(limits)
        if isolated:
            # Every row's processes get the same PID numbers in the worker's namespace (the
            # ones /proc shows): how many processes an earlier row made never reaches a later
            # one (the previous row's are all reaped by now).
            if self.last_pid >= 0:
                try:
                    os.pwrite(self.last_pid, ROW_FIRST_PID, 0)
                except OSError:
                    pass
            osutil.unshare(ROW_NAMESPACES)
            ipcns = os.open("/proc/self/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
        else:
            ipcns = -1
        pid = spid = -1
        try:
            # The test process first: the first process of a PID namespace is its init.
            pid = self._fork()
            if pid == 0:
                testproc.main(limits, plan, test_fds, scratch, self.devnull)
            # The solution process is the zygote's child, not the test process's: it starts
            # from the zygote's pages, never from the test process's.
            spid = self._fork()
            if spid == 0:
                solution.start(limits, plan, solution_fds, scratch)
        except OSError:
            pass
        finally:
            if isolated:
                self._leave_row_namespaces()
            for fd in test_fds + solution_fds:
                os.close(fd)
        if spid < 0:
            if pid > 0:
                row = Armed(pid, -1, ctl, limits, scratch, isolated, 0.0)
                row.ipcns = ipcns
                self.teardown(row)
            else:
                ctl.close()
                if ipcns >= 0:
                    os.close(ipcns)
                if scratch is not None:
                    os.rmdir(scratch)
            if quiet:
                return None
            raise OSError("the row's processes could not be forked")
        row = Armed(pid, spid, ctl, limits, scratch, isolated, time.monotonic() - start)
        row.ipcns = ipcns
        return row

    def _scratch_dir(self) -> str:
        """A new private directory for a row without the sandbox (no `tempfile`: see PRELOAD)."""
        self.rows += 1
        base = os.environ.get("TMPDIR", "/tmp")
        while True:
            path = os.path.join(base, f"selfplay-row-{os.getpid()}-{self.rows}")
            try:
                os.mkdir(path, 0o700)
                return path
            except FileExistsError:
                self.rows += 1

    def hand_off(self, limits: dict, row_fd: int, verdict_fd: int) -> Armed:
        """Give the row to a prepared test process with these limits (one is prepared now if
        there is none, or the one waiting has other limits or has died)."""
        for _ in range(2):
            row, self.armed = self.armed, None
            if row is not None and row.limits == limits and row.status is row.s_status is None:
                try:
                    socket.send_fds(row.ctl, [b"row"], [row_fd, verdict_fd], socket.MSG_NOSIGNAL)
                    return row
                except OSError:
                    pass
            if row is not None:
                self.teardown(row)
            # Forked while this process holds the row's descriptors: each child closes every
            # descriptor but its own first thing (`osutil.become`), before any row code runs.
            self.armed = self.prepare(limits)
        raise OSError("no test process could take the row")

    def teardown(self, row: Armed) -> None:
        """End a row (or prepared processes not used): kill what is left of it, reap, and
        empty the scratch it could write to. Runs after the host has its verdict."""
        row.kill()
        row.collect(self.usage)
        if not row.isolated:
            self._kill_strays()
        self._reap()
        if row.ipcns >= 0:
            self._empty_ipc(row.ipcns)
        row.close()
        if row.isolated:
            if not self.scratch.renew():
                self.dirty = True  # the next row goes to a fresh worker
        elif row.scratch is not None:
            self.scratch.restore_settings()
            osutil.rmtree(row.scratch)
            try:
                os.rmdir(row.scratch)
            except OSError:
                pass

    def _empty_ipc(self, ipcns: int) -> None:
        """Free what the row left in its IPC namespace before the next row starts (its
        processes are gone, so nothing is attached any more): in the row's namespace and back."""
        if osutil.setns(ipcns, osutil.CLONE_NEWIPC) and osutil.sysv_ipc_used():
            osutil.remove_sysv_ipc()
        if not osutil.setns(self.own_ipcns, osutil.CLONE_NEWIPC):
            self.dirty = True

    def _kill_strays(self) -> None:
        """Without the sandbox no namespace takes a row's processes with it, and one that
        started a session of its own escapes its group: as a subreaper the zygote inherits
        every such orphan once its parent is gone, and kills it (and, as they are orphaned
        in turn, its descendants)."""
        keep = {self.armed.pid, self.armed.spid} if self.armed is not None else set()
        for _ in range(64):
            strays = [pid for pid in rowprocs.children() if pid not in keep]
            if not strays:
                return
            for pid in strays:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for pid in strays:
                rowprocs.wait(pid, 0)

    def _reap(self) -> None:
        """Collect zombies reparented to us (the row's processes, after its namespace died);
        prepared processes that died waiting are marked dead, not lost."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            armed = self.armed
            if armed is not None and pid == armed.pid:
                armed.status = status
            elif armed is not None and pid == armed.spid:
                armed.s_status = status


# The worker namespace's PID counter before each row: its test process is then PID 1001 there,
# its solution process 1002, every row.
ROW_FIRST_PID = b"1000"
SNAPSHOTS = "/opt/selfplay/snapshots"  # bwrap.SNAPSHOTS


def _open_last_pid() -> int:
    try:
        return os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return -1


def _probe_row(zygote_ipc: int) -> int:
    """In a probe child forked as a row's processes are: 1 if a row's isolation works (PID 1
    of a new namespace, an IPC namespace of its own, no capabilities), | 2 if a call only the
    filter refuses fails: a netlink socket, which a process without capabilities may open
    (where the zygote has the filter's listener, it checks that it heard of it too)."""
    bits = 0
    try:
        osutil.enter_row(None)
        own_ipc = os.stat("/proc/self/ns/ipc").st_ino != zygote_ipc
        if os.getpid() == 1 and own_ipc and osutil.effective_caps() == 0:
            bits |= 1
        try:
            socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()
        except PermissionError:
            bits |= 2
    except BaseException:
        pass
    return bits


def main() -> None:
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    # What every row's processes inherit (setting them in each costs page faults there): a
    # solution that hangs up surfaces as BrokenPipeError, not a dead harness (the zygote
    # itself ends on the BrokenPipeError of a host gone away); and SIGINT keeps its default
    # action, since a row's first process is PID 1 of its namespace, for which the kernel
    # drops signals with their default action that the row's processes send, but would
    # deliver them to Python's handler.
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    Zygote(config).serve()
