"""Host side of one sandboxed worker: the zygote process and the socket to it (the sandbox it
runs in is `bwrap`'s).

`Worker` owns one zygote process. It sends a row, waits for the verdict with a hard deadline
of its own (in case the zygote itself is wedged) and restarts the zygote when it dies.
"""

from __future__ import annotations

import dis
import functools
import json
import marshal
import os
import signal
import socket
import subprocess
import sys
import time
import types
import warnings
from dataclasses import dataclass, field

from selfplay.verifier.bwrap import (
    INSIDE_DIR,
    MOUNT_POINT,
    SANDBOX_ENV,
    bwrap_command,
    python_roots,
    root_mounts,
    sandbox_readable,
    sandbox_sys_path,
)
from selfplay.verifier.inside.rowprocs import REPLY, USAGE
from selfplay.verifier.readable import Readable, default_packages

# argv: [paths (JSON), package name, config (JSON)]
_BOOT = (
    "import sys,json,importlib;sys.path[:]=json.loads(sys.argv[1]);"
    "m=importlib.import_module(sys.argv[2]+'.zygote');sys.argv=sys.argv[2:];m.main()"
)


class IsolationUnavailable(RuntimeError):
    """The sandbox cannot be set up here (or a worker came back without it); the message is
    one sentence naming the cause and the fix. Nothing runs without the sandbox unless
    isolation "none" was asked for."""


MODES = ("sandbox", "none")
# What a sandboxed worker must have, or no row runs in it.
REQUIRED = {
    "sandbox": "bubblewrap sandbox",
    "pid_namespace": "per-row PID namespace",
    "ipc_namespace": "per-row IPC namespace",
    "private_scratch": "private scratch space renewed between rows",
    "privileges_dropped": "dropped capabilities",
    "kernel_settings_read_only": "read-only kernel settings (/proc/sys)",
    "kernel_counters_still": "still copies of /proc's kernel-wide counters, no page tables",
    "seccomp": "seccomp filter",
}
_FIX = (
    "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0)"
)


def isolation_mode(asked: str | None) -> str:
    """The isolation asked for: the argument, else SELFPLAY_ISOLATION, else "sandbox"."""
    mode = asked if asked is not None else os.environ.get("SELFPLAY_ISOLATION") or "sandbox"
    if mode not in MODES:
        raise ValueError(f"isolation must be 'sandbox' or 'none', got {mode!r}")
    return mode


def refusal(cause: str) -> str:
    return (
        f"the sandbox cannot be set up: {cause}; {_FIX}. To run untrusted code without a "
        "sandbox anyway, pass --isolation none (or SELFPLAY_ISOLATION=none)"
    )


def missing(facts: dict) -> list[str]:
    """What a sandboxed worker's facts lack, in words."""
    out = [label for key, label in REQUIRED.items() if not facts.get(key)]
    if facts.get("network", True):
        out.append("isolated network")
    return out


MAX_VERDICT_BYTES = 16 << 20


