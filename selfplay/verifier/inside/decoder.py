"""The test process's side of the values that cross (`values` states the rule): checks and
rebuilds what the solution process sends, encodes the arguments the tests pass, and copies a
program's changes to an argument back into the test's own object (`update_in_place`)."""

from __future__ import annotations

import collections
import collections.abc
import enum
import itertools

from . import simple
from .remote import Remote, is_remote
from .simple import WireError, import_attr
from .values import (
    _ATOMS,
    _BUILTIN_FACTORIES,
    _ENUM_FLAVOURS,
    _MAP_TAGS,
    _MAP_TYPES,
    _MIXINS,
    _SEQ_TAGS,
    _SEQ_TYPES,
    MAX_DEPTH,
    MUTABLE,
    NotPlain,
    _plain_small,
    is_plain,
)

# An iterator the tests pass is consumed in the test process first: up to this many items.
MAX_ITERATOR_ITEMS = 100_000


class Decoder:
    """The test process's side: checks and rebuilds values, encodes arguments.

    `proxies` makes and reads handles: `proxies.get(hid, type_name)` is the proxy for a handle
    (one per hid, so `is` holds), `proxies.cls` their class, `proxies.ref(proxy)` its node."""

    def __init__(self, limit: int, proxies, importable):
        self.limit = limit
        self.proxies = proxies
        self.importable = importable
        self.enums: dict[int, type] = {}
        self.tuples: dict[int, type] = {}
        # ask(mirror, name): a mirror's missing public attribute (a method of the program's
        # class) is looked up on the program's own object.
        self.attribute = None
        # exception_ref(cls): how the program finds an exception class of the tests'.
        self.exception_ref = None

    def decode(self, msg):
        if type(msg) is not tuple or len(msg) != 2:
            raise WireError("malformed value")
        tag, value = msg
        self._budget = self.limit
        if tag == "v":
            try:
                if is_plain(value, self.limit):
                    return value
            except NotPlain:
                raise WireError("value over the result_items limit") from None
            raise WireError("a value marked plain is not plain data")
        if tag == "n":
            return self._value(value, 0)
        raise WireError("malformed value")

    def _list(self, items, depth):
        if type(items) is not list:
            raise WireError("malformed container")
        return [self._value(x, depth) for x in items]

    def _value(self, n, depth: int):
        self._budget -= 1
        if self._budget < 0:
            raise WireError("value over the result_items limit")
        t = type(n)
        if t in _ATOMS:
            return n
        if t is not tuple or not n or type(n[0]) is not str or depth > MAX_DEPTH + 10:
            raise WireError("malformed node")
        try:
            return self._tagged(n[0], n, depth + 1)
        except WireError:
            raise
        except Exception as e:  # whatever a malformed node makes the standard library raise
            raise WireError(f"malformed {n[0]!r} node: {type(e).__name__}") from None

    def _tagged(self, tag: str, n: tuple, d: int):
        if tag == "h" and len(n) == 5 and type(n[1]) is int and type(n[2]) is str:
            if type(n[3]) is not int or n[3] < -1 or type(n[4]) is not int or n[4] < 0:
                raise WireError("malformed handle")
            return self.proxies.get(n[1], n[2], n[3], n[4])
        if tag in _SEQ_TYPES and len(n) == 2:
            return _SEQ_TYPES[tag](self._list(n[1], d))
        if tag in _MAP_TYPES and len(n) == 2:  # Counter(pairs) would count the pairs
            it = iter(self._list(n[1], d))
            return _MAP_TYPES[tag](dict(zip(it, it, strict=True)))
        if tag == "D" and len(n) == 3:
            factory = n[1]
            if factory is not None:
                if type(factory) is tuple and factory[:1] == ("b",) and len(factory) == 2:
                    factory = _BUILTIN_FACTORIES[factory[1]]
                else:
                    factory = self._value(factory, d)
                    if not is_remote(factory):
                        raise WireError("bad defaultdict factory")
            it = iter(self._list(n[2], d))
            return collections.defaultdict(factory, zip(it, it, strict=True))
        if tag == "Q" and len(n) == 3 and (n[1] is None or type(n[1]) is int):
            return collections.deque(self._list(n[2], d), n[1])
        if tag == "N" and len(n) == 6:
            cls = self.tuple_class(n[1], n[2], n[3], n[5])
            values = self._list(n[4], d)
            if len(values) != len(cls._fields):
                raise WireError("namedtuple of the wrong length")
            return cls._make(values)
        if tag == "E" and len(n) == 5:
            return self._enum(n)
        return simple.rebuild(n, lambda x: self._value(x, d), True, self.importable)

    def _mirrored(self, cls: type, hid: int) -> type:
        cls._selfplay_hid = hid
        ask = self.attribute
        if ask is not None:

            def __getattr__(obj, name):
                if name.startswith("_"):
                    raise AttributeError(name)
                return ask(obj, name)

            cls.__getattr__ = __getattr__
        return cls

    def tuple_class(self, hid, name, fields, defaults) -> type:
        """The mirror of a program namedtuple class (made once per class)."""
        cls = self.tuples.get(hid)
        if cls is None:
            if type(hid) is not int or type(name) is not str or type(fields) is not list:
                raise WireError("malformed namedtuple class")
            if not all(type(f) is str for f in fields) or type(defaults) is not list:
                raise WireError("malformed namedtuple fields")
            if len(defaults) > len(fields) or not all(_plain_small(x) for x in defaults):
                raise WireError("malformed namedtuple defaults")
            cls = collections.namedtuple(
                name, fields, rename=True, defaults=defaults, module="solution"
            )
            self.tuples[hid] = self._mirrored(cls, hid)
        return cls

    def enum_class(self, hid, desc) -> type:
        """The mirror of a program enum class: its name, flavour, members and values."""
        cls = self.enums.get(hid)
        if cls is None:
            if type(hid) is not int or type(desc) is not tuple or len(desc) != 5:
                raise WireError("malformed enum class")
            name, flavour, members, mixin, strs = desc
            base = dict(_ENUM_FLAVOURS).get(flavour)
            if type(name) is not str or base is None or type(members) is not list:
                raise WireError("malformed enum class")
            pairs = []
            for m, x in members:
                if type(m) is not str or not _plain_small(x):
                    raise WireError("malformed enum member")
                pairs.append((m, x))
            extra = {"type": _MIXINS[mixin]} if mixin else {}
            cls = base(name, pairs, module="solution", **extra)
            if strs is not None:
                if type(strs) is not list or not all(type(s) is str for s in strs):
                    raise WireError("malformed enum strings")
                by_name = dict(zip(cls.__members__, strs, strict=True))
                cls.__str__ = lambda member: by_name.get(member._name_, member._name_)
            self.enums[hid] = self._mirrored(cls, hid)
        return cls

    def _enum(self, n):
        _, hid, value, desc, origin = n
        if not _plain_small(value):
            raise WireError("an enum value that is not plain data")
        if origin is not None:
            if type(origin) is not tuple or len(origin) != 2:
                raise WireError("malformed enum origin")
            module, qualname = origin
            if type(module) is str and type(qualname) is str and self.importable(module):
                try:
                    cls = import_attr(module, qualname)
                    if isinstance(cls, enum.EnumMeta):
                        return cls(value)
                except Exception:
                    pass
        return self.enum_class(hid, desc)(value)

    # -- arguments to the program ---------------------------------------------------------
    def encode(self, value):
        """An argument as a message; TypeError for what cannot be passed to the program."""
        try:
            if is_plain(value, self.limit):
                return ("v", value)
        except NotPlain:
            raise TypeError("argument too large to pass to the solution") from None
        return ("n", self._arg(value, 0))

    def _arg(self, v, depth: int):
        t = type(v)
        if t in _ATOMS:
            return v
        if issubclass(t, Remote):
            return self.proxies.ref(v)
        if depth > MAX_DEPTH:
            raise TypeError("argument nested too deeply to pass to the solution")
        d = depth + 1
        if t in _SEQ_TAGS:
            return (_SEQ_TAGS[t], [self._arg(x, d) for x in v])
        if t in _MAP_TAGS:
            return (
                _MAP_TAGS[t],
                [y for k, x in v.items() for y in (self._arg(k, d), self._arg(x, d))],
            )
        if t is collections.defaultdict:
            f = v.default_factory
            if f is None:
                factory = None
            elif _BUILTIN_FACTORIES.get(getattr(f, "__name__", None)) is f:
                factory = ("b", f.__name__)
            elif is_remote(f):
                factory = self.proxies.ref(f)
            else:
                raise TypeError("a defaultdict whose factory is a test function")
            pairs = [y for k, x in v.items() for y in (self._arg(k, d), self._arg(x, d))]
            return ("D", factory, pairs)
        if t is collections.deque:
            return ("Q", v.maxlen, [self._arg(x, d) for x in v])
        hid = getattr(t, "_selfplay_hid", None)
        if hid is not None and self.tuples.get(hid) is t:
            return ("N", hid, t.__name__, list(t._fields), [self._arg(x, d) for x in v], [])
        if hid is not None and self.enums.get(hid) is t:
            return ("E", hid, v._value_, None, None)
        if isinstance(v, type) and isinstance(getattr(v, "_selfplay_hid", None), int):
            return ("h", v._selfplay_hid, "type")  # a mirror class: the program's own class
        if isinstance(v, enum.Enum) and _plain_small(v._value_):
            return ("SE", t.__module__, t.__qualname__, v._value_)
        if isinstance(v, BaseException):
            handle = getattr(v, "_selfplay_handle", None)
            if is_remote(handle):
                return self.proxies.ref(handle)  # the program's own exception object
            ref = self.exception_ref(t) if self.exception_ref is not None else None
            if ref is not None:
                return ("X", ref, self._arg(tuple(v.args), d))
        node = simple.encode(v, lambda x: self._arg(x, d))
        if node is not None:
            return node
        if isinstance(v, collections.abc.Iterator):
            # A generator, map, filter... of the tests': its items, as an iterator there (the
            # tests' code runs here, so it is consumed here, up to a bound).
            items = list(itertools.islice(v, MAX_ITERATOR_ITEMS + 1))
            if len(items) > MAX_ITERATOR_ITEMS:
                raise TypeError(
                    f"an iterator of more than {MAX_ITERATOR_ITEMS} items cannot be passed to "
                    "the solution"
                )
            return ("IT", [self._arg(x, d) for x in items])
        raise TypeError(
            f"argument of type {t.__name__} cannot be passed to the solution "
            "(only data, the solution's own objects and standard-library functions can)"
        )


def update_in_place(old, new) -> None:
    """Make the test's `old` equal the program's `new`, keeping nested objects where the
    shapes agree, so that references the test holds see the program's changes."""
    t = type(old)
    if t is list:
        if len(old) == len(new):
            for i, x in enumerate(new):
                if type(old[i]) in MUTABLE and type(old[i]) is type(x):
                    update_in_place(old[i], x)
                else:
                    old[i] = x
        else:
            old[:] = new
    elif t in (dict, collections.Counter, collections.OrderedDict, collections.defaultdict):
        if list(old) == list(new):
            for k, x in new.items():
                if type(old[k]) in MUTABLE and type(old[k]) is type(x):
                    update_in_place(old[k], x)
                else:
                    old[k] = x
        else:
            old.clear()
            old.update(new)
    elif t is set:
        old.clear()
        old.update(new)
    elif t is bytearray:
        old[:] = new
    elif t is collections.deque:
        old.clear()
        old.extend(new)
