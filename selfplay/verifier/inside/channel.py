"""The test process's end of the solution process: calls and output.

While it waits for an answer the test process drains the program's stdout and stderr
(bounded), and never waits on anything else while the solution runs. No supervisor thread: a
second thread would make every copy-on-write fault of the test process a cross-CPU TLB
shootdown. (The seccomp filter's refusals are the zygote's to answer: `seccomp.Refusals`.)
"""

from __future__ import annotations

import importlib
import os
import select
import signal
import sys
import warnings

from . import ambient, decoder, values, wire
from .remote import EXCEPTIONS, Proxies, Remote, RemoteError

# Modules the test process imports when the program names them (a module global, a class of
# an exception or enum): the standard library and these packages. Never anything else, and
# never a module the program could stand behind: `solution`, the tests' own namespace, or this
# harness (a program that names `selfplay_inside.channel.SolutionGone` gets nothing).
IMPORTABLE = frozenset(("numpy", "scipy", "pandas", "sympy", "networkx", "sortedcontainers"))
_NEVER = frozenset(("solution", "__test__", "__main__", __name__.split(".")[0]))


# Modules whose import does something (a command line run on the process's own arguments, a
# browser opened, a window, a test suite): `numpy.f2py.__main__` runs f2py at import, which
# evaluates expressions from a file it finds in the working directory, the program's /tmp.
_ACTING = frozenset(
    (
        "__main__",
        "test",
        "tests",
        "conftest",
        "setup",
        "this",
        "antigravity",
        "idlelib",
        "tkinter",
        "turtle",
        "turtledemo",
        "ensurepip",
        "venv",
        "pydoc",
    )
)


def importable(module: str) -> bool:
    """Whether the test process may bind or import `module` because the program named it. A
    module it has already imported is given as it is (importing it again runs nothing); any
    other only where every part of the name is public and none names a module that acts when
    imported: a module's import is code running here, in the process that writes the verdict."""
    if type(module) is not str:
        return False
    parts = module.split(".")
    if parts[0] in _NEVER or not all(p.isidentifier() for p in parts):
        return False
    if parts[0] not in sys.stdlib_module_names and parts[0] not in IMPORTABLE:
        return False
    if module in sys.modules:
        return True
    return not any(p.startswith("_") or p in _ACTING for p in parts)


class SolutionGone(BaseException):
    """The solution process died or broke the protocol; the row cannot go on.

    Not an Exception: a test's `except Exception` must not turn a dead program into a pass."""

    def __init__(self, detail: str, status: str = "error"):
        super().__init__(detail)
        self.status = status


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_EMPTY = (list, tuple, dict, set, frozenset, str, bytes, bytearray)


def degenerate(value) -> bool:
    """None, an empty container or string, NaN, a zero-size or fully masked array: what an
    answer that computes nothing returns. Only exact types: a program object (a handle) is
    never asked anything."""
    t = type(value)
    if value is None or (t in _EMPTY and len(value) == 0):
        return True
    if t is float:
        return value != value
    np = sys.modules.get("numpy")
    if np is not None and t in (np.ndarray, np.ma.MaskedArray):
        return value.size == 0 or bool(np.ma.getmaskarray(value).all())
    return False


