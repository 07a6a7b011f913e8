"""The seccomp filter: one test per class of refused system call, each reported as a signal.

The calls are made with raw `syscall(2)` numbers from the filter's own table, so the tests run
on every architecture the filter knows.
"""

import platform

import pytest

from selfplay.verifier.inside import seccomp

NR = seccomp.ARCHES[platform.machine()][2]

PROGRAM = """
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

TEST_PROCESS = -999  # stands for the test process: PID 1 of the row's namespace


def call(nr, *args):
    args = [1 if a == TEST_PROCESS else a for a in args]
    rc = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    return rc, ctypes.get_errno()

def sock(family, kind):
    try:
        socket.socket(family, kind).close()
        return "opened"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
"""

CALLS = {
    # a nested user namespace (full capabilities inside it), by unshare and by clone
    "unshare(CLONE_NEWUSER)": (NR["unshare"], 0x10000000),
    "clone(CLONE_NEWUSER)": (NR["clone"], 0x10000000 | 17, 0, 0, 0, 0),
    "setns": (NR["setns"], 0, 0),
    "mount": (NR["mount"], 0, 0, 0, 0, 0),
    "ptrace(PTRACE_ATTACH, test process)": (NR["ptrace"], 16, "PPID", 0, 0),
    "process_vm_readv": (NR["process_vm_readv"], "PPID", 0, 0, 0, 0, 0),
    "keyctl": (NR["keyctl"], 0, -3, 0, 0),
    "bpf": (NR["bpf"], 0, 0, 0),
    "perf_event_open": (NR["perf_event_open"], 0, 0, -1, -1, 0),
    "userfaultfd": (NR["userfaultfd"], 0),
    "io_uring_setup": (NR["io_uring_setup"], 1, 0),
    "init_module": (NR["init_module"], 0, 0, 0),
    "kexec_load": (NR["kexec_load"], 0, 0, 0, 0),
    # the test process shares the solution's uid: its limits and priority are out of reach
    "prlimit64(test process)": (NR["prlimit64"], "PPID", 7, 0, 0),
    "setpriority(test process)": (NR["setpriority"], 0, "PPID", 19),
    "sched_setaffinity(test process)": (NR["sched_setaffinity"], "PPID", 0, 0),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_refused_system_call(grade, name):
    nr, *args = CALLS[name]
    args = ", ".join("TEST_PROCESS" if a == "PPID" else str(a) for a in args)
    v = grade(PROGRAM, [], calls=[f"call({nr}, {args})" if args else f"call({nr})"])
    assert v.outputs == ["(-1, 1)"], (name, v.outputs, v.detail)  # EPERM
    assert "seccomp_denied" in v.signals


@pytest.mark.parametrize(
    "family, kind",
    [
        ("AF_NETLINK", "SOCK_RAW"),
        ("AF_PACKET", "SOCK_RAW"),
        ("AF_VSOCK", "SOCK_RAW"),
        ("AF_ALG", "SOCK_RAW"),
        # no network to reach, but a failed send moves the worker's network counters
        ("AF_INET", "SOCK_DGRAM"),
        ("AF_INET6", "SOCK_STREAM"),
    ],
)
def test_refused_socket_families(grade, family, kind):
    v = grade(PROGRAM, [], calls=[f"sock(socket.{family}, socket.{kind})"])
    assert v.outputs == ["'EPERM'"], (family, v.outputs, v.detail)
    assert "seccomp_denied" in v.signals


def test_ordinary_sockets_threads_and_processes_still_work(grade):
    program = PROGRAM + (
        "import threading, multiprocessing, subprocess, sys\n"
        "def ordinary():\n"
        "    a, b = socket.socketpair()\n"
        "    a.send(b'x'); got = b.recv(1)\n"
        "    t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n        os._exit(7)\n"
        "    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
        "    out = subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True).stdout\n"
        "    import resource\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))\n"
        "    os.setpriority(os.PRIO_PROCESS, 0, 1)\n"
        "    return got, code, out, sock(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    )
    v = grade(program, [], calls=["ordinary()"], timeout_s=20)
    assert v.outputs == ["(b'x', 7, b'1\\n', 'opened')"], (v.outputs, v.detail)
    assert "seccomp_denied" not in v.signals


ZYGOTE_CALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def zygote_calls():
    def rc(value):
        return value, ctypes.get_errno()

    ns = os.open("/proc/self/ns/pid", os.O_RDONLY)
    return [
        rc(libc.syscall(NR_UNSHARE, ctypes.c_long(0x20000000 | 0x08000000))),
        rc(libc.syscall(NR_SETNS, ctypes.c_long(ns), ctypes.c_long(0x20000000))),
        rc(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", ctypes.c_ulong(2 | 4), None)),
        rc(libc.mount(None, b"/tmp", None, ctypes.c_ulong(32 | 4096 | 1 | 2 | 4), None)),
        rc(libc.umount2(b"/run/selfplay", 2)),
    ]
"""


def test_the_zygotes_own_calls_fail_for_a_row(grade):
    # The filter lets the zygote's exact calls through (it installed the filter on itself);
    # the kernel refuses them to a process without capabilities, and a row has none.
    program = ZYGOTE_CALLS.replace("NR_UNSHARE", str(NR["unshare"]))
    program = program.replace("NR_SETNS", str(NR["setns"]))
    v = grade(program, [], calls=["zygote_calls()"])
    assert v.outputs == [repr([(-1, 1)] * 5)], (v.outputs, v.detail)  # EPERM each
    assert "seccomp_denied" not in v.signals


def test_the_tests_own_refused_calls_fail_without_a_signal(grade):
    # A refused call made by the tests (in the test process) is the task's doing, not the
    # program's: EPERM, and the verdict carries no signal against the program.
    tests = [
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"assert libc.syscall({NR['keyctl']}, 0, -3, 0, 0) == -1\n"
        "assert ctypes.get_errno() == 1\n"
        "assert f() == 1\n"
    ]
    v = grade("def f():\n    return 1\n", tests)
    assert v.passed, v.detail
    assert "seccomp_denied" not in v.signals


def test_a_refused_call_from_a_thread_of_the_tests_carries_no_signal(grade):
    tests = [
        "import ctypes, threading\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "got = []\n"
        "def refused():\n"
        f"    got.append((libc.syscall({NR['keyctl']}, 0, -3, 0, 0), ctypes.get_errno()))\n"
        "t = threading.Thread(target=refused)\n"
        "t.start(); t.join()\n"
        "assert got == [(-1, 1)], got\n"
        "assert f() == 1\n"
    ]
    v = grade("def f():\n    return 1\n", tests)
    assert v.passed, v.detail
    assert "seccomp_denied" not in v.signals


def test_without_the_filters_listener_the_filter_still_refuses():
    # Before Linux 5.0 a filter has no listener: the zygote installs one that the kernel
    # answers EPERM itself, and says so; refusals then carry no signal.
    from selfplay.verifier.sandbox import Worker

    worker = Worker(use_bwrap=True, zygote_options={"seccomp_notify": False})
    worker.start()
    try:
        assert worker.facts["seccomp"] is True, worker.facts
        limits = {"timeout_s": 10, "memory_mb": 512, "file_mb": 16, "max_procs": 64,
                  "max_output_bytes": 1 << 20, "result_items": 10_000}  # fmt: skip
        calls = [f"call({NR['keyctl']}, 0, -3, 0, 0)", "sock(socket.AF_NETLINK, socket.SOCK_RAW)"]
        raw = worker.grade({"program": PROGRAM, "tests": [], "calls": calls, "limits": limits})
    finally:
        worker.stop()
    assert raw["outputs"] == ["(-1, 1)", "'EPERM'"], raw
    assert "seccomp_denied" not in raw["signals"]
