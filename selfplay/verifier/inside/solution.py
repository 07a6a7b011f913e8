"""The solution process: it runs the untrusted program, and nothing else ever does.

It is forked by the test process *before* the test process reads the row, so its memory holds
nothing of the row: not the tests, not the expected outputs, not an earlier row (the zygote it
descends from never reads rows). What reaches it afterwards is the program text and, call by
call, the arguments the tests pass. It starts by closing every descriptor but its own four
(stdin, stdout, stderr, the call channel to the test process) and sets its rlimits; it
inherits the seccomp filter the test process installed (refused calls are answered by the test
process's supervisor thread). It then waits for:
- `("io", program)` with four descriptors: fork a child that runs the program as a script on
  that stdin (stdin/stdout tests), report its pid, then its exit status;
- `("load", program)`: become the program's server. The program is a real module named
  `solution` (a file in a directory on `sys.path`, so pickle and multiprocessing find its
  functions and classes), compiled without inheriting any `__future__` flags. The server
  answers calls with values (`values.Encoder`) or handles; an exception raised by the program
  is data for the tests.
"""

from __future__ import annotations

import builtins
import enum
import operator
import os
import signal
import socket
import sys
import traceback
import types

from . import signals, values, wire
from .osutil import close_fds_from

# Exit code of a script that ran out of memory; the harness reports status "memory".
MEMORY_EXIT = 86
_DUNDERS = frozenset(
    ("__name__", "__qualname__", "__doc__", "__module__", "__annotations__", "__defaults__",
     "__kwdefaults__", "__wrapped__", "__class__", "__dict__", "__mro__", "__bases__")
)  # fmt: skip


def _call(f, *a, **k):
    return f(*a, **k)