@dataclass
class Worker:
    """One zygote process; not thread-safe (each pool thread owns one).

    The host talks to the zygote over a SOCK_SEQPACKET socket: per row one small control
    message (the limits) carrying two descriptors, the row as a memfd written here and an empty
    memfd for the test process's verdict lines. The zygote never reads either.
    """

    use_bwrap: bool
    preload: tuple[str, ...] = ()
    cgroup: object | None = None
    scratch_mb: int = 128
    # What rows may read (`bwrap.sandbox_readable`), read into memory by the Verifier; the
    # degraded mode reads the host.
    readable: Readable | None = None
    # Passed to the zygote as they are (`seccomp_notify: False`: what a kernel before 5.0
    # does, without the filter's listener).
    zygote_options: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    failure: Exception | None = None
    proc: subprocess.Popen | None = None
    sock: socket.socket | None = None
    # CPU seconds and page faults so far, by process (`rowprocs.USAGE`).
    usage: list = field(default_factory=lambda: [0.0] * len(USAGE))
    last_usage: tuple = ()

    def start(self) -> None:
        """Start the zygote; a sandboxed one that fails to start (a busy machine can refuse a
        namespace for a moment) is tried three times, and one that starts without every
        isolation property is refused, never used."""
        for attempt in range(3):
            try:
                self._start()
                break
            except RuntimeError:
                if attempt == 2 or not self.use_bwrap:
                    raise
                time.sleep(0.5 * (attempt + 1))
        if self.use_bwrap and missing(self.facts):
            lacking = ", ".join(missing(self.facts))
            self.stop()
            raise IsolationUnavailable(refusal(f"the sandbox worker started without {lacking}"))

    def _start(self) -> None:
        python = os.path.realpath(sys.executable)
        config = {"sandboxed": self.use_bwrap, "preload": list(self.preload)}
        config["scratch_mb"] = self.scratch_mb
        config.update(self.zygote_options)
        if self.use_bwrap:
            mounts = root_mounts()
            readable = self.readable
            if readable is None:  # a worker made on its own, not by a Verifier: the same
                readable = sandbox_readable(default_packages())  # set, read before rows run
                readable.keep_warm()
            prefix, env = bwrap_command(python, mounts, readable, self.scratch_mb), {}
            root, package = os.path.dirname(MOUNT_POINT), os.path.basename(MOUNT_POINT)
            paths = [root, *sandbox_sys_path(mounts)]
        else:
            # Degraded mode: no namespaces, the zygote runs as a plain child process.
            prefix, env = [python], dict(SANDBOX_ENV)
            root, package = str(INSIDE_DIR.parent), INSIDE_DIR.name
            paths = [root, *sandbox_sys_path([(r, r) for r in python_roots()])]
        argv = [
            *prefix,
            "-I",
            "-S",
            "-B",
            "-c",
            _BOOT,
            json.dumps(paths),
            package,
            json.dumps(config),
        ]
        if self.cgroup is not None:
            argv = self.cgroup.wrap(argv)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=theirs,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                close_fds=True,
            )
        finally:
            theirs.close()
        self.sock = ours
        self.last_usage = ()
        hello = self._recv(deadline=time.monotonic() + 60)
        if not hello or not hello.get("ready"):
            self.stop()
            raise RuntimeError("the sandbox worker failed to start")
        self.facts = hello["facts"]

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()
        if proc is None:
            return
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _count(self, now: tuple) -> None:
        """Add what the zygote's processes cost since its last reply (a new zygote counts
        from zero: `start` forgets the last reply)."""
        last = self.last_usage or (0.0,) * len(now)
        self.usage = [u + n - b for u, n, b in zip(self.usage, now, last, strict=True)]
        self.last_usage = now

    def _recv(self, deadline: float) -> dict | None:
        import select

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([self.sock], [], [], remaining)
        if not ready:
            return None
        data = self.sock.recv(1 << 16)
        if not data:
            return None
        if data[:1] == b"R" and len(data) >= REPLY.size:
            fields = REPLY.unpack_from(data)
            refused = data[REPLY.size :].decode(errors="replace")
            _, status, timed_out, duration, fork, received, done, teardown = fields[:8]
            self._count(fields[8:])
            return {
                "status": status,
                "timed_out": bool(timed_out),
                "duration_s": duration,
                "fork_s": fork,
                "t_received": received,
                "t_done": done,
                "teardown_s": teardown,
                "refused": refused.split("\0") if refused else [],
            }
        return json.loads(data)

    def grade(self, request: dict) -> dict:
        """Send one row, return its raw verdict; a dead or wedged zygote is replaced and the
        row reported as an error. A zygote that retired (it could not clean up after the
        previous row) never read this row: the row goes to its replacement."""
        for _ in range(2):
            if self.proc is None or self.proc.poll() is not None:
                self.stop()
                self.start()
            verdict = self._send(request)
            if verdict is not None:
                return verdict
            self.stop()
        raise RuntimeError("two fresh sandbox workers retired without grading a row")

    def _send(self, request: dict) -> dict | None:
        limits = request["limits"]
        row = {k: request[k] for k in ("program", "tests", "calls")}
        # The tests and calls compiled here, once for every row that shares them (a task's
        # tests are graded once per sample): the test process only loads them.
        row["test_code"] = [
            compiled(t, f"<test {i}>", "exec") if isinstance(t, str) else None
            for i, t in enumerate(row["tests"])
        ]
        row["call_code"] = [compiled(c, f"<call {j}>", "eval") for j, c in enumerate(row["calls"])]
        # The names the tests and calls bind themselves: the tests', whatever the program
        # does to its own globals of those names.
        owned: set[str] = set()
        for i, t in enumerate(row["tests"]):
            if isinstance(t, str):
                owned |= bound_names(t, f"<test {i}>", "exec")
        for j, c in enumerate(row["calls"]):
            owned |= bound_names(c, f"<call {j}>", "eval")
        row["owned"] = sorted(owned)
        row_fd = os.memfd_create("selfplay-row", os.MFD_CLOEXEC)
        out_fd = os.memfd_create("selfplay-verdict", os.MFD_CLOEXEC)
        start = time.monotonic()
        try:
            # marshal, not JSON: it is the test process's first work on the row, and in a
            # freshly forked process the JSON decoder costs page faults.
            _write_all(row_fd, marshal.dumps(row))
            control = json.dumps({"limits": limits}).encode()
            try:
                socket.send_fds(self.sock, [control], [row_fd, out_fd])
                os.close(row_fd)
                row_fd = -1
                # The zygote enforces the time limit; this deadline only catches a wedged one.
                reply = self._recv(time.monotonic() + limits["timeout_s"] + 30)
            except (BrokenPipeError, OSError, ValueError):
                reply = None
            if reply is not None and reply.get("retired"):
                return None
            if reply is None or "status" not in reply:
                self.stop()
                return {
                    "status": "error",
                    "tests_passed": 0,
                    "duration_s": 0.0,
                    "detail": "the sandbox worker died; it was restarted",
                }
            lines = os.pread(out_fd, MAX_VERDICT_BYTES, 0)
        finally:
            if row_fd >= 0:
                os.close(row_fd)
            os.close(out_fd)
        verdict = assemble(lines, reply)
        verdict.setdefault("phases", {})["round_trip"] = time.monotonic() - start
        return verdict


