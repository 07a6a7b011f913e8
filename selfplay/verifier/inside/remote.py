"""Handles in the test process: proxies for objects that stay in the solution process.

The rule for a handle (`Remote`), which decides what program code may answer for a test:
- it supports what a program's own object is for: calling it and its methods, reading and
  setting attributes (`__name__`, `__doc__`, `__qualname__`, `__module__` and `__class__`
  included), indexing, `len`, `bool`, `str`/`repr`, `hash`, iteration (items arrive in
  batches), `with`, `isinstance`/`issubclass` with it as the class, unary `-`, `+`, `abs`, `~`,
  and being passed back to the program;
- comparison (`==`, `<`, ...) between a handle and test data never asks the program: `==` is
  False, ordering raises TypeError. Between two handles it asks the program (both objects are
  its own, as in `Vec2(2, -1) * 3 == Vec2(6, -3)`);
- conversion of a handle to a number (`int`, `float`, `complex`, `index`, `round()`,
  `math.trunc`/`floor`/`ceil`) asks the program for the number, which must come back as data
  of that type, and only for an unmarked handle (below): the program computes it from its own
  object, as it would have returned it from the call; `round(obj, n)` and `divmod` raise;
- arithmetic between a handle and test data asks the program, but its result must be a
  program object, never data, and that object is *marked*: it was computed from test data
  that the program saw, so a marked handle (and anything computed from it) cannot become a
  number through `abs`, `-`, `+` or `~`, nor be formatted. This is what defeats `__sub__`: in
  `abs(candidate(x) - expected) < 1e-6` the program sees `expected` and could answer
  anything; here its answer is refused. (`len` and `bool` stay: `s += [2]; assert len(s) == 3`
  is how tests check a container class.)
Every refusal fails the test and records a `handle_compared` signal. An object that claims to
equal everything, or whose `__sub__` returns 0.0, passes nothing.

No method is defined on `Remote` under a plain name, so no attribute of a program object is
shadowed by the proxy's own (its state lives in name-mangled slots).
"""

from __future__ import annotations

import array
import builtins
import collections
import collections.abc
import datetime
import numbers
import sys

_FORWARDED_DUNDERS = frozenset(
    ("__name__", "__qualname__", "__annotations__", "__defaults__", "__kwdefaults__",
     "__wrapped__", "__dict__", "__mro__", "__bases__")
)  # fmt: skip


def _chan(r):
    return object.__getattribute__(r, "_Remote__c")


class Remote:
    """A proxy for an object that lives in the solution process."""

    __slots__ = ("__c", "__h", "__t", "__buf", "__n", "__end", "__m", "__weakref__")

    def __init__(self, channel, hid: int, type_name: str):
        object.__setattr__(self, "_Remote__c", channel)
        object.__setattr__(self, "_Remote__h", hid)
        object.__setattr__(self, "_Remote__t", type_name)
        object.__setattr__(self, "_Remote__buf", None)
        object.__setattr__(self, "_Remote__n", 1)
        object.__setattr__(self, "_Remote__end", None)
        object.__setattr__(self, "_Remote__m", False)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__") and name not in _FORWARDED_DUNDERS:
            raise AttributeError(name)
        return _chan(self).request("getattr", (self, name), {})

    def __setattr__(self, name, value):
        _chan(self).request("setattr", (self, name, value), {})

    def __delattr__(self, name):
        _chan(self).request("delattr", (self, name), {})

    @property
    def __class__(self):
        # A handle that came with its class is an instance of a proxy class named after it
        # (`Proxies.get`), which `isinstance` with the standard ABCs can reason about.
        if type(self).__dict__.get("_selfplay_class") is not None:
            return type(self)
        # A handle of a standard-library class (a generator, a function) asks the program,
        # and believes it only where the class is the program's own or one whose objects would
        # never be a handle: `isinstance` trusts `__class__`, and a handle claiming
        # numpy.ndarray made pytest.approx compare every element of an empty `flat` (all of
        # nothing: equal); one claiming int passed `isinstance(x, int)`.
        cls = _chan(self).request("getattr", (self, "__class__"), {})
        if isinstance(cls, Remote) or isinstance(cls, type) and not _is_data_class(cls):
            return cls
        return type(self)

    @property
    def __doc__(self):
        return _chan(self).request("getattr", (self, "__doc__"), {})

    @property
    def __module__(self):
        return _chan(self).request("getattr", (self, "__module__"), {})

    def __repr__(self):
        value = _chan(self).request("repr", (self,), {})
        return value if type(value) is str else "<remote object>"

    def __str__(self):
        value = _chan(self).request("str", (self,), {})
        return value if type(value) is str else "<remote object>"

    def __format__(self, spec):
        _unmarked(self, "format")
        value = _chan(self).request("format", (self, spec), {})
        if type(value) is not str:
            raise TypeError("__format__ did not return a str")
        return value

    def __copy__(self):
        return _chan(self).request("copy", (self,), {})

    def __deepcopy__(self, memo):
        return _chan(self).request("deepcopy", (self,), {})

    def __reduce_ex__(self, protocol):
        # Pickled by the program; unpickling asks the program for a new object from the bytes.
        data = _chan(self).request("pickle", (self, protocol), {})
        if type(data) is not bytes:
            raise TypeError("a program object's pickle was not bytes")
        return (_unpickled, (data,))

    def __hash__(self):
        value = _chan(self).request("hash", (self,), {})
        if type(value) is not int:
            raise TypeError("__hash__ did not return an int")
        return value

    def __bool__(self):
        value = _chan(self).request("bool", (self,), {})
        if type(value) is not bool:
            raise TypeError("__bool__ did not return a bool")
        return value

    def __dir__(self):
        value = _chan(self).request("dir", (self,), {})
        return [x for x in value if type(x) is str] if type(value) is list else []

    def __instancecheck__(self, obj):  # a handle of a class: `isinstance(x, ProgramClass)`
        return _chan(self).request("isinstance", (self, obj), {}) is True

    def __subclasscheck__(self, sub):
        return _chan(self).request("issubclass", (self, sub), {}) is True


