"""The solution process: runs the untrusted program and answers calls from the test process.

It holds the program's objects; the test process only ever receives plain data or opaque
handles (numbers naming objects kept here). Nothing this process does can reach the test
process's memory: it has no capabilities and the test process is not dumpable.
"""

from __future__ import annotations

import builtins
import linecache
import operator
import os
import sys
import traceback

from . import wire

# Exit code of a script that ran out of memory; the harness reports status "memory".
MEMORY_EXIT = 86

OPS = {
    "call": lambda f, *a, **k: f(*a, **k),
    "getattr": getattr,
    "setattr": setattr,
    "delattr": delattr,
    "len": len,
    "iter": iter,
    "next": next,
    "bool": bool,
    "str": str,
    "repr": repr,
    "hash": hash,
    "int": int,
    "float": float,
    "index": operator.index,
    "contains": operator.contains,
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "delitem": operator.delitem,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
    "enter": lambda o: o.__enter__(),
    "exit": lambda o, *a: o.__exit__(*a),
}


def error_tail(exc: BaseException, limit: int = 600) -> str:
    """The last lines of a traceback, restricted to the program's own frames."""
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename in ("<program>", "<stdin>")
    ]
    where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
    text = f"{type(exc).__name__}: {exc}"[:limit]
    return text + where


def exec_program(program: str, name: str) -> dict:
    # Registered so that tracebacks (ours and the program's own) can show its lines.
    linecache.cache["<program>"] = (len(program), None, program.splitlines(True), "<program>")
    ns = {"__name__": name, "__builtins__": builtins}
    exec(compile(program, "<program>", "exec"), ns)
    return ns


def manifest(ns: dict) -> dict:
    """Describe the program's globals: plain values are copied, modules re-imported, rest proxied."""
    out = {}
    for name, value in ns.items():
        if name.startswith("__") and name.endswith("__"):
            continue
        if type(value) is type(os):
            out[name] = ("module", getattr(value, "__name__", name))
            continue
        try:
            out[name] = ("value", wire.to_plain(value))
        except (wire.NotPlain, RecursionError):
            out[name] = ("remote", None)
    return out


class Server:
    def __init__(self, fd: int, ns: dict):
        self.fd = fd
        self.ns = ns
        self.handles: dict[int, object] = {}

    def resolve(self, ref):
        tag = ref[0]
        if tag == "v":
            return ref[1]
        if tag == "h":
            return self.handles[ref[1]]
        if tag == "g":
            return self.ns[ref[1]]
        raise wire.WireError(f"bad reference tag {tag!r}")

    def encode(self, value):
        try:
            return ("v", wire.to_plain(value))
        except (wire.NotPlain, RecursionError):
            hid = len(self.handles) + 1
            self.handles[hid] = value
            return ("h", hid, type(value).__name__)

    def serve(self) -> None:
        while True:
            try:
                req = wire.recv(self.fd)
            except EOFError:
                return
            op, args, kwargs = req
            try:
                fn = OPS[op]
                a = [self.resolve(x) for x in args]
                k = {key: self.resolve(x) for key, x in kwargs.items()}
                reply = self.encode(fn(*a, **k))
            except BaseException as e:  # the program's exceptions are data for the tests
                reply = ("x", type(e).__name__, str(e)[:2000], error_tail(e))
            try:
                wire.send(self.fd, reply)
            except wire.NotPlain as e:
                wire.send(self.fd, ("x", "ValueError", str(e), ""))


def run_server(fd: int, program: str) -> None:
    try:
        ns = exec_program(program, "__solution__")
    except BaseException as e:
        wire.send(fd, ("load_error", type(e).__name__, error_tail(e)))
        return
    wire.send(fd, ("manifest", manifest(ns)))
    Server(fd, ns).serve()


def run_main(program: str) -> int:
    """Run the program as a script (stdin/stdout tests); the exit code is the verdict's input."""
    try:
        exec_program(program, "__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except MemoryError as e:
        print(error_tail(e), file=sys.stderr)
        return MEMORY_EXIT
    except BaseException as e:
        print(error_tail(e), file=sys.stderr)
        return 1
    return 0
