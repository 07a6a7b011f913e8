"""The program's server in the solution process: answers the test process's calls.

Requests are `(op, [argument messages], {keyword messages}, watched)`; `watched` names the
arguments the tests passed as mutable data, which are sent back after the call if the program
changed them (so in-place sorting and filling reach the tests' objects). Replies:
- `("r", value message, signals, changes)`: a result; the value is `("a", key)` when the
  program returned one of the arguments themselves (identity is kept);
- `("x", exception, signals, changes)`: an exception the program raised (data for the tests);
- `("b", items message, exhausted, exception or None, signals)`: a batch of an iterator.
`changes` are changed arguments `(key, message)`, changed program globals
`("g", name, manifest entry)` (a test that reads a counter the program keeps sees it move) and
warnings the call raised `("w", class ref, message)` (which `pytest.warns` in the tests sees).
"""

from __future__ import annotations

import enum
import math
import operator
import types
import warnings

from . import ambient, signals, simple, values, wire

_DUNDERS = frozenset(
    ("__name__", "__qualname__", "__doc__", "__module__", "__annotations__", "__defaults__",
     "__kwdefaults__", "__wrapped__", "__class__", "__dict__", "__mro__", "__bases__")
)  # fmt: skip
_BINARY = ("eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv",
           "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift")  # fmt: skip
_INPLACE = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
            "xor", "lshift", "rshift")  # fmt: skip