_CHANNEL = []  # this test process's channel, for `_unpickled`


def _unpickled(data: bytes):
    if not _CHANNEL:
        raise TypeError("a program object cannot be unpickled outside its row")
    return _CHANNEL[0].request("unpickle", (data,), {})


def is_remote(x) -> bool:
    """A handle (of whichever proxy class); never asks the program."""
    return issubclass(type(x), Remote)


class _Callable:
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        return _chan(self).request("call", (self, *args), kwargs)


class _Sized:
    __slots__ = ()

    def __len__(self):
        value = _chan(self).request("len", (self,), {})
        if type(value) is not int or value < 0:
            raise TypeError("__len__ did not return a non-negative int")
        return value


class _Iterable:
    __slots__ = ()

    def __iter__(self):
        it = _chan(self).request("iter", (self,), {})
        if not is_remote(it):
            raise TypeError("iter() of a program object did not return an iterator")
        return it


class _Container:
    __slots__ = ()

    def __contains__(self, item):
        value = _chan(self).request("contains", (self, item), {})
        if type(value) is not bool:
            raise TypeError("__contains__ did not return a bool")
        return value


class _Reversible:
    __slots__ = ()

    def __reversed__(self):
        return _chan(self).request("reversed", (self,), {})


class _Iterator:
    __slots__ = ()

    def __next__(self):
        buf = object.__getattribute__(self, "_Remote__buf")
        if buf:
            return buf.popleft()
        end = object.__getattribute__(self, "_Remote__end")
        if end is not None:
            object.__setattr__(self, "_Remote__end", StopIteration())
            raise end
        n = object.__getattribute__(self, "_Remote__n")
        object.__setattr__(self, "_Remote__n", min(2 * n, 1024))
        items, done, exc = _chan(self).batch(self, n)
        if buf is None:
            buf = collections.deque()
            object.__setattr__(self, "_Remote__buf", buf)
        buf.extend(items)
        if exc is not None or done:
            object.__setattr__(self, "_Remote__end", exc if exc is not None else StopIteration())
        return _Iterator.__next__(self)


class _Subscriptable:
    __slots__ = ()

    def __getitem__(self, key):
        return _chan(self).request("getitem", (self, key), {})

    def __setitem__(self, key, value):
        _chan(self).request("setitem", (self, key, value), {})

    def __delitem__(self, key):
        _chan(self).request("delitem", (self, key), {})


class _ContextManager:
    __slots__ = ()

    def __enter__(self):
        return _chan(self).request("enter", (self,), {})

    def __exit__(self, kind, exc, traceback):
        # Tracebacks stay here: the program's __exit__ gets the class and the exception.
        return _chan(self).request("exit", (self, kind, exc, None), {})