# compile() warns about the tests' own code (`is` with a literal, invalid escapes): that is the
# test process's business, not this process's stderr.
for _category in (SyntaxWarning, DeprecationWarning):
    warnings.filterwarnings("ignore", category=_category, module=r"<(test|call) \d+>\Z")


@functools.lru_cache(maxsize=2048)
def compiled(source: str, filename: str, mode: str) -> bytes | None:
    """A test or call compiled exactly as the test process would (marshal; the sandbox runs
    this interpreter), or None where it does not compile (the test process then reports
    why). The tests come from the task bank, whose importers and checks already parse them
    here; programs are never compiled outside the sandbox."""
    try:
        return marshal.dumps(compile(source, filename, mode, dont_inherit=True))
    except Exception:
        return None


_GLOBAL_OPS = frozenset(("STORE_GLOBAL", "DELETE_GLOBAL"))
_BINDING_OPS = _GLOBAL_OPS | {"STORE_NAME", "DELETE_NAME"}


@functools.lru_cache(maxsize=2048)
def bound_names(source: str, filename: str, mode: str) -> frozenset[str]:
    """The module-level names a test or call binds (assignments, imports, definitions, loop
    targets, and `global` statements in its functions), read from its bytecode."""
    try:
        code = compile(source, filename, mode, dont_inherit=True)
    except Exception:
        return frozenset()
    names: set[str] = set()
    stack = [(code, _BINDING_OPS)]
    while stack:
        co, ops = stack.pop()
        for ins in dis.get_instructions(co):
            if ins.opname in ops:
                names.add(ins.argval)
        # In a function or class body only `global` names are the module's.
        stack.extend((c, _GLOBAL_OPS) for c in co.co_consts if isinstance(c, types.CodeType))
    return frozenset(names)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def assemble(lines: bytes, reply: dict) -> dict:
    """The row's verdict from the test process's lines and the zygote's account of its end."""
    passed_so_far, verdict, seen = 0, None, []
    for line in lines.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        if isinstance(msg.get("p"), int):
            passed_so_far = msg["p"]
        elif isinstance(msg.get("s"), str):
            seen.append(msg["s"])
        elif isinstance(msg.get("v"), dict):
            verdict = msg["v"]
    status = reply.get("status", 0)
    if verdict is None:
        if reply.get("timed_out"):
            verdict = {"status": "timeout", "detail": "time limit exceeded"}
        elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
            verdict = {"status": "timeout", "detail": "CPU time limit exceeded"}
        elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            verdict = {"status": "memory", "detail": "test process was killed (out of memory)"}
        else:
            verdict = {"status": "error", "detail": "test process ended without a verdict"}
        verdict["tests_passed"] = passed_so_far
    if reply.get("refused"):  # answered by the zygote (`seccomp.Refusals`), the program's
        seen.append("seccomp_denied")
    own = verdict.get("signals")
    verdict["signals"] = sorted(set(seen) | set(own if isinstance(own, list) else []))
    verdict["duration_s"] = reply.get("duration_s", 0.0)
    phases = verdict.get("phases") if isinstance(verdict.get("phases"), dict) else {}
    # Monotonic instants from the zygote and the test process become durations. fork, setup
    # and spawn happened before the row arrived, teardown (of the worker's previous row) after
    # its verdict was sent: none of them is on the row's path.
    phases["fork"] = reply.get("fork_s", 0.0)
    phases["teardown"] = reply.get("teardown_s", 0.0)
    go, end = phases.pop("t_go", None), phases.pop("t_end", None)
    if isinstance(go, float) and isinstance(reply.get("t_received"), float):
        phases["handoff"] = go - reply["t_received"]
    if isinstance(end, float) and isinstance(reply.get("t_done"), float):
        phases["finish"] = reply["t_done"] - end
    phases["zygote"] = reply.get("duration_s", 0.0)
    verdict["phases"] = phases
    return verdict
