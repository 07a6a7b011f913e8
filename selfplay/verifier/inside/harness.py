"""The test process: runs a row's tests in a clean interpreter against a remote solution.

The tests never share an interpreter with the program. Names the program defines reach the
tests as `Remote` proxies whose calls are forwarded to the solution process and answered with
plain data (exact built-in types) or opaque handles. Consequences, by attack class:
- early exit, signals, atexit: only end the solution process; the verdict is written here;
- `__eq__` tricks: a returned object is a handle, and a handle never compares equal to plain
  test data (comparisons between two handles use the program's own `__eq__`);
- patched builtins or standard library: they are patched in the other process;
- forged output: the verdict channel is not the program's stdout, and the program never holds it;
- introspection: the expected values live in this process, which the program cannot read.
"""

from __future__ import annotations

import builtins
import importlib
import json
import os
import select
import signal
import socket
import sys
import traceback

from . import osutil, solution, wire


class SolutionGone(Exception):
    """The solution process died or broke the protocol; the row cannot go on."""

    def __init__(self, detail: str, status: str = "error"):
        super().__init__(detail)
        self.status = status


class RemoteError(Exception):
    """An exception of a type that is not a built-in exception, raised by the program."""


_EXC_TYPES = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, Exception)
}


_BUILTIN_NAMES = frozenset(vars(builtins))


def _exception(name: str, message: str):
    cls = _EXC_TYPES.get(name)
    if cls is None:
        return RemoteError(f"{name}: {message}")
    try:
        return cls(message)
    except Exception:
        return RemoteError(f"{name}: {message}")