# What a program object can do, as the solution process reports it with a handle (`CAPS`, bit
# by bit): its proxy class has those methods and no others, so `callable`, `iter` and the
# structural ABCs (Iterator, Sized, Container...) say of the proxy what they say of the object.
# The ABCs that need registration (Sequence, Mapping, Set and their mutable kinds) are
# registered for the proxy class where the object is one.
CAPABILITIES = (
    ("__call__", _Callable), ("__iter__", _Iterable), ("__next__", _Iterator),
    ("__len__", _Sized), ("__getitem__", _Subscriptable), ("__contains__", _Container),
    ("__enter__", _ContextManager), ("__reversed__", _Reversible),
)  # fmt: skip
REGISTERED = (
    collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Mapping,
    collections.abc.MutableMapping, collections.abc.Set, collections.abc.MutableSet,
)  # fmt: skip
ALL = (1 << len(CAPABILITIES)) - 1


class _RemoteType(type):
    """The class of proxies for the instances of one program class: class attributes it lacks
    are asked of the program's class, and it equals that class's handle."""

    def __getattr__(cls, name):
        handle = type.__getattribute__(cls, "__dict__").get("_selfplay_class")
        if handle is None or (name.startswith("__") and name not in _FORWARDED_DUNDERS):
            raise AttributeError(name)
        return getattr(handle, name)

    def __eq__(cls, other):
        handle = type.__getattribute__(cls, "__dict__").get("_selfplay_class")
        if handle is not None and is_remote(other):
            return handle == other
        return type.__eq__(cls, other)

    def __hash__(cls):
        return type.__hash__(cls)

    # The class's own `__doc__` and `__module__` are the program class's (its instances'
    # are asked of the program object, as for every handle).
    @property
    def __doc__(cls):
        return _class_attribute(cls, "__doc__")

    @property
    def __module__(cls):
        return _class_attribute(cls, "__module__")


def _class_attribute(cls, name: str):
    handle = type.__getattribute__(cls, "__dict__").get("_selfplay_class")
    return None if handle is None else _chan(handle).request("getattr", (handle, name), {})


# What type() would otherwise put in a proxy class's body, shadowing Remote's properties.
_INSTANCE_PROPERTIES = {name: Remote.__dict__[name] for name in ("__doc__", "__module__")}


def _marked(r) -> bool:
    return object.__getattribute__(r, "_Remote__m")


def _unmarked(r, op: str) -> None:
    if _marked(r):
        _chan(r).emit("handle_compared")
        raise TypeError(
            f"{op}() of a program object computed from test data would let the program answer"
        )


def _compare(op: str):
    def method(self, other):
        if is_remote(other):
            return _chan(self).request(op, (self, other), {})
        _chan(self).emit("handle_compared")
        return NotImplemented  # == falls back to identity (never equal); ordering raises

    method.__name__ = f"__{op}__"
    return method


def _arithmetic(op: str, reflected: bool = False, inplace: bool = False):
    prefix = "r" if reflected else "i" if inplace else ""

    def method(self, other):
        chan = _chan(self)
        both = is_remote(other)
        result = chan.request(prefix + op, (self, other), {})
        if both and not (_marked(self) or _marked(other)):
            return result  # two program objects: the program's business
        if not is_remote(result):
            chan.emit("handle_compared")
            raise TypeError(
                f"a program object combined with test data ({op}) gave data, not an object"
            )
        object.__setattr__(result, "_Remote__m", True)
        return result

    method.__name__ = f"__{prefix}{op}__"
    return method


def _refused(op: str):
    def method(self, *args):
        _chan(self).emit("handle_compared")
        raise TypeError(f"a program object cannot be converted to a number ({op})")

    method.__name__ = f"__{op}__"
    return method


# What a conversion of a program object must give back: data, a number of that type.
_NUMBERS = {"int": int, "index": int, "float": float, "complex": complex, "round": int,
            "trunc": int, "floor": int, "ceil": int}  # fmt: skip


def _conversion(op: str):
    """`float(obj)`, `int(obj)`, `[...][obj]`, `round(obj)`: the program turns its own object
    into a number, from its own data (the object must be unmarked: no test data went into
    it), and the number comes back as data. `round(obj, n)` would hand the program `n`."""

    def method(self, *args):
        chan = _chan(self)
        if args and args[0] is not None:
            chan.emit("handle_compared")
            raise TypeError("round() of a program object to test-given digits")
        _unmarked(self, op)
        result = chan.request(op, (self,), {})
        if is_remote(result) or not isinstance(result, _NUMBERS[op]):
            chan.emit("handle_compared")
            raise TypeError(f"{op}() of a program object gave no {_NUMBERS[op].__name__}")
        return result

    method.__name__ = f"__{op}__"
    return method


