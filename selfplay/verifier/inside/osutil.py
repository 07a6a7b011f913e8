"""Linux primitives the sandbox needs and Python 3.11 lacks: namespaces and capabilities.

Every function returns False (or raises OSError where noted) instead of crashing when the
kernel refuses, so the zygote can report which protections are active.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import socket
import struct
import sys

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWPID = 0x20000000
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
PR_SET_DUMPABLE = 4
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
# NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP, NO_SETUID_FIXUP_LOCKED, KEEP_CAPS_LOCKED:
# a uid-0 process that has dropped its capabilities cannot regain them through execve.
SECUREBITS_LOCKED_DOWN = 0x01 | 0x02 | 0x04 | 0x08 | 0x20


def _ok(rc: int) -> bool:
    return rc == 0


# fork(2) itself: a PyDLL call keeps the GIL, and the child carries on holding it.
_fork = ctypes.PyDLL(None, use_errno=True).fork


def fork() -> int:
    """fork(2) without CPython's work around it (import lock, GIL and thread-state
    re-creation, at-fork hooks): a third of the page faults of a freshly forked interpreter.
    Only for a single-threaded process that is not importing and whose at-fork hooks do
    nothing (the zygote checks: `Zygote._fork`)."""
    pid = _fork()
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return pid


def unshare(flags: int) -> bool:
    return _ok(_libc.unshare(flags))


def setns(fd: int, nstype: int) -> bool:
    return _ok(_libc.setns(fd, nstype))


MNT_DETACH = 2
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND = 1, 2, 4, 32, 4096
READ_ONLY_REMOUNT = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV


def mount_tmpfs(path: str, options: str) -> bool:
    """A new, empty tmpfs at `path`, over whatever is mounted there."""
    return _ok(
        _libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode())
    )


def unmount(path: str) -> bool:
    """Detach what is mounted at `path`, and everything mounted below it (lazily: the kernel
    frees its files afterwards, however many there are)."""
    return _ok(_libc.umount2(path.encode(), MNT_DETACH))


def make_read_only(path: str) -> bool:
    """Make the mount at `path` read-only (a bind remount: what is mounted on it stays as is)."""
    return _ok(_libc.mount(None, path.encode(), None, READ_ONLY_REMOUNT, None))


MS_NOEXEC, MS_REC = 8, 16384


def cover_read_only(path: str) -> bool:
    """Bind `path` onto itself and make that mount read-only (with no exec, setuid or device
    files): what is below it stays as it was, now unwritable for every process of the
    sandbox, capabilities or none (a row cannot mount)."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    p = path.encode()
    return _ok(_libc.mount(p, p, None, MS_BIND | MS_REC, None)) and _ok(
        _libc.mount(None, p, None, flags, None)
    )


# Kernel-wide counters under /proc that a row can move and a later row read (forks since boot,
# page and slab counts, negative dentries, interrupts): each is replaced, for every process of
# the sandbox, by a still copy taken when the zygote started. The format stays what readers
# parse; the numbers no longer move.
STILL_COUNTERS = (
    "/proc/stat", "/proc/vmstat", "/proc/meminfo", "/proc/loadavg", "/proc/interrupts",
    "/proc/softirqs", "/proc/schedstat", "/proc/diskstats", "/proc/zoneinfo", "/proc/buddyinfo",
    "/proc/pagetypeinfo", "/proc/slabinfo", "/proc/sched_debug", "/proc/timer_list",
    "/proc/key-users", "/proc/sys/fs/dentry-state", "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/inode-state", "/proc/sys/fs/file-nr", "/proc/sys/fs/aio-nr",
)  # fmt: skip


# The host's physical-memory tables: a flag word and a map count per page frame of the machine,
# the page cache's pages among them. Rows run as uid 0, and the files' mode (0400, root) is
# all that guards them. Nothing a graded program needs is there: each reads as an empty file.
HOST_TABLES = ("/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup")


def still_counters(place: str) -> bool:
    """Bind a still copy of each of STILL_COUNTERS (written to the tmpfs at `place`, then made
    read-only) over it, and an empty file over each of HOST_TABLES; False if one that exists
    could not be replaced."""
    copies = []
    for i, path in enumerate(STILL_COUNTERS):
        try:
            with open(path, "rb") as f:
                data = f.read(1 << 20)
        except FileNotFoundError:
            continue
        except OSError:
            data = b""  # not readable here (slabinfo without privileges): empty then
        copy = f"{place}/{i}"
        with open(copy, "wb") as f:
            f.write(data)
        copies.append((copy, path))
    empty = f"{place}/empty"
    open(empty, "wb").close()
    copies += [(empty, path) for path in HOST_TABLES if os.path.exists(path)]
    if not make_read_only(place):
        return False
    ok = True
    for copy, path in copies:
        ok = _ok(_libc.mount(copy.encode(), path.encode(), None, MS_BIND, None)) and ok
    return ok