OPS = {
    "call": _call,
    "getattr": getattr,
    "setattr": setattr,
    "delattr": delattr,
    "len": len,
    "iter": iter,
    "reversed": reversed,
    "bool": bool,
    "str": str,
    "repr": repr,
    "hash": hash,
    "dir": lambda o: sorted(map(str, dir(o))),
    "isinstance": lambda cls, obj: isinstance(obj, cls),
    "issubclass": lambda cls, sub: issubclass(sub, cls),
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "delitem": operator.delitem,
    "enter": lambda o: o.__enter__(),
    "exit": lambda o, *a: o.__exit__(*a),
    **{
        name: getattr(operator, name if hasattr(operator, name) else name + "_")
        for name in (
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
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
        )
    },  # fmt: skip
}
# Reflected arithmetic: `3 * obj` arrives as ("rmul", obj, 3).
OPS.update({"r" + name: (lambda f: lambda a, b: f(b, a))(OPS[name]) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift")})  # fmt: skip


class Server:
    def __init__(self, fd: int, module, encoder: values.Encoder, hook: signals.Hook, path: str):
        self.fd = fd
        self.module = module
        self.enc = encoder
        self.hook = hook
        self.path = path

    # -- what crosses ---------------------------------------------------------------------
    def error_tail(self, exc: BaseException, limit: int = 600) -> str:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == self.path]
        where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
        return f"{type(exc).__name__}: {exc}"[:limit] + where

    def class_ref(self, cls: type) -> tuple:
        """How the test process finds an exception class: the program's (by handle), a
        built-in, or one of an importable module; else its nearest built-in ancestor."""
        hid = self.enc.hids.get(id(cls))
        if hid is not None:
            return ("h", hid)
        module = getattr(cls, "__module__", "")
        if module == "builtins":
            return ("builtin", cls.__name__)
        fallback = next(c.__name__ for c in cls.__mro__ if c.__module__ == "builtins")
        if module and module != "solution":
            return ("module", module, cls.__qualname__, fallback)
        return ("builtin", fallback)

    def exception(self, exc: BaseException) -> tuple:
        args = attrs = None
        try:
            args = self.enc.encode(tuple(exc.args))
            plain = {
                k: v for k, v in vars(exc).items() if type(k) is str and values.is_plain(v, 10_000)
            }
            attrs = ("v", plain) if plain else None
        except Exception:
            pass
        try:
            message = str(exc)[:2000]
        except Exception:
            message = "<unprintable>"
        return (self.class_ref(type(exc)), args, message, self.error_tail(exc), attrs)

    def manifest(self) -> dict:
        """The program's globals: modules by name, classes the tests can mirror, values, or
        handles."""
        out: dict = {}
        ns = vars(self.module)
        for name, value in ns.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            try:
                out[name] = self._entry(value, ns)
            except (values.NotPlain, RecursionError):
                out[name] = ("remote", self.enc.hid(value), type(value).__name__[:100])
        return out

    def _entry(self, value, ns: dict) -> tuple:
        if isinstance(value, types.ModuleType):
            return ("module", str(getattr(value, "__name__", "")))
        if isinstance(value, type) and issubclass(value, BaseException):
            if value.__module__ == "solution":
                bases = []
                for b in value.__bases__:
                    glob = next(
                        (n for n, v in ns.items() if v is b and not n.startswith("__")), None
                    )
                    if glob is not None and b.__module__ == "solution":
                        bases.append(("global", glob))
                    else:
                        bases.append(self.class_ref(b))
                return ("exc", self.enc.hid(value), value.__name__, value.__qualname__, bases)
        if isinstance(value, enum.EnumMeta):
            desc = self.enc.enum_class(value)
            if desc is not None:
                return ("enum", self.enc.hid(value), desc)
        elif isinstance(value, type) and issubclass(value, tuple) and values._is_namedtuple(value):
            return ("ntclass", self.enc.hid(value), value.__name__, list(value._fields))
        if isinstance(value, type):
            return ("remote", self.enc.hid(value), "type")
        msg = self.enc.encode(value)
        if msg[0] == "n" and type(msg[1]) is tuple and msg[1][0] == "h":
            return ("remote", msg[1][1], msg[1][2])
        return ("value", msg)

    # -- the loop -------------------------------------------------------------------------
    def reply(self, msg: tuple) -> None:
        try:
            wire.send(self.fd, msg)
        except ValueError as e:  # a frame over the size limit
            self.hook.note("oversized_result")
            wire.send(
                self.fd,
                ("x", ("builtin", "MemoryError"), None, str(e), "", None, self.hook.take(), []),
            )

    def serve(self) -> None:
        while True:
            try:
                req = wire.recv(self.fd)
            except EOFError:
                return
            op, args, kwargs, watched = req
            mutations = []
            try:
                a = [self.enc.decode(x) for x in args]
                k = {key: self.enc.decode(x) for key, x in kwargs.items()}
                before = {w: values.snapshot(a[w] if type(w) is int else k[w]) for w in watched}
                if op == "next":
                    self.reply(self.batch(a[0], a[1]))
                    continue
                if op == "getattr" and a[1].startswith("__") and a[1] not in _DUNDERS:
                    raise AttributeError(a[1])
                result = OPS[op](*a, **k)
                for w, snap in before.items():
                    now = a[w] if type(w) is int else k[w]
                    if values.snapshot(now) != snap:
                        mutations.append((w, self.enc.encode(now)))
                msg = ("r", self.enc.encode(result), self.hook.take(), mutations)
            except values.NotPlain:
                self.hook.note("oversized_result")
                text = (
                    f"the result has more than {self.enc.limit} values "
                    "(the row's result_items limit)"
                )
                msg = ("x", ("builtin", "ValueError"), None, text, "", None, self.hook.take(), [])
            except BaseException as e:  # the program's exceptions are data for the tests
                msg = ("x", *self.exception(e), self.hook.take(), mutations)
            self.reply(msg)

    def batch(self, it, n: int) -> tuple:
        """Up to n items of an iterator at once: consuming a generator item by item would cost
        a round trip each."""
        items: list = []
        done, exc = False, None
        try:
            for _ in range(max(1, min(n, 4096))):
                items.append(next(it))
        except StopIteration:
            done = True
        except BaseException as e:
            exc = self.exception(e)
        return ("b", self.enc.encode(items), done, exc, self.hook.take())


def _write_program(directory: str, name: str, program: str) -> str:
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(program)
    return path


def load_module(program: str, path: str):
    """The program as the module `solution`, registered before it runs (dataclasses and
    pickle look their module up while it loads)."""
    module = types.ModuleType("solution")
    module.__file__ = path
    module.__builtins__ = builtins
    sys.modules["solution"] = module
    code = compile(program, path, "exec", dont_inherit=True)
    exec(code, vars(module))
    return module


def run_server(fd: int, program: str, directory: str, result_items: int) -> None:
    path = _write_program(directory, "solution.py", program)
    hook = signals.Hook((path,))
    enc = values.Encoder(result_items)
    try:
        module = load_module(program, path)
    except BaseException as e:
        srv = Server(fd, None, enc, hook, path)
        wire.send(fd, ("load_error", type(e).__name__, srv.error_tail(e), hook.take()))
        return
    server = Server(fd, module, enc, hook, path)
    try:
        manifest = server.manifest()
    except BaseException as e:  # a global whose encoding raised
        wire.send(fd, ("load_error", type(e).__name__, server.error_tail(e), hook.take()))
        return
    wire.send(fd, ("manifest", manifest, hook.take()))
    server.serve()


def run_main(program: str, path: str) -> int:
    """Run the program as a script (stdin/stdout tests); the exit code is the verdict's input."""
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        exec(compile(program, path, "exec", dont_inherit=True), vars(main))
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except MemoryError as e:
        print(f"MemoryError: {e}", file=sys.stderr)
        return MEMORY_EXIT
    except BaseException as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
        where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
        print(f"{type(e).__name__}: {e}"[:600] + where, file=sys.stderr)
        return 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
    return 0


def _io_child(program: str, directory: str) -> None:
    """A child of the solution process that runs one stdin/stdout test (descriptors 0-3)."""
    code = 1
    try:
        path = _write_program(directory, "main.py", program)
        hook = signals.Hook((path,))
        code = run_main(program, path)
        try:
            os.write(3, (" ".join(hook.take()) + "\n").encode())
        except OSError:
            pass
    finally:
        os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)


def main(limits: dict, directory: str, set_limits) -> None:
    """The solution process (descriptors 0-2 and the channel on 3 are in place)."""
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)
    set_limits(limits)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    sys.path.append(directory)  # so that `import solution` finds the program's file
    while True:
        try:
            req, fds = wire.recv_fds(channel)
        except EOFError:
            return
        if req[0] == "io" and len(fds) == 4:
            pid = os.fork()
            if pid == 0:
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                close_fds_from(4)
                _io_child(req[1], directory)
            for fd in fds:
                os.close(fd)
            wire.send(3, ("io_pid", pid))
            _, status = os.waitpid(pid, 0)
            wire.send(3, ("io_done", status))
        elif req[0] == "load":
            for fd in fds:
                os.close(fd)
            run_server(3, req[1], directory, limits["result_items"])
            return
        else:
            for fd in fds:
                os.close(fd)
            return