def innermost_line(exc: BaseException, filename: str, source: str) -> tuple[int, str] | None:
    """(number, text) of the innermost line of `filename` in `exc`'s traceback, the text
    taken from `source`. Not `traceback.extract_tb`: it reads every frame's file through
    linecache, a millisecond per failing row."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename and isinstance(tb.tb_lineno, int):
            found = tb.tb_lineno
        tb = tb.tb_next
    if found is None:
        return None
    lines = source.splitlines()
    return found, lines[found - 1].strip() if 0 < found <= len(lines) else ""


def _pickle():
    import pickle  # not preloaded: few rows pickle

    return pickle


def _call(f, *a, **k):
    return f(*a, **k)


def _op(name: str):
    return getattr(operator, name if hasattr(operator, name) else name + "_")


def _copy(o, deep: bool):
    import copy

    return copy.deepcopy(o) if deep else copy.copy(o)


OPS = {
    "call": _call,
    "ambient": ambient.apply,
    "contains": operator.contains,
    "pickle": lambda o, protocol: _pickle().dumps(o, protocol),
    "unpickle": lambda data: _pickle().loads(data),
    "getattr": getattr,
    "setattr": setattr,
    "delattr": delattr,
    "len": len,
    "iter": iter,
    "reversed": reversed,
    "bool": bool,
    "str": str,
    "repr": repr,
    "format": format,
    "hash": hash,
    "dir": lambda o: sorted(map(str, dir(o))),
    "isinstance": lambda cls, obj: isinstance(obj, cls),
    "issubclass": lambda cls, sub: issubclass(sub, cls),
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "delitem": operator.delitem,
    "enter": lambda o: o.__enter__(),
    "exit": lambda o, *a: o.__exit__(*a),
    "copy": lambda o: _copy(o, False),
    "deepcopy": lambda o, memo=None: _copy(o, True),
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
    # A program object to a number (the test process checks what comes back is one).
    "int": int,
    "float": float,
    "complex": complex,
    "index": operator.index,
    "round": round,
    "trunc": math.trunc,
    "floor": math.floor,
    "ceil": math.ceil,
    **{name: _op(name) for name in _BINARY},
    # Reflected arithmetic: `3 * obj` arrives as ("rmul", obj, 3).
    **{"r" + name: (lambda f: lambda a, b: f(b, a))(_op(name)) for name in _INPLACE},
    **{"i" + name: _op("i" + name) for name in _INPLACE},
}


class Server:
    def __init__(self, fd, module, encoder: values.Encoder, hook: signals.Hook, path, source):
        self.fd = fd
        self.source = source
        self.module = module
        self.enc = encoder
        self.hook = hook
        self.path = path
        self.known: dict[str, tuple] = {}  # global name -> what it was when last sent

    # -- what crosses ---------------------------------------------------------------------
    def error_tail(self, exc: BaseException, limit: int = 600) -> str:
        line = innermost_line(exc, self.path, self.source)
        where = f" (line {line[0]}: {line[1]})" if line else ""
        return f"{type(exc).__name__}: {exc}"[:limit] + where

    def class_ref(self, cls: type) -> tuple:
        """How the test process finds an exception class: the program's (by handle), a
        built-in, or one of an importable module; else its nearest built-in ancestor."""
        module = getattr(cls, "__module__", "")
        if module == "builtins":
            return ("builtin", cls.__name__)
        hid = self.enc.hids.get(id(cls))
        if hid is not None:
            return ("h", hid)
        fallback = next(c.__name__ for c in cls.__mro__ if c.__module__ == "builtins")
        if module and module != "solution":
            return ("module", module, cls.__qualname__, fallback)
        return ("builtin", fallback)

    def exception(self, exc: BaseException, depth: int = 0) -> tuple:
        """(class ref, args, message, tail, attributes, hid, links) of a raised exception."""
        args = attrs = None
        try:
            args = self.enc.encode(tuple(exc.args))
            plain = {k: v for k, v in vars(exc).items() if type(k) is str and _small(v)}
            attrs = ("v", plain) if plain else None
        except Exception:
            pass
        try:
            message = str(exc)[:2000]
        except Exception:
            message = "<unprintable>"
        # Its cause, context and (an exception group) members, as exceptions of their own.
        links: dict = {}
        if depth < 5:
            for name in ("__cause__", "__context__"):
                linked = getattr(exc, name, None)
                if isinstance(linked, BaseException) and linked is not exc:
                    links[name] = self.exception(linked, depth + 1)
            if isinstance(exc, BaseExceptionGroup):
                links["group"] = [self.exception(e, depth + 1) for e in exc.exceptions[:100]]
        cause_desc = links or None
        hid = self.enc.hid(exc)  # the tests may ask the exception for its methods
        return (
            self.class_ref(type(exc)),
            args,
            message,
            self.error_tail(exc),
            attrs,
            hid,
            cause_desc,
        )

    def manifest(self) -> dict:
        """The program's globals: modules by name, classes the tests can mirror, values, or
        handles."""
        out: dict = {}
        ns = vars(self.module)
        for name, value in list(ns.items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            out[name] = self._entry(name, value, ns)
        return out

    def _entry(self, name: str, value, ns: dict) -> tuple:
        self.known[name] = _state(value)
        try:
            return self._describe(value, ns)
        except (values.NotPlain, RecursionError):
            return ("remote", self.enc.hid(value), type(value).__name__[:100])

    def _describe(self, value, ns: dict) -> tuple:
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
            defaults = values._tuple_defaults(value)
            return ("ntclass", self.enc.hid(value), value.__name__, list(value._fields), defaults)
        if isinstance(value, type):
            ref = simple.global_ref(value)  # a standard-library class arrives as itself
            if ref is not None:
                return ("value", ("n", ref))
            return ("remote", self.enc.hid(value), "type")
        msg = self.enc.encode(value)
        if msg[0] == "n" and type(msg[1]) is tuple and msg[1][0] == "h":
            return ("remote", *msg[1][1:])
        return ("value", msg)

    def global_changes(self) -> list:
        """Globals the program rebound, added or (small containers) changed since last sent."""
        out = []
        ns = vars(self.module)
        for name, value in list(ns.items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            if self.known.get(name) != _state(value):
                out.append(("g", name, self._entry(name, value, ns)))
        return out

    # -- the loop -------------------------------------------------------------------------
    def reply(self, msg: tuple) -> None:
        try:
            wire.send(self.fd, msg)
        except ValueError as e:  # a frame over the size limit
            self.hook.note("oversized_result")
            wire.send(self.fd, ("x", self._refusal("MemoryError", str(e)), self.hook.take(), []))

    def _refusal(self, cls: str, text: str) -> tuple:
        return (("builtin", cls), None, text, "", None, None, None)

    def serve(self) -> None:
        while True:
            try:
                req = wire.recv(self.fd)
            except EOFError:
                return
            self.reply(self.answer(*req))

    def answer(self, op: str, args: list, kwargs: dict, watched: list) -> tuple:
        changes: list = []
        try:
            a = [self.enc.decode(x) for x in args]
            k = {key: self.enc.decode(x) for key, x in kwargs.items()}
            if op == "next":
                return self.batch(a[0], a[1])
            if op == "getattr" and a[1].startswith("__") and a[1] not in _DUNDERS:
                raise AttributeError(a[1])
            before = {w: values.snapshot(a[w] if type(w) is int else k[w]) for w in watched}
            with warnings.catch_warnings(record=True) as warned:
                # As inside `pytest.warns`: every warning of the call is seen, and goes to
                # the tests as data, where the test process warns it again.
                warnings.simplefilter("always")
                try:
                    result = OPS[op](*a, **k)
                finally:
                    changes += self.warnings(warned)
            for w, snap in before.items():
                now = a[w] if type(w) is int else k[w]
                if values.snapshot(now) != snap:
                    changes.append((w, self.enc.encode(now)))
            changes += self.global_changes()
            same = next((w for w in watched if (a[w] if type(w) is int else k[w]) is result), None)
            value = ("a", same) if same is not None else self.enc.encode(result)
            return ("r", value, self.hook.take(), changes)
        except values.NotPlain:
            self.hook.note("oversized_result")
            text = (
                f"the result has more than {self.enc.limit} values (the row's result_items limit)"
            )
            return ("x", self._refusal("ValueError", text), self.hook.take(), [])
        except BaseException as e:  # the program's exceptions are data for the tests
            try:
                changes += self.global_changes()
            except Exception:
                pass
            return ("x", self.exception(e), self.hook.take(), changes)

    def warnings(self, warned: list) -> list:
        """`("w", class ref, message)` per warning a call raised (at most `_WARNINGS`)."""
        out = []
        for w in warned[:_WARNINGS]:
            try:
                out.append(("w", self.class_ref(w.category), str(w.message)[:1000]))
            except Exception:  # a category or message that will not say what it is
                continue
        return out

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


_SMALL = 1000
_WARNINGS = 32


def _small(value) -> bool:
    try:
        return values.is_plain(value, 10_000)
    except values.NotPlain:
        return False


def _state(value) -> tuple:
    """What a global is, for noticing that the program changed it: its identity, and for a
    small mutable container its length and contents."""
    if type(value) in values.MUTABLE:
        n = len(value)
        return (id(value), n, values.snapshot(value) if n <= _SMALL else None)
    return (id(value),)