IPC_RMID = 0
_SYSV = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
SHM_INFO, MSG_INFO, SEM_INFO = 14, 12, 19
_INFO = ctypes.create_string_buffer(256)


def sysv_ipc_used() -> bool:
    """Whether this IPC namespace holds any SysV object (three *_INFO calls: the counts of
    segments, queues and semaphore sets in use come first in what they fill)."""
    for call, args in (
        (_libc.shmctl, (0, SHM_INFO, _INFO)),
        (_libc.msgctl, (0, MSG_INFO, _INFO)),
        (_libc.semctl, (0, 0, SEM_INFO, _INFO)),
    ):
        ctypes.memset(_INFO, 0, 16)
        if call(*args) < 0 or int.from_bytes(_INFO.raw[:4], sys.byteorder) != 0:
            return True
    return False


def remove_sysv_ipc() -> bool:
    """Remove every SysV shared memory segment, message queue and semaphore set of this
    process's IPC namespace, now: a namespace's own teardown frees them later, from a kernel
    worker after an RCU grace period, by when the next row may already be charged for them."""
    ok = True
    for kind, call in _SYSV:
        try:
            with open(f"/proc/sysvipc/{kind}", "rb") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            return False
        for line in lines:
            fields = line.split()
            if len(fields) > 1 and fields[1].isdigit():
                rc = getattr(_libc, call)(int(fields[1]), IPC_RMID, None)
                ok = rc == 0 and ok
    return ok


def trim_heap() -> None:
    """Return the C heap's free pages to the kernel (glibc's malloc_trim; elsewhere nothing)."""
    try:
        _libc.malloc_trim(0)
    except AttributeError:
        pass


def set_dumpable(flag: bool) -> None:
    _libc.prctl(PR_SET_DUMPABLE, int(flag), 0, 0, 0)


def prctl(option: int, arg: int) -> bool:
    return _ok(_libc.prctl(option, arg, 0, 0, 0))


PR_SET_NAME = 15


def set_role(role: str) -> None:
    """Name this process after its role (what ps, top and perf show): sp-zygote, sp-test,
    sp-solution."""
    _libc.prctl(PR_SET_NAME, b"sp-" + role.encode(), 0, 0, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def lock_down() -> bool:
    """In the zygote, once: no_new_privs and the locked-down securebits, which every process
    it forks inherits, so that a row's process only has to empty its capability sets
    (`drop_privileges`). Neither changes what the zygote itself can do (it never execs)."""
    global _LOCKED
    _LOCKED = _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 and (
        _libc.prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED_DOWN, 0, 0, 0) == 0
    )
    return _LOCKED


_LOCKED = False


def drop_privileges() -> None:
    """Drop every capability for good and forbid gaining new privileges.

    With NOROOT locked and no_new_privs (set once by the zygote: `lock_down`), neither uid 0
    nor file capabilities can bring any back through execve, so emptying the capability sets
    is one call: the bounding set need not be emptied one capability at a time (each change
    costs a credential copy, and in a freshly forked process each call costs page faults).
    """
    if not _LOCKED:
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _libc.prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED_DOWN, 0, 0, 0)
    _libc.capset(*_NO_CAPS)


# Built once in the zygote: in a freshly forked process every new Python object costs page
# faults, so the row's processes only make the call.
_NO_CAPS = (ctypes.byref(_CapHeader(0x20080522, 0)), (_CapData * 2)())


