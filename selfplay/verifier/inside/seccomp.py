"""A seccomp filter for the processes that run a row: system calls no graded program needs.

The filter is a classic BPF program built here (no libseccomp). The zygote installs it on
itself once, when it starts, and every process it forks (a row's test and solution processes,
and whatever they start) inherits it: installing a filter in each row's processes cost a
twentieth of a row's time (the kernel compiles every filter, and frees it at exit through a
worker thread). What it refuses, and why:

| refused | why |
|---|---|
| `unshare`, `setns`, `clone`/`clone3` with namespace flags | a new user namespace gives a row every capability inside it, and with them new mount and network namespaces: the kernel's largest attack surface for an unprivileged process |
| `mount`, `umount2`, `pivot_root`, `chroot`, the new mount API (`open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`) | changing what the filesystem shows |
| `ptrace`, `process_vm_readv`, `process_vm_writev`, `pidfd_getfd`, `kcmp` | reading or steering another process (the test process holds the expected values) |
| `keyctl`, `add_key`, `request_key` | kernel keyrings belong to the user, not the row: one row could leave data for the next |
| `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_setup`/`enter`/`register` | large, often-exploited kernel interfaces; `userfaultfd` makes kernel races reliable and io_uring bypasses this filter for the operations it submits |
| `kexec_load`, `kexec_file_load`, `init_module`, `finit_module`, `delete_module`, `reboot`, `swapon`, `swapoff`, `acct`, `quotactl`, `syslog`, `vhangup`, `iopl`, `ioperm`, `open_by_handle_at`, `name_to_handle_at`, `settimeofday`, `clock_settime`, `clock_adjtime`, `adjtimex`, `sethostname`, `setdomainname`, `memfd_secret` | administration; all but useless without privileges, refused so that a kernel bug in them is out of reach |
| `mincore`, `cachestat`, `readahead`, `fadvise64`, `process_madvise`, `io_setup`; `preadv2`/`pwritev2` with `RWF_NOWAIT`; `madvise` with `MADV_COLD` or `MADV_PAGEOUT` | the page cache is the host's: these ask the kernel which pages of a file are cached, or drop them, which one row could use to leave bits for the next (Linux AIO can read with `RWF_NOWAIT` too). Reading a file still loads its pages: `selfplay.verifier` says what remains |
| `socket` of any family but AF_UNIX | AF_NETLINK, AF_PACKET, AF_VSOCK, AF_ALG, AF_KEY and the rest reach kernel subsystems or the host (vsock) that no graded program uses; AF_INET and AF_INET6 reach nothing (the sandbox has no network, not even loopback) but move the worker's network counters (a failed send counts in /proc/net/snmp), which a later row could read |
| `prlimit64`, `setpriority`, `ioprio_set` and the `sched_set*` calls aimed at another process | the solution shares its uid with the test process: without this it could lower the test process's limits or priority |
| every system call of another ABI (x32, or 32-bit `int 0x80` on x86-64) | the filter's numbers would not apply to them |

`clone3` is answered ENOSYS (its flags sit behind a pointer the filter cannot read), on which
the C library falls back to `clone`, whose flags it can. The zygote's own calls among these are
let through by their exact arguments (`ZYGOTE_CALLS`: unsharing a row's PID and IPC namespaces,
returning to its own, mounting and lazily unmounting the scratch tmpfs); a row's process makes
the same call in vain, since the kernel checks for CAP_SYS_ADMIN before anything else and a
row has no capabilities. Everything else refused is reported to the zygote
(`SECCOMP_RET_USER_NOTIF`), which answers EPERM at once and reports the call with the row's
verdict: a `seccomp_denied` signal for the solution's calls, nothing for the test process's
own (the tests'). The zygote never makes a refused call itself: it would wait on itself.
Before Linux 5.0 a filter has no listener: the zygote then installs the same filter with the
kernel answering EPERM itself, and refusals carry no signal.
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import platform
import struct

from . import osutil

_libc = ctypes.CDLL(None, use_errno=True)

# Namespace flags of clone(2) and unshare(2).
NS_FLAGS = 0x10000000 | 0x20000 | 0x20000000 | 0x40000000 | 0x08000000 | 0x04000000 | 0x02000000
ALLOWED_SOCKET_FAMILIES = (1,)  # AF_UNIX

# Denied outright, by name; the numbers come from the table of the running architecture.
DENIED = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "vhangup",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "name_to_handle_at",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "memfd_secret",
    # The page cache (see the table above).
    "mincore",
    "cachestat",
    "readahead",
    "fadvise64",
    "process_madvise",
    "io_setup",
)

# Calls refused only for some flags or advice: (name, index of the argument, bits or values).
RWF_NOWAIT = 0x8
NOWAIT_FLAGS = (("preadv2", 5), ("pwritev2", 5))  # flags: the sixth argument
MADV_COLD, MADV_PAGEOUT = 20, 21

# Calls allowed only on the calling process itself: (name, index of the pid argument).
SELF_ONLY = (
    ("prlimit64", 0),
    ("setpriority", 1),
    ("ioprio_set", 1),
    ("sched_setparam", 0),
    ("sched_setscheduler", 0),
    ("sched_setaffinity", 0),
    ("sched_setattr", 0),
)

# (audit arch, seccomp syscall number, {name: number}); numbers from the kernel's tables.
_COMMON_NEW = {
    "process_madvise": 440,
    "cachestat": 451,
    "pidfd_getfd": 438,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
    "memfd_secret": 447,
}
ARCHES = {
    "x86_64": (
        0xC000003E,
        317,
        {
            "socket": 41,
            "clone": 56,
            "ptrace": 101,
            "syslog": 103,
            "vhangup": 153,
            "pivot_root": 155,
            "adjtimex": 159,
            "chroot": 161,
            "acct": 163,
            "settimeofday": 164,
            "mount": 165,
            "umount2": 166,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "sethostname": 170,
            "setdomainname": 171,
            "iopl": 172,
            "ioperm": 173,
            "init_module": 175,
            "delete_module": 176,
            "quotactl": 179,
            "clock_settime": 227,
            "kexec_load": 246,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "perf_event_open": 298,
            "name_to_handle_at": 303,
            "open_by_handle_at": 304,
            "clock_adjtime": 305,
            "setns": 308,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "finit_module": 313,
            "kexec_file_load": 320,
            "bpf": 321,
            "userfaultfd": 323,
            "prlimit64": 302,
            "setpriority": 141,
            "ioprio_set": 251,
            "sched_setparam": 142,
            "sched_setscheduler": 144,
            "sched_setaffinity": 203,
            "sched_setattr": 314,
            "mincore": 27,
            "madvise": 28,
            "readahead": 187,
            "io_setup": 206,
            "fadvise64": 221,
            "preadv2": 327,
            "pwritev2": 328,
            **_COMMON_NEW,
        },
    ),
    "aarch64": (
        0xC00000B7,
        277,
        {
            "socket": 198,
            "clone": 220,
            "ptrace": 117,
            "syslog": 116,
            "vhangup": 58,
            "pivot_root": 41,
            "adjtimex": 171,
            "chroot": 51,
            "acct": 89,
            "settimeofday": 170,
            "mount": 40,
            "umount2": 39,
            "swapon": 224,
            "swapoff": 225,
            "reboot": 142,
            "sethostname": 161,
            "setdomainname": 162,
            "init_module": 105,
            "delete_module": 106,
            "quotactl": 60,
            "clock_settime": 112,
            "kexec_load": 104,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "unshare": 97,
            "perf_event_open": 241,
            "name_to_handle_at": 264,
            "open_by_handle_at": 265,
            "clock_adjtime": 266,
            "setns": 268,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kcmp": 272,
            "finit_module": 273,
            "kexec_file_load": 294,
            "bpf": 280,
            "userfaultfd": 282,
            "prlimit64": 261,
            "setpriority": 140,
            "ioprio_set": 30,
            "sched_setparam": 118,
            "sched_setscheduler": 119,
            "sched_setaffinity": 122,
            "sched_setattr": 274,
            "mincore": 232,
            "madvise": 233,
            "readahead": 213,
            "io_setup": 0,
            "fadvise64": 223,
            "preadv2": 286,
            "pwritev2": 287,
            **_COMMON_NEW,
        },
    ),
}

# BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_USER_NOTIF = 0x7FC00000
RET_ERRNO = 0x00050000
_SET_MODE_FILTER = 1
_FLAG_NEW_LISTENER = 1 << 3
_NOTIF_RECV = 0xC0502100
_NOTIF_SEND = 0xC0182101
_NOTIF = struct.Struct("<QII iI Q 6Q")  # id, pid, flags, nr, arch, ip, args[6]
_RESP = struct.Struct("<QqiI")  # id, val, error, flags


def _arch():
    return ARCHES.get(platform.machine())


_SYSCALL_NR = (_arch() or (0, -1))[1]


def names_by_number() -> dict[int, str]:
    arch = _arch()
    return {} if arch is None else {nr: name for name, nr in arch[2].items()}


# The zygote's own calls among the refused ones, let through by their exact arguments:
# name -> (index of the argument, the values the zygote passes). See osutil.
ZYGOTE_CALLS = {
    "unshare": (0, (osutil.CLONE_NEWPID | osutil.CLONE_NEWIPC,)),
    "setns": (1, (osutil.CLONE_NEWPID, osutil.CLONE_NEWIPC)),
    "mount": (3, (osutil.MS_NOSUID | osutil.MS_NODEV, osutil.READ_ONLY_REMOUNT)),
    "umount2": (1, (osutil.MNT_DETACH,)),
}


def build(deny_action: int, machine: str | None = None) -> bytes:
    """The filter program as bytes (struct sock_filter[]) for an architecture (this machine's
    by default).

    The system call number is looked up in a binary decision tree over the numbers the filter
    treats specially, not compared with each in turn: every system call of a row pays about
    eight comparisons instead of seventy, and installing the filter stays cheap (the kernel
    runs the program once per system call number when it is installed, to cache the calls it
    always allows)."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        raise OSError(errno.ENOSYS, f"no seccomp table for {machine or platform.machine()}")
    audit_arch, _, table = arch
    deny_errno = RET_ERRNO | errno.EPERM
    allow = [(_RET_K, 0, 0, RET_ALLOW)]
    deny = [(_RET_K, 0, 0, deny_action)]

    def only(arg: int, values) -> list[tuple[int, int, int, int]]:
        """Allowed where argument `arg` (its low 32 bits) is one of `values`."""
        code = [(_LD_W_ABS, 0, 0, 16 + 8 * arg)]
        for i, value in enumerate(values):
            code.append((_JEQ_K, len(values) - i, 0, value))
        return code + deny + allow

    def handler(nr: int) -> list[tuple[int, int, int, int]]:
        """What a call with this number does (ends in a return)."""
        if nr == table["clone3"]:
            return [(_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
        if nr == table["clone"]:  # refuse namespace flags, allow the rest (fork, threads)
            return [(_LD_W_ABS, 0, 0, 16), (_JSET_K, 0, 1, NS_FLAGS), *deny, *allow]
        if nr == table["socket"]:  # only the families in the allowlist
            return only(0, ALLOWED_SOCKET_FAMILIES)
        for name, arg in NOWAIT_FLAGS:  # a read that fails rather than wait for the disk
            if nr == table[name]:
                return [(_LD_W_ABS, 0, 0, 16 + 8 * arg), (_JSET_K, 0, 1, RWF_NOWAIT), *deny,
                        *allow]  # fmt: skip
        if nr == table["madvise"]:  # advice that evicts file pages; the rest (allocators) goes
            return [(_LD_W_ABS, 0, 0, 16 + 8 * 2), (_JEQ_K, 1, 0, MADV_COLD),
                    (_JEQ_K, 0, 1, MADV_PAGEOUT), *deny, *allow]  # fmt: skip
        for name, arg in SELF_ONLY:  # pid 0 means the caller itself
            if nr == table[name]:
                return only(arg, (0,))
        for name, (arg, values) in ZYGOTE_CALLS.items():
            if nr == table[name]:
                return only(arg, values)
        return list(deny)

    def tree(nrs: list[int]) -> list[tuple[int, int, int, int]]:
        """Code that ends in a return for every number; `nrs` sorted, all special."""
        if len(nrs) <= 2:
            code = list(allow)
            for nr in reversed(nrs):  # built back to front: each test skips its handler
                body = handler(nr)
                code = [(_JEQ_K, 0, len(body), nr), *body, *code]
            return code
        mid = len(nrs) // 2
        left, right = tree(nrs[:mid]), tree(nrs[mid:])
        if len(left) > 255:
            raise ValueError("seccomp filter too large for one jump")
        return [(_JGE_K, len(left), 0, nrs[mid]), *left, *right]

    special = {table[name] for name in DENIED if name in table}  # iopl, ioperm: x86 only
    special |= {table["clone3"], table["clone"], table["socket"]}
    special |= {table[name] for name, _ in SELF_ONLY}
    special |= {table[name] for name, _ in NOWAIT_FLAGS} | {table["madvise"]}
    # Offsets in struct seccomp_data: nr 0, arch 4, args[0] (low word) 16.
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, audit_arch), (_RET_K, 0, 0, deny_errno)]
    prog.append((_LD_W_ABS, 0, 0, 0))
    if audit_arch == ARCHES["x86_64"][0]:  # the x32 ABI
        prog += [(_JGE_K, 0, 1, 0x40000000), (_RET_K, 0, 0, deny_errno)]
    prog += tree(sorted(special))
    return b"".join(struct.pack("<HBBI", code, jt, jf, k) for code, jt, jf, k in prog)


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install(notify: bool = True) -> int | None:
    """Install the filter on this process, and so on everything it forks from now on (the
    zygote does, once). With `notify` (Linux 5.0 and later) refusals are reported on the
    listener returned; without, the kernel answers them EPERM itself and None is returned.
    Raises OSError where the kernel refuses."""
    code = build(RET_USER_NOTIF if notify else RET_ERRNO | errno.EPERM)
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Prog(len(code) // 8, ctypes.cast(buf, ctypes.c_char_p))
    flags = _FLAG_NEW_LISTENER if notify else 0
    rc = _libc.syscall(_SYSCALL_NR, _SET_MODE_FILTER, flags, ctypes.byref(prog))
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc if notify else None


class Refusals:
    """The zygote's end of the filter: receives a refused call, answers it EPERM and says
    which it was. A notification carries the call's arguments, which the row chose: it is
    read into, and answered from, memory that the zygote's children do not inherit
    (MADV_DONTFORK), never into the zygote's heap or stack, and no value the row chose
    becomes a Python object here (the names reported are made before any row: a socket's
    family by its low byte, a small integer CPython never allocates)."""

    def __init__(self, listener: int):
        self.listener = listener
        self.names = names_by_number()
        self.buf = mmap.mmap(-1, mmap.PAGESIZE)
        try:
            self.buf.madvise(mmap.MADV_DONTFORK)
        except (AttributeError, OSError):
            pass
        base = ctypes.addressof(ctypes.c_char.from_buffer(self.buf))
        self.notif, self.resp = ctypes.c_void_p(base), ctypes.c_void_p(base + 512)

    def answer(self, exempt=None) -> str | None:
        """Answer one refused call EPERM; the call's name, or None if there was none to
        receive or `exempt(tid)` says its caller (a thread id as this process numbers it) is
        not the program's. `exempt` is asked before the caller is answered, while it still
        waits in the call."""
        self.buf[: len(_ZEROS)] = _ZEROS  # the kernel wants the place cleared
        if _libc.ioctl(self.listener, _NOTIF_RECV, self.notif) != 0:
            return None
        notif_id, tid, nr = _NOTIF_HEAD.unpack_from(self.buf)
        name = self.names.get(nr, "?")  # only the filter's own numbers are ever refused
        if name == "socket":
            name = _SOCKET_NAMES[self.buf[_ARG0_OFFSET]]
        if exempt is not None and exempt(tid):
            name = None
        _RESP.pack_into(self.buf, 512, notif_id, 0, -errno.EPERM, 0)
        _libc.ioctl(self.listener, _NOTIF_SEND, self.resp)  # fails if the caller was killed
        return name


_ZEROS = bytes(_NOTIF.size)
_NOTIF_HEAD = struct.Struct("<QI4xi")  # id, pid, (flags), nr
_ARG0_OFFSET = 32  # args[0], after nr, arch and the instruction pointer
_SOCKET_NAMES = tuple(f"socket({family})" for family in range(256))