def _spawn(limits: dict, target, stdin_data: bytes = b"", with_socket: bool = True):
    """Fork a solution process that runs `target(fd)`; returns (pid, sock, out_fd, err_fd)."""
    parent_sock, child_sock = socket.socketpair() if with_socket else (None, None)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin_fd = os.memfd_create("stdin")
    os.write(stdin_fd, stdin_data)
    os.lseek(stdin_fd, 0, os.SEEK_SET)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.dup2(stdin_fd, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            if child_sock is not None:
                os.dup2(child_sock.fileno(), 3)
            osutil.close_fds_from(4)
            osutil.set_limits(
                limits["memory_mb"], limits["file_mb"], limits["max_procs"], limits["timeout_s"]
            )
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            # sys.stdin/stdout/stderr already wrap descriptors 0-2 with empty buffers (the
            # zygote never uses them), so the dup2 calls above are enough: building new
            # wrappers would cost more page faults than the whole program usually does.
            code = target(3)
        except BaseException:
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:
                pass
            os._exit(code if isinstance(code, int) else 1)
    os.close(out_w)
    os.close(err_w)
    os.close(stdin_fd)
    if child_sock is not None:
        child_sock.close()
    return pid, parent_sock, out_r, err_r


class Solution:
    """One solution process and the pipes that carry its output."""

    def __init__(self, limits: dict, target, stdin_data: bytes = b"", with_socket: bool = True):
        self.max_output = limits["max_output_bytes"]
        self.pid, self.sock, self.out_fd, self.err_fd = _spawn(
            limits, target, stdin_data, with_socket
        )
        self.out = bytearray()
        self.err = bytearray()
        self.exit_status: int | None = None

    # -- output -------------------------------------------------------------------------
    def _drain(self, fd: int) -> bool:
        data = os.read(fd, 1 << 16)
        if not data:
            return False
        buf = self.out if fd == self.out_fd else self.err
        buf += data
        if len(self.out) + len(self.err) > self.max_output:
            self.kill()
            raise SolutionGone(f"output exceeded the {self.max_output}-byte limit")
        return True

    def _pump(self, until_fd: int | None) -> None:
        """Drain output until `until_fd` is readable, or until both pipes close."""
        open_fds = [fd for fd in (self.out_fd, self.err_fd) if fd is not None]
        while True:
            watch = open_fds + ([until_fd] if until_fd is not None else [])
            if not watch:
                return
            ready, _, _ = select.select(watch, [], [])
            for fd in ready:
                if fd == until_fd:
                    return
                if not self._drain(fd):
                    open_fds.remove(fd)
                    if fd == self.out_fd:
                        self.out_fd = None
                    else:
                        self.err_fd = None
                    os.close(fd)

    # -- lifecycle ----------------------------------------------------------------------
    def wait(self) -> int:
        self._pump(None)
        if self.exit_status is None:
            _, status = os.waitpid(self.pid, 0)
            self.exit_status = status
        return self.exit_status

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def gone(self) -> SolutionGone:
        """Explain why the channel broke, after the process has ended."""
        self.kill()
        status = self.wait()
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGKILL:
                return SolutionGone("solution process was killed (out of memory)", "memory")
            if sig == signal.SIGXCPU:
                return SolutionGone("solution process ran out of CPU time", "timeout")
            return SolutionGone(f"solution process died of signal {sig}")
        return SolutionGone(
            f"solution process exited with code {os.WEXITSTATUS(status)} before answering"
        )

    # -- calls --------------------------------------------------------------------------
    def recv(self):
        try:
            self._pump(self.sock.fileno())
            return wire.recv(self.sock.fileno())
        except (EOFError, ConnectionError, wire.WireError):
            raise self.gone() from None

    def request(self, op: str, args: tuple, kwargs: dict):
        try:
            wire.send(
                self.sock.fileno(),
                (op, [_ref(a) for a in args], {k: _ref(v) for k, v in kwargs.items()}),
            )
        except (BrokenPipeError, ConnectionError):
            raise self.gone() from None
        reply = self.recv()
        if not isinstance(reply, tuple) or not reply:
            raise self.gone()
        tag = reply[0]
        if tag == "v" and len(reply) == 2:
            try:
                return wire.check_plain(reply[1])
            except wire.WireError as e:
                raise SolutionGone(f"solution sent invalid data: {e}") from None
        if tag == "h" and len(reply) == 3 and type(reply[1]) is int:
            return Remote(self, ("h", reply[1]), str(reply[2])[:100])
        if tag == "x" and len(reply) == 4:
            exc = _exception(str(reply[1]), str(reply[2]))
            exc.solution_tail = str(reply[3])[:1000]
            raise exc
        raise SolutionGone("solution broke the call protocol")


def _ref(value):
    if isinstance(value, Remote):
        return object.__getattribute__(value, "_ref")
    try:
        return ("v", wire.check_plain(value))
    except wire.WireError:
        raise TypeError(
            f"argument of type {type(value).__name__} cannot be passed to the solution "
            "(only plain data and the solution's own objects can)"
        ) from None


def _forward(op: str):
    def method(self, *args):
        return object.__getattribute__(self, "_sol").request(op, (self, *args), {})

    method.__name__ = f"__{op}__"
    return method


def _compare(op: str):
    def method(self, other):
        # Only compare two of the program's own objects; never a program object with test data.
        if not isinstance(other, Remote):
            return NotImplemented
        return object.__getattribute__(self, "_sol").request(op, (self, other), {})

    method.__name__ = f"__{op}__"
    return method


class Remote:
    """A proxy for an object that lives in the solution process."""

    __slots__ = ("_sol", "_ref", "_type")

    def __init__(self, sol: Solution, ref: tuple, type_name: str):
        object.__setattr__(self, "_sol", sol)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_type", type_name)

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, "_sol").request("call", (self, *args), kwargs)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_sol").request("getattr", (self, name), {})

    def __setattr__(self, name, value):
        object.__getattribute__(self, "_sol").request("setattr", (self, name, value), {})

    def __repr__(self):
        sol = object.__getattribute__(self, "_sol")
        value = sol.request("repr", (self,), {})
        return value if type(value) is str else "<remote object>"

    def __str__(self):
        value = object.__getattribute__(self, "_sol").request("str", (self,), {})
        return value if type(value) is str else "<remote object>"

    __hash__ = _forward("hash")
    __eq__ = _compare("eq")
    __ne__ = _compare("ne")
    __lt__ = _compare("lt")
    __le__ = _compare("le")
    __gt__ = _compare("gt")
    __ge__ = _compare("ge")


for _op in (
    "len",
    "iter",
    "next",
    "bool",
    "int",
    "float",
    "index",
    "contains",
    "getitem",
    "setitem",
    "delitem",
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "neg",
    "pos",
    "abs",
    "invert",
    "enter",
    "exit",
):
    setattr(Remote, f"__{_op}__", _forward(_op))


def _namespace(sol: Solution, manifest: dict) -> dict:
    ns: dict = {"__name__": "__test__", "__builtins__": builtins}
    for name, (kind, value) in manifest.items():
        # A program's `len` or `sorted` must not replace the builtins the tests rely on.
        if type(name) is not str or name in _BUILTIN_NAMES:
            continue
        if kind == "module" and type(value) is str:
            try:
                ns[name] = importlib.import_module(value)
            except Exception:
                pass
        elif kind == "value":
            try:
                ns[name] = wire.check_plain(value)
            except wire.WireError:
                pass
        else:
            ns[name] = Remote(sol, ("g", name), "global")
    return ns


def _failure(where: str, exc: BaseException, source: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == where]
    line = ""
    if frames:
        lines = source.splitlines()
        n = frames[-1].lineno or 0
        if 0 < n <= len(lines):
            line = f"\n  line {n}: {lines[n - 1].strip()[:300]}"
    text = f"{where}: {type(exc).__name__}: {str(exc)[:500]}{line}"
    tail = getattr(exc, "solution_tail", "")
    if tail:
        text += f"\n  in the program: {tail}"
    return text