class Channel:
    def __init__(self, pid: int, sock, out_fd: int, err_fd: int, limits: dict, emit):
        self.pid, self.sock_obj, self.sock = pid, sock, sock.fileno()
        self.out, self.err = bytearray(), bytearray()
        self.streams: dict[int, bytearray] = {out_fd: self.out, err_fd: self.err}
        self.max_output = limits["max_output_bytes"]
        self.emit = emit
        self.proxies = Proxies(self)
        self.dec = decoder.Decoder(limits["result_items"], self.proxies, importable)
        self.dec.attribute = lambda mirror, name: self.request("getattr", (mirror, name), {})
        self.dec.exception_ref = self.exception_ref
        # The solution's wait status, from its parent (the zygote), once it has ended.
        self.waiter = None
        # globals(name, entry): a program global changed during a call (set by the harness).
        self.on_global = None
        self.exc_classes: dict[int, type] = {}
        # Values program calls returned, and how many were degenerate (`degenerate`) and left
        # their arguments as they were: a row that passes on such values alone did no work.
        # A call that raised counts in neither (tests of exceptions check what was raised).
        self.results = 0
        self.degenerate_results = 0
        self.exit_status: int | None = None
        self.dead: SolutionGone | None = None
        self.ambient = ambient.Ambient()

    # -- output and refusals ---------------------------------------------------------------
    def _drain(self, fd: int, streams: dict[int, bytearray]) -> bool:
        data = os.read(fd, 1 << 16)
        if not data:
            return False
        if sum(map(len, streams.values())) + len(data) > self.max_output:
            self.emit("output_flood")
            self.kill()
            self.dead = SolutionGone(f"output exceeded the {self.max_output}-byte limit")
            raise self.dead
        streams[fd] += data
        return True

    def pump(self, until: int | None, streams: dict[int, bytearray] | None = None) -> None:
        """Drain output until `until` is readable (with None: until every stream has
        closed). Closed streams leave `streams`."""
        streams = self.streams if streams is None else streams
        while True:
            if until is None and not streams:
                return
            watch = [*streams, until] if until is not None else list(streams)
            ready, _, _ = select.select(watch, [], [])
            for fd in ready:
                if fd == until:
                    return
                if not self._drain(fd, streams):
                    del streams[fd]
                    os.close(fd)

    # -- lifecycle ------------------------------------------------------------------------
    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait(self) -> int:
        if self.exit_status is None:
            self.exit_status = self.waiter() if self.waiter else os.waitpid(self.pid, 0)[1]
        return self.exit_status

    def gone(self, expected: bool = False) -> SolutionGone:
        """Explain why the channel broke, once the process has ended."""
        self.dead = self._gone(expected)
        return self.dead

    def _gone(self, expected: bool) -> SolutionGone:
        if self.dead is not None:
            return self.dead
        self.kill()
        status = self.wait()
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGKILL:
                return SolutionGone("solution process was killed (out of memory)", "memory")
            if sig == signal.SIGXCPU:
                return SolutionGone("solution process ran out of CPU time", "timeout")
            if not expected:
                self.emit("early_exit")
            return SolutionGone(f"solution process died of signal {sig}")
        if not expected:
            self.emit("early_exit")
        return SolutionGone(
            f"solution process exited with code {os.WEXITSTATUS(status)} before answering"
        )

    # -- messages -------------------------------------------------------------------------
    def recv(self):
        try:
            self.pump(self.sock)
            return wire.recv(self.sock)
        except (EOFError, ConnectionError):
            raise self.gone() from None
        except wire.WireError as e:
            self.emit("channel_forgery")
            self.kill()
            self.dead = SolutionGone(f"solution sent an invalid frame: {e}")
            raise self.dead from None

    def send(self, msg, fds: list[int] | None = None) -> None:
        try:
            if fds:
                wire.send_fds(self.sock_obj, msg, fds)
            else:
                wire.send(self.sock, msg)
        except (BrokenPipeError, ConnectionError, OSError):
            raise self.gone() from None

    def _signals(self, names) -> None:
        from .signals import valid

        for name in valid(names):
            self.emit(name)

    def _bad(self, what: str) -> SolutionGone:
        self.emit("channel_forgery")
        self.kill()
        self.dead = SolutionGone(f"solution broke the call protocol ({what})")
        return self.dead

    def request(self, op: str, args: tuple, kwargs: dict):
        if self.dead is not None:
            raise self.dead
        if op == "call":
            changed = self.ambient.changes()
            if changed is not None:
                self.request("ambient", (changed,), {})
        watched = [i for i, a in enumerate(args) if type(a) in values.MUTABLE]
        watched += [k for k, v in kwargs.items() if type(v) in values.MUTABLE]
        msg = (
            op,
            [self.dec.encode(a) for a in args],
            {k: self.dec.encode(v) for k, v in kwargs.items()},
            watched,
        )
        self.send(msg)
        reply = self.recv()
        if type(reply) is not tuple or not reply:
            raise self._bad("reply")
        tag = reply[0]
        if len(reply) != 4 or tag not in ("r", "x"):
            raise self._bad(f"tag {tag!r}")
        try:
            self._signals(reply[2])
            mutated = self._changes(reply[3], watched, args, kwargs)
            if tag == "x":
                exc = self.exception(reply[1])
            else:
                value = reply[1]
                if type(value) is tuple and len(value) == 2 and value[0] == "a":
                    if value[1] not in watched:
                        raise values.WireError("a result naming an argument that was not passed")
                    key = value[1]  # the program returned that argument itself
                    self.results += op == "call"
                    return args[key] if type(key) is int else kwargs[key]
                value = self.dec.decode(value)
                if op == "call":
                    self.results += 1
                    self.degenerate_results += not mutated and degenerate(value)
                return value
        except values.WireError as e:
            raise self._bad(str(e)) from None
        raise exc

    def batch(self, iterator: Remote, n: int):
        """Up to n items of a program iterator: (items, exhausted, exception or None)."""
        self.send(("next", [("n", self.proxies.ref(iterator)), ("v", n)], {}, []))
        reply = self.recv()
        if type(reply) is not tuple or len(reply) != 5 or reply[0] != "b":
            if type(reply) is tuple and reply[:1] == ("x",) and len(reply) == 4:
                self._signals(reply[2])
                return [], False, self.exception(reply[1])
            raise self._bad("batch")
        try:
            self._signals(reply[4])
            items = self.dec.decode(reply[1])
            exc = self.exception(reply[3]) if reply[3] is not None else None
        except (values.WireError, TypeError) as e:
            raise self._bad(str(e)) from None
        if type(items) is not list:
            raise self._bad("batch items")
        return items, reply[2] is True, exc

    def _changes(self, changes, watched, args, kwargs) -> bool:
        """Arguments the program mutated (copied back in place), globals it changed and
        warnings it raised; True where the call changed an argument or a global."""
        if type(changes) is not list:
            raise values.WireError("malformed changes")
        mutated = False
        for item in changes:
            if type(item) is tuple and len(item) == 3 and item[0] == "g":
                if type(item[1]) is str and self.on_global is not None:
                    self.on_global(item[1], item[2])
                mutated = True
                continue
            if type(item) is tuple and len(item) == 3 and item[0] == "w":
                self._warn(item[1], item[2])
                continue
            if type(item) is not tuple or len(item) != 2 or item[0] not in watched:
                raise values.WireError("malformed mutation")
            key, node = item
            target = args[key] if type(key) is int else kwargs[key]
            new = self.dec.decode(node)
            if type(new) is type(target):
                decoder.update_in_place(target, new)
            mutated = True
        return mutated

    def _warn(self, ref, message) -> None:
        """Warn again, in the test process, what the program warned during a call."""
        cls = self.exception_class(ref)
        if isinstance(cls, type) and issubclass(cls, Warning) and type(message) is str:
            warnings.warn(message, cls, stacklevel=3)

    # -- exceptions -----------------------------------------------------------------------
    def exception_class(self, ref) -> type | None:
        if type(ref) is not tuple or not ref:
            return None
        if ref[0] == "h" and len(ref) == 2:
            return self.exc_classes.get(ref[1])
        if ref[0] == "builtin" and len(ref) == 2:
            return EXCEPTIONS.get(ref[1])
        if ref[0] == "module" and len(ref) == 4 and all(type(x) is str for x in ref[1:]):
            _, module, qualname, fallback = ref
            if importable(module):
                try:
                    obj = importlib.import_module(module)
                    for part in qualname.split("."):
                        obj = getattr(obj, part)
                    if isinstance(obj, type) and issubclass(obj, BaseException):
                        return obj
                except Exception:
                    pass
            return EXCEPTIONS.get(fallback)
        return None

    def exception_ref(self, cls: type):
        """How the program finds an exception class of the tests' (None: it cannot)."""
        hid = getattr(cls, "_selfplay_hid", None)
        if isinstance(hid, int) and self.exc_classes.get(hid) is cls:
            return ("h", hid)
        if EXCEPTIONS.get(cls.__name__) is cls:
            return ("builtin", cls.__name__)
        module = getattr(cls, "__module__", "")
        if isinstance(module, str) and importable(module):
            return ("module", module, cls.__qualname__)
        return None

    def exception(self, desc, depth: int = 0) -> BaseException:
        """The test process's copy of an exception the program raised."""
        if type(desc) is not tuple or len(desc) != 7:
            raise values.WireError("malformed exception")
        ref, args_msg, message, tail, attrs_msg, hid, links = desc
        links = links if type(links) is dict and depth < 5 else {}
        cls = self.exception_class(ref)
        message = message if type(message) is str else ""
        args = (message,)
        if args_msg is not None:
            decoded = self.dec.decode(args_msg)
            if type(decoded) is tuple:
                args = decoded
        group = links.get("group")
        if type(group) is list and cls is not None and issubclass(cls, BaseExceptionGroup):
            members = [self.exception(d, depth + 1) for d in group]
            text = args[0] if args and type(args[0]) is str else message
            args = (text, members) if members else args
        exc: BaseException = RemoteError(message)
        if cls is not None:
            try:
                exc = cls(*args)
            except Exception:
                try:
                    exc = cls.__new__(cls)
                    exc.args = args
                except Exception:  # a class whose instances need what we cannot give
                    exc = RemoteError(f"{cls.__name__}: {message}")
        if attrs_msg is not None:
            attrs = self.dec.decode(attrs_msg)
            for k, v in attrs.items() if type(attrs) is dict else ():
                if type(k) is str and not k.startswith("__"):
                    try:
                        setattr(exc, k, v)
                    except Exception:
                        pass
        if type(exc) in self.exc_classes.values():
            exc._selfplay_message = message
        if type(hid) is int:
            exc._selfplay_handle = self.proxies.get(hid, "exception")
        for name in ("__cause__", "__context__"):
            if name in links:
                setattr(exc, name, self.exception(links[name], depth + 1))
        exc.solution_tail = str(tail)[:1000] if type(tail) is str else ""
        return exc

    # -- stdin/stdout tests ---------------------------------------------------------------
    def run_script(self, program: str, stdin: bytes) -> tuple[int, bytes, bytes]:
        """Run the program as a script in a fresh child of the solution process:
        (wait status, stdout, stderr)."""
        if self.dead is not None:
            raise self.dead
        stdin_fd = os.memfd_create("stdin")
        os.write(stdin_fd, stdin)
        os.lseek(stdin_fd, 0, os.SEEK_SET)
        (out_r, out_w), (err_r, err_w), (sig_r, sig_w) = os.pipe(), os.pipe(), os.pipe()
        try:
            self.send(("io", program), [stdin_fd, out_w, err_w, sig_w])
        finally:
            for fd in (stdin_fd, out_w, err_w, sig_w):
                os.close(fd)
        out, err, sig = bytearray(), bytearray(), bytearray()
        streams = {out_r: out, err_r: err, sig_r: sig}
        child = None
        try:
            while True:
                try:
                    self.pump(self.sock, streams)
                    msg = wire.recv(self.sock)
                except SolutionGone:
                    if child is not None:
                        _kill(child)
                    raise
                except (EOFError, ConnectionError, wire.WireError):
                    raise self.gone() from None
                if type(msg) is tuple and msg[:1] == ("io_pid",) and type(msg[1]) is int:
                    child = msg[1]
                elif type(msg) is tuple and msg[:1] == ("io_done",) and type(msg[1]) is int:
                    status = msg[1]
                    break
                else:
                    raise self._bad("script protocol")
            # What the script's orphans write after it ended does not count: take what is
            # there and close.
            while streams:
                ready, _, _ = select.select(list(streams), [], [], 0)
                if not ready:
                    break
                for fd in ready:
                    data = os.read(fd, 1 << 16)
                    if not data or sum(map(len, streams.values())) > self.max_output:
                        del streams[fd]
                        os.close(fd)
                    else:
                        streams[fd] += data
        finally:
            for fd in streams:
                os.close(fd)
        self._signals(bytes(sig).decode("ascii", "replace").split())
        return status, bytes(out), bytes(err)
