"""The test process: runs a row's tests against the solution process, and writes the verdict.

The tests never share an interpreter with the program. The solution process is started
before the row exists (so that it never sees it, see `testproc`); the test process then
reads the row, sends the program, and runs the tests in a namespace built from the program's
manifest:
- modules the program imported are the real modules, imported here (standard library, a few
  numerical packages, or anything the zygote preloaded); a program global named like a module
  that is not one is left out (`module_shadow`), so a fake `math` never answers a test;
- the program's exception classes are mirrored as real classes here (so `except MyError` and
  `isinstance(e, MyError)` work), its enum and namedtuple classes as mirrors (`values`);
- plain globals are copied, everything else is a handle (`remote.Remote`);
- the program is importable as the module `solution` (`from solution import f`).
Progress, signals and the verdict are JSON lines on the verdict descriptor, which only this
process holds: the program never sees it.
"""

from __future__ import annotations

import builtins
import importlib
import json
import marshal
import os
import sys
import time
import types

from . import solution, values
from .channel import Channel, SolutionGone, importable
from .remote import is_remote
from .server import innermost_line
from .signals import valid

_BUILTIN_NAMES = frozenset(vars(builtins))
# Modules that tests commonly use without importing them, relying on the program's import: a
# program global of one of these names that is not the real module is left out of the tests'
# namespace (`module_shadow`), so a fake `math` never answers `math.isclose`.
TEST_MODULES = frozenset(
    ("math", "cmath", "re", "collections", "itertools", "functools", "heapq", "bisect",
     "random", "statistics", "decimal", "fractions", "numpy", "np", "pandas", "pd", "json",
     "operator", "datetime", "string", "sys", "os", "typing")
)  # fmt: skip


_UNBOUND = object()


class Reporter:
    """JSON lines on the verdict descriptor: progress `p`, signals `s`, the verdict `v`.
    A test process is prepared before its row, and so before its verdict descriptor, exists:
    it is given with the row (`attach`)."""

    def __init__(self):
        self.fd: int | None = None
        self.signals: list[str] = []
        self.notes: list[str] = []

    def attach(self, fd: int) -> None:
        self.fd = fd

    def write(self, obj: dict) -> None:
        view = memoryview((json.dumps(obj) + "\n").encode())
        while view:
            view = view[os.write(self.fd, view) :]

    def emit(self, name: str, note: str | None = None) -> None:
        if note and len(self.notes) < 20:
            self.notes.append(f"{name}: {note}")
        if name not in self.signals:
            self.signals.append(name)
            self.write({"s": name})


def _named_like(value, name: str) -> bool:
    """A standard-library class or function of that name (`from datetime import datetime`,
    `from random import random`): the decoder rebuilds only real ones, which cannot lie."""
    return callable(value) and getattr(value, "__name__", None) == name


def _program_str(exc) -> str:
    # The program's own str() of its exception (its class may format its message).
    message = getattr(exc, "_selfplay_message", None)
    return message if isinstance(message, str) else BaseException.__str__(exc)


def _program_attribute(exc, name):
    # What the mirror lacks (the program class's methods) is asked of the program's own
    # exception object.
    handle = vars(exc).get("_selfplay_handle")
    if name.startswith("_") or handle is None:
        raise AttributeError(name)
    return getattr(handle, name)