def _status_of(exc: BaseException) -> str:
    if isinstance(exc, SolutionGone):
        return exc.status
    if isinstance(exc, MemoryError):
        return "memory"
    return "failed"


def normalize_output(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


class Reporter:
    """Writes progress and the final verdict as JSON lines on the verdict channel."""

    def __init__(self, fd: int):
        self.fd = fd

    def write(self, obj: dict) -> None:
        data = (json.dumps(obj) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]


def run(req: dict, out_fd: int) -> None:
    """Grade one row; called in the test process, which already dropped its privileges."""
    rep = Reporter(out_fd)
    limits = req["limits"]
    program, tests, calls = req["program"], req["tests"], req.get("calls", [])
    verdict = {"status": "passed", "tests_passed": 0, "detail": "", "outputs": None}

    def fail(status: str, detail: str) -> None:
        if verdict["status"] == "passed":
            verdict["status"], verdict["detail"] = status, detail

    fn_tests = [(i, t) for i, t in enumerate(tests) if isinstance(t, str)]
    io_tests = [(i, t) for i, t in enumerate(tests) if not isinstance(t, str)]
    if io_tests:  # one check here saves a process per stdin/stdout test
        try:
            compile(program, "<program>", "exec")
        except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
            fail("error", f"program does not compile: {type(e).__name__}: {e}")
            rep.write({"v": verdict})
            return
    if fn_tests or calls:
        _run_function_tests(program, fn_tests, calls, limits, verdict, fail, rep)
    for i, (stdin, expected) in io_tests:
        if verdict["status"] in ("error", "memory"):
            break
        _run_io_test(program, i, stdin, expected, limits, verdict, fail, rep)
    rep.write({"v": verdict})


def _run_function_tests(program, fn_tests, calls, limits, verdict, fail, rep) -> None:
    sol = Solution(limits, lambda fd: solution.run_server(fd, program) or 0)
    try:
        first = sol.recv()
    except SolutionGone as e:
        fail(e.status, f"program did not load: {e}")
        return
    if type(first) is tuple and first[:1] == ("load_error",) and len(first) == 3:
        status = "memory" if first[1] == "MemoryError" else "error"
        fail(status, f"program raised on load: {str(first[2])[:800]}")
        return
    if type(first) is not tuple or first[:1] != ("manifest",) or type(first[1]) is not dict:
        fail("error", "solution broke the load protocol")
        return
    ns = _namespace(sol, first[1])
    for i, source in fn_tests:
        where = f"<test {i}>"
        try:
            exec(compile(source, where, "exec"), ns)
        except SolutionGone as e:
            fail(e.status, f"{where}: {e}")
            return
        except BaseException as e:  # a failing test, whatever it raised
            fail(_status_of(e), _failure(where, e, source))
            continue
        verdict["tests_passed"] += 1
        rep.write({"p": verdict["tests_passed"]})
    if calls:
        outputs = []
        for j, expr in enumerate(calls):
            try:
                value = eval(compile(expr, f"<call {j}>", "eval"), ns)
                outputs.append(None if isinstance(value, Remote) else repr(value))
            except SolutionGone as e:
                fail(e.status, f"<call {j}>: {e}")
                outputs.extend([None] * (len(calls) - j))
                break
            except BaseException as e:
                outputs.append(None)
                if not verdict["detail"]:
                    verdict["detail"] = _failure(f"<call {j}>", e, expr)
        verdict["outputs"] = outputs
    # The solution is not killed here: the row's PID namespace (or, degraded, its process
    # group) is torn down by the zygote, which also catches anything the solution spawned.


def _run_io_test(program, i, stdin, expected, limits, verdict, fail, rep) -> None:
    where = f"<test {i}>"
    sol = Solution(limits, lambda fd: solution.run_main(program), stdin.encode(), with_socket=False)
    try:
        status = sol.wait()
    except SolutionGone as e:
        fail(e.status, f"{where}: {e}")
        return
    err_tail = bytes(sol.err[-600:]).decode("utf-8", "replace").strip()
    if os.WIFSIGNALED(status):
        gone = sol.gone()
        fail(gone.status, f"{where}: {gone}")
        return
    if os.WEXITSTATUS(status) == solution.MEMORY_EXIT:
        fail("memory", f"{where}: MemoryError: {err_tail}")
        return
    if os.WEXITSTATUS(status) != 0:
        fail("failed", f"{where}: program exited with code {os.WEXITSTATUS(status)}: {err_tail}")
        return
    got = bytes(sol.out).decode("utf-8", "replace")
    if normalize_output(got) != normalize_output(expected):
        fail("failed", f"{where}: wrong output: expected {expected[:200]!r}, got {got[:200]!r}")
        return
    verdict["tests_passed"] += 1
    rep.write({"p": verdict["tests_passed"]})