def _unary(op: str):
    def method(self):
        _unmarked(self, op)
        return _chan(self).request(op, (self,), {})

    method.__name__ = f"__{op}__"
    return method


for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Remote, f"__{_op}__", _compare(_op))
ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift")  # fmt: skip
for _op in ARITHMETIC:
    setattr(Remote, f"__{_op}__", _arithmetic(_op))
    setattr(Remote, f"__r{_op}__", _arithmetic(_op, reflected=True))
    setattr(Remote, f"__i{_op}__", _arithmetic(_op, inplace=True))
for _op in ("divmod", "rdivmod"):
    setattr(Remote, f"__{_op}__", _refused(_op))
for _op in _NUMBERS:
    setattr(Remote, f"__{_op}__", _conversion(_op))
for _op in ("neg", "pos", "abs", "invert"):
    setattr(Remote, f"__{_op}__", _unary(_op))


class Proxies:
    """One proxy per handle, so that `is` holds between two arrivals of the same object."""

    cls = Remote

    def __init__(self, channel):
        self.channel = channel
        self.by_hid: dict[int, Remote] = {}
        self.classes: dict[tuple, type] = {}
        _CHANNEL[:] = [channel]

    def get(self, hid: int, type_name: str, class_hid: int | None = None, caps: int = -1) -> Remote:
        """The proxy for a handle; with its class's handle and its capabilities, an instance
        of a proxy class made for them (else one that can do everything: the program's
        functions and classes, its exceptions)."""
        r = self.by_hid.get(hid)
        if r is None:
            cls = FULL if class_hid is None else self._class(type_name[:100], class_hid, caps)
            r = self.by_hid[hid] = Remote.__new__(cls)
            Remote.__init__(r, self.channel, hid, type_name[:100])
        return r

    def _class(self, name: str, class_hid: int, caps: int) -> type:
        key = (class_hid, caps)
        cls = self.classes.get(key) or (KNOWN.get(caps) if class_hid < 0 else None)
        if cls is None:
            bases = tuple(mixin for i, (_, mixin) in enumerate(CAPABILITIES) if caps >> i & 1)
            handle = self.get(class_hid, "type") if class_hid >= 0 else None
            body = {"__slots__": (), "_selfplay_class": handle}
            body.update(_INSTANCE_PROPERTIES)
            cls = self.classes[key] = _RemoteType(name or "object", (Remote, *bases), body)
            for i, abc in enumerate(REGISTERED):
                if caps >> (len(CAPABILITIES) + i) & 1:
                    abc.register(cls)
        return cls

    @staticmethod
    def ref(r: Remote) -> tuple:
        return ("h", object.__getattribute__(r, "_Remote__h"), "")


# Classes whose objects cross as data (and so never as a handle), or that tests treat as data.
_DATA_BASES = (
    numbers.Number, str, bytes, bytearray, memoryview, list, tuple, dict, set, frozenset,
    collections.deque, array.array, range, slice, datetime.date, datetime.time,
    datetime.timedelta, type(None),
)  # fmt: skip


def _is_data_class(cls: type) -> bool:
    """Whether a handle claiming `cls` as its class lies (`Remote.__class__`)."""
    try:
        if issubclass(cls, _DATA_BASES):
            return True
        numpy = sys.modules.get("numpy")
        return numpy is not None and issubclass(cls, (numpy.ndarray, numpy.generic))
    except TypeError:
        return True


# Handles without a class: they can do everything a program object might.
FULL = _RemoteType(
    "Remote",
    (Remote, *(mixin for _, mixin in CAPABILITIES)),
    {"__slots__": (), **_INSTANCE_PROPERTIES},
)


def _known(caps: int) -> type:
    bases = tuple(mixin for i, (_, mixin) in enumerate(CAPABILITIES) if caps >> i & 1)
    return _RemoteType("Remote", (Remote, *bases), {"__slots__": (), **_INSTANCE_PROPERTIES})


# Proxy classes for objects of classes the tests know by name (functions, generators, ...),
# made once here, in the zygote, rather than in every row: a class costs a row page faults.
KNOWN = {caps: _known(caps) for caps in (0b1, 0b110, 0b11)}


class RemoteError(Exception):
    """An exception of a class the tests cannot name, raised by the program."""


EXCEPTIONS = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}