class Namespace:
    """The tests' namespace, built from the program's manifest and kept current as the
    program changes its globals during calls."""

    def __init__(self, chan: Channel, rep: Reporter, owned=()):
        self.chan, self.rep = chan, rep
        # Names the tests bind themselves (`expected = 16`, `import pytest`, a helper `ref`,
        # a property test's input `n`), as the host read them from the tests' code: once the
        # program is loaded, the program rebinding its own global of such a name changes
        # `solution.<name>`, never the tests' binding (`name_rebind`). A name the tests bind
        # in a way the code does not show (`globals()[...]`, `import *`) is theirs too: it
        # no longer holds what the program last sent.
        self.owned = frozenset(n for n in owned if type(n) is str)
        self.sent: dict[str, object] = {}
        self.loaded = False
        test_module = types.ModuleType("__test__")
        self.ns = vars(test_module)
        self.program = types.ModuleType("solution")
        sys.modules["__test__"] = test_module
        # Tests written as a script run as one: `if __name__ == "__main__": unittest.main()`
        # runs, and finds the tests' TestCase classes in `__main__`.
        self.ns["__name__"] = "__main__"
        sys.modules["__main__"] = test_module
        sys.argv[:] = ["tests"]  # not the test process's own: unittest reads test names there
        sys.modules["solution"] = self.program
        self.exceptions: dict[str, tuple] = {}
        self.mirrors: dict[str, tuple] = {}  # name -> (entry, class)

    def load(self, manifest: dict) -> dict:
        for name, entry in manifest.items():
            self.apply(name, entry)
        for name in list(self.exceptions):
            self._mirror(name, set())
        self.ns["__builtins__"] = builtins  # last, whatever the manifest held
        self.chan.on_global = self.apply
        self.loaded = True
        return self.ns

    def apply(self, name, entry) -> None:
        """Bind one manifest entry. The manifest comes from the program's process: every name
        and entry is untrusted. No dunder (`__builtins__` would replace the tests' builtins);
        a program's `len` or `sorted` must not replace the builtins the tests rely on: those
        are reachable only as `solution.len` or `from solution import len`."""
        if type(name) is not str or not name.isidentifier() or name.startswith("__"):
            return
        if type(entry) is not tuple or not entry:
            return
        kind = entry[0]
        if kind == "module":
            if type(entry[1]) is not str or not importable(entry[1]):
                if name in TEST_MODULES:
                    self.rep.emit("module_shadow", name)
                return
            try:
                value = importlib.import_module(entry[1])
            except Exception:
                return
        elif kind == "value" and len(entry) == 2:
            value = self.chan.dec.decode(entry[1])
            if name in TEST_MODULES and not _named_like(value, name):
                self.rep.emit("module_shadow", name)
                return
        elif name in TEST_MODULES:
            self.rep.emit("module_shadow", name)
            return
        elif kind == "remote" and len(entry) == 3 and type(entry[1]) is int:
            value = self.chan.proxies.get(entry[1], str(entry[2]))
        elif kind == "remote" and len(entry) == 5 and type(entry[1]) is int:
            if type(entry[3]) is not int or entry[3] < -1 or type(entry[4]) is not int:
                return
            value = self.chan.proxies.get(entry[1], str(entry[2]), entry[3], entry[4])
        elif kind == "exc" and len(entry) == 5:
            self.exceptions[name] = entry
            if self.chan.on_global is not None:  # defined during a call
                self._mirror(name, set())
            return
        elif kind == "enum" and len(entry) == 3:
            value = self.chan.dec.enum_class(entry[1], entry[2])
        elif kind == "ntclass" and len(entry) == 5:
            value = self.chan.dec.tuple_class(entry[1], entry[2], entry[3], entry[4])
        else:
            return
        self._bind(name, value)

    def _bind(self, name: str, value) -> None:
        setattr(self.program, name, value)
        if name in _BUILTIN_NAMES:
            return
        if self.loaded and self._tests_own(name):
            self.rep.emit("name_rebind", name)
            return
        self.ns[name] = value
        self.sent[name] = value

    def _tests_own(self, name: str) -> bool:
        if name in self.owned:
            return True
        held = self.ns.get(name, _UNBOUND)
        return held is not _UNBOUND and held is not self.sent.get(name, _UNBOUND)

    def _mirror(self, name: str, seen: set) -> type:
        """A real exception class here for a program exception class (its bases first)."""
        entry = self.exceptions[name]
        made = self.mirrors.get(name)
        if made is not None and made[0] is entry:
            return made[1]
        seen.add(name)
        _, hid, cls_name, qualname, bases = entry
        parents = []
        for b in bases if type(bases) is list else []:
            if type(b) is tuple and b[:1] == ("global",) and b[1] in self.exceptions:
                parents.append(self._mirror(b[1], seen) if b[1] not in seen else Exception)
            else:
                parents.append(self.chan.exception_class(b) or Exception)
        body = {
            "__module__": "solution",
            "__qualname__": str(qualname),
            "__str__": _program_str,
            "__getattr__": _program_attribute,
        }
        try:
            cls = type(str(cls_name), tuple(parents) or (Exception,), body)
        except TypeError:  # bases whose layouts conflict
            cls = type(str(cls_name), (Exception,), body)
        if type(hid) is int:
            cls._selfplay_hid = hid
            self.chan.exc_classes[hid] = cls
        self.mirrors[name] = (entry, cls)
        self._bind(name, cls)
        return cls