def write_file(path: str, data: bytes) -> bool:
    """Write a small /proc or /sys file with plain system calls (no file object)."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, data)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def effective_caps() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return -1


def loopback_down() -> bool:
    """Take `lo` down so that not even 127.0.0.1 is reachable inside the sandbox."""
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            req = struct.pack("16sH14x", b"lo", 0)
            flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
            fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags & ~IFF_UP))
        return True
    except OSError:
        return False


def network_reachable() -> bool:
    """True if any interface other than a down loopback exists."""
    try:
        names = os.listdir("/sys/class/net")
    except OSError:
        names = []
    if not names:
        try:
            with open("/proc/net/dev") as f:
                names = [line.split(":")[0].strip() for line in f.readlines()[2:]]
        except OSError:
            return True
    for name in names:
        if name != "lo":
            return True
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            req = struct.pack("16sH14x", b"lo", 0)
            flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, req))[1]
            return bool(flags & 0x1)
    except OSError:
        return True


def rmtree(top: str) -> bool:
    """Remove everything below `top` (kept itself) without recursion and with two descriptors
    at a time, however deep the tree; False if something could not be removed.

    A row can leave a directory tree thousands of levels deep: recursive removal would exhaust
    Python's stack or the descriptor limit, and paths would exceed PATH_MAX. Going back up
    through `..` of the directory being emptied needs neither.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(top, flags)
    except OSError:
        return False
    names: list[str] = []  # the path from `top` down to the directory `fd` holds
    clean = True
    try:
        while True:
            child = None
            for entry in os.scandir(fd):
                if entry.is_dir(follow_symlinks=False):
                    child = entry.name
                    break
                try:
                    os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    clean = False
            if child is not None:
                try:
                    sub = os.open(child, flags, dir_fd=fd)
                except OSError:
                    return False
                os.close(fd)
                fd = sub
                names.append(child)
                continue
            if not names:
                return clean
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                return False  # something in it could not be removed
    finally:
        os.close(fd)


def close_fds_from(low: int) -> None:
    """Close every descriptor >= low (one close_range system call where the kernel has it)."""
    os.closerange(low, 1 << 20)


PR_SET_PDEATHSIG = 1
PROGRAM_DIR = "/run/selfplay"
# The program's file as a module, and as a script (stdin/stdout tests): the only files a row's
# processes write to PROGRAM_DIR themselves.
PROGRAM_FILES = ("solution.py", "main.py")


def enter_row(scratch: str | None) -> str:
    """Make the calling process (a row's test or solution process, just forked) part of its
    row; returns the program's directory. In the sandbox (`scratch` None) the row's PID and
    IPC namespaces are already there (the zygote forked into them): drop every capability.
    Without it: die with the zygote, in the row's scratch directory (the zygote kills each
    process's group: no namespace does it)."""
    # A session and process group of its own either way: `kill(0, ...)` in the program then
    # reaches its own process group, never the zygote's (nor, through it, the processes of
    # the next row, prepared meanwhile).
    os.setsid()
    if scratch is None:
        os.chdir("/tmp")
        drop_privileges()
        return PROGRAM_DIR
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.chdir(scratch)
    return os.path.join(scratch, ".selfplay")


def become(role: str, descriptors: dict[int, int], scratch: str | None) -> str:
    """The start of a row's test or solution process, just forked: exactly `descriptors`
    (number wanted -> descriptor inherited) open and nothing else, its row (`enter_row`), its
    name, first in line for the memory cgroup's OOM killer (never the zygote). Returns the
    program's directory. The zygote keeps the numbers a row's processes want taken
    (`reserve_low_descriptors`), so what they inherit sits above them and moves in one step."""
    top = max(descriptors)
    if min(descriptors.values()) <= top:  # a descriptor inherited at a number wanted for another
        descriptors = {n: fcntl.fcntl(fd, fcntl.F_DUPFD, top + 1) for n, fd in descriptors.items()}
    for n, fd in descriptors.items():
        os.dup2(fd, n)
    close_fds_from(top + 1)
    directory = enter_row(scratch)
    set_role(role)
    write_file("/proc/self/oom_score_adj", b"1000")
    return directory


LOW_DESCRIPTORS = 10


def reserve_low_descriptors(placeholder: int) -> None:
    """In the zygote, at its start: hold every descriptor number from 3 to LOW_DESCRIPTORS - 1
    (a row's processes want theirs there), so that what it opens later is numbered above."""
    for n in range(3, LOW_DESCRIPTORS):
        try:
            fcntl.fcntl(n, fcntl.F_GETFD)
        except OSError:
            os.dup2(placeholder, n, inheritable=False)


def limit_plan(lim: dict) -> tuple[tuple[int, int], ...]:
    """The rlimits a row's processes set (`apply_limits`), worked out by the zygote before it
    forks them (its hard limits are theirs): (resource, value) pairs."""
    mem = lim["memory_mb"] * 1024 * 1024
    plan = []
    for res, val in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_FSIZE, lim["file_mb"] * 1024 * 1024),
        (resource.RLIMIT_NPROC, lim["max_procs"]),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_CPU, max(1, int(lim["timeout_s"]) + 1)),
    ):
        try:
            hard = resource.getrlimit(res)[1]
        except (ValueError, OSError):
            continue
        plan.append((res, val if hard == resource.RLIM_INFINITY else min(val, hard)))
    return tuple(plan)


def apply_limits(plan: tuple[tuple[int, int], ...]) -> None:
    for res, val in plan:
        try:
            resource.setrlimit(res, (val, val))
        except (ValueError, OSError):
            pass