def _failure(where: str, exc: BaseException, source: str) -> str:
    found = innermost_line(exc, where, source)
    line = f"\n  line {found[0]}: {found[1][:300]}" if found and found[1] else ""
    text = f"{where}: {type(exc).__name__}: {str(exc)[:500]}{line}"
    tail = getattr(exc, "solution_tail", "")
    if tail:
        text += f"\n  in the program: {tail}"
    return text


def _clean_exit(exc: SystemExit) -> bool:
    """A success exit the tests themselves raised: code 0, None or False, not from the
    program (whose exceptions are rebuilt with their `solution_tail`)."""
    code = exc.code
    return type(code) in (int, bool, type(None)) and not code and "solution_tail" not in vars(exc)


def _status_of(exc: BaseException) -> str:
    if isinstance(exc, SolutionGone):
        return exc.status
    return "memory" if isinstance(exc, MemoryError) else "failed"


def normalize_output(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


class Row:
    """One row's grading in the test process."""

    def __init__(self, req: dict, rep: Reporter, chan: Channel, phases: dict):
        self.req, self.rep, self.chan, self.phases = req, rep, chan, phases
        self.verdict = {"status": "passed", "tests_passed": 0, "detail": "", "outputs": None}

    def fail(self, status: str, detail: str) -> None:
        if self.verdict["status"] == "passed":
            self.verdict["status"], self.verdict["detail"] = status, detail

    def passed_one(self) -> None:
        self.verdict["tests_passed"] += 1
        self.rep.write({"p": self.verdict["tests_passed"]})

    def run(self) -> dict:
        program, tests = self.req["program"], self.req["tests"]
        calls = self.req.get("calls", [])
        fn_tests = [(i, t) for i, t in enumerate(tests) if isinstance(t, str)]
        io_tests = [(i, t) for i, t in enumerate(tests) if not isinstance(t, str)]
        if io_tests:  # one check here saves a process per stdin/stdout test
            try:
                compile(program, "<program>", "exec", dont_inherit=True)
            except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
                self.fail("error", f"program does not compile: {type(e).__name__}: {e}")
                return self.verdict
        # stdin/stdout tests first: each runs in a fresh child of the solution process, which
        # must not have loaded the program itself yet.
        for i, (stdin, expected) in io_tests:
            if self.verdict["status"] in ("error", "memory", "timeout"):
                break
            self._io_test(i, stdin, expected)
        if (fn_tests or calls) and self.verdict["status"] not in ("error", "memory", "timeout"):
            self._function_tests(program, fn_tests, calls)
        # A pass in which every value the program's calls returned was None, an empty value,
        # NaN or an empty array: tests that such an answer passes cannot tell work from none.
        chan = self.chan
        if (
            self.verdict["status"] == "passed"
            and chan.results
            and chan.degenerate_results == chan.results
        ):
            self.rep.emit("degenerate_pass")
        self.verdict["signals"] = self.rep.signals
        if self.rep.notes:
            self.verdict["notes"] = self.rep.notes
        self.verdict["phases"] = self.phases
        return self.verdict

    def _load(self, program: str) -> dict | None:
        self.chan.send(("load", program))
        first = self.chan.recv()
        if type(first) is tuple and first[:1] == ("load_error",) and len(first) == 4:
            for sig in valid(first[3]):
                self.rep.emit(sig)
            status = "memory" if first[1] == "MemoryError" else "error"
            self.fail(status, f"program raised on load: {str(first[2])[:800]}")
            return None
        if type(first) is not tuple or first[:1] != ("manifest",) or len(first) != 3:
            self.fail("error", "solution broke the load protocol")
            return None
        for s in valid(first[2]):
            self.rep.emit(s)
        if type(first[1]) is not dict:
            self.fail("error", "solution broke the load protocol")
            return None
        return first[1]

    def _code(self, key: str, i: int, source: str, filename: str, mode: str):
        """Test or call `i`, as compiled by the host (see `sandbox.compiled`) or here."""
        blobs = self.req.get(key)
        blob = blobs[i] if type(blobs) is list and i < len(blobs) else None
        if type(blob) is bytes:
            try:
                code = marshal.loads(blob)
            except (ValueError, EOFError, TypeError):
                code = None
            if type(code) is types.CodeType and code.co_filename == filename:
                return code
        return compile(source, filename, mode, dont_inherit=True)

    def _function_tests(self, program, fn_tests, calls) -> None:
        t0 = time.perf_counter()
        try:
            manifest = self._load(program)
            if manifest is None:
                return
            owned = self.req.get("owned")
            owned = owned if type(owned) is list else ()
            ns = Namespace(self.chan, self.rep, owned).load(manifest)
        except SolutionGone as e:
            self.fail(e.status, f"program did not load: {e}")
            return
        except values.WireError as e:
            self.fail("error", f"program did not load: solution sent invalid data: {e}")
            return
        self.phases["load"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i, source in fn_tests:
            where = f"<test {i}>"
            try:
                exec(self._code("test_code", i, source, where, "exec"), ns)
            except SolutionGone as e:
                self.fail(e.status, f"{where}: {e}")
                return
            except SystemExit as e:
                # `unittest.main()` ends a passing suite with SystemExit(False). A program's
                # own SystemExit arrives carrying `solution_tail` and stays a failure.
                if not _clean_exit(e) or self.chan.dead is not None:
                    self.fail(_status_of(e), _failure(where, e, source))
                    continue
            except BaseException as e:  # a failing test, whatever it raised
                self.fail(_status_of(e), _failure(where, e, source))
                continue
            if self.chan.dead is not None:  # a bare `except:` in the test swallowed it
                self.fail(self.chan.dead.status, f"{where}: {self.chan.dead}")
                return
            self.passed_one()
        self.phases["tests"] = time.perf_counter() - t0
        if calls:
            self._calls(calls, ns)

    def _calls(self, calls, ns) -> None:
        outputs = []
        for j, expr in enumerate(calls):
            try:
                value = eval(self._code("call_code", j, expr, f"<call {j}>", "eval"), ns)
                outputs.append(None if is_remote(value) else repr(value))
            except SolutionGone as e:
                self.fail(e.status, f"<call {j}>: {e}")
                outputs.extend([None] * (len(calls) - j))
                break
            except BaseException as e:
                outputs.append(None)
                if not self.verdict["detail"]:
                    self.verdict["detail"] = _failure(f"<call {j}>", e, expr)
        self.verdict["outputs"] = outputs

    def _io_test(self, i: int, stdin: str, expected: str) -> None:
        where = f"<test {i}>"
        try:
            status, out, err = self.chan.run_script(self.req["program"], stdin.encode())
        except SolutionGone as e:
            self.fail(e.status, f"{where}: {e}")
            return
        err_tail = err[-600:].decode("utf-8", "replace").strip()
        if os.WIFSIGNALED(status):
            import signal

            sig = os.WTERMSIG(status)
            if sig == signal.SIGKILL:
                self.fail("memory", f"{where}: the program was killed (out of memory)")
            elif sig == signal.SIGXCPU:
                self.fail("timeout", f"{where}: the program ran out of CPU time")
            else:
                self.fail("error", f"{where}: the program died of signal {sig}")
            return
        code = os.WEXITSTATUS(status)
        if code == solution.MEMORY_EXIT:
            self.fail("memory", f"{where}: MemoryError: {err_tail}")
            return
        if code != 0:
            self.fail("failed", f"{where}: program exited with code {code}: {err_tail}")
            return
        got = out.decode("utf-8", "replace")
        if normalize_output(got) != normalize_output(expected):
            self.fail(
                "failed", f"{where}: wrong output: expected {expected[:200]!r}, got {got[:200]!r}"
            )
            return
        self.passed_one()
