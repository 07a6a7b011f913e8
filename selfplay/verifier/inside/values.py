"""Values that cross between the test process and the solution process.

The rule: what reaches the tests is either *data*, rebuilt in the test process from its parts
by the standard library, or a *handle*, an opaque reference to an object that stays in the
solution process. No program code ever runs to build, compare or convert data.

A message is `("v", value)` when the value is made only of exact built-in types (the fast
path: marshal carries it as is), else `("n", node)`, where a node is an atom (None, bool, int,
float, complex, str, bytes), a simple value (`simple.py`: Fraction, Decimal, bytearray, array,
range, slices, dict views, datetime values, numpy arrays, standard-library functions and
classes) or a tagged tuple:

| node | value |
|---|---|
| `("l", [n])`, `("t", [n])`, `("s", [n])`, `("f", [n])` | list, tuple, set, frozenset |
| `("d", [k, v, ...])` | dict (keys and values alternate, order kept) |
| `("h", hid, type name)` | a handle |
| `("C", [k, v, ...])`, `("O", [k, v, ...])`, `("D", factory, [k, v, ...])` | Counter, OrderedDict, defaultdict (factory: None, `("b", builtin name)` or a handle) |
| `("Q", maxlen, [n])` | deque |
| `("N", class hid, name, fields, [n], defaults)` | a namedtuple (collections or typing) whose class adds no behaviour of its own to a tuple, as a tuple with its field names |
| `("E", class hid, value, (name, flavour, [(member, value)], mixin, strs), origin)` | an enum member, by class and value; `origin` is `(module, qualname)` for a class the test process can import (`re.RegexFlag`), which then arrives as itself |
| `("SE", module, qualname, value)` | (to the program) a member of an importable enum class |
| `("X", class ref, args node)` | (to the program) an exception the tests pass |

Enum members and namedtuples arrive as *mirrors*: classes made in the test process with the
program class's name, members, fields and defaults (cached per class, so `is` works between
members), which remember the program class they stand for and go back to it when passed to
the program; their other attributes (methods) are asked of the program's own object.
Anything else the program returns (its own classes, functions, generators, subclasses of
built-in types) crosses as a handle. The receiving test process checks every node's type and
shape and counts nodes against the row's `result_items` limit.
"""

from __future__ import annotations

import builtins
import collections
import enum
import marshal

from . import simple
from .simple import WireError, import_attr

PLAIN_ATOMS = (type(None), bool, int, float, complex, str, bytes)
_ATOMS = frozenset(PLAIN_ATOMS)
_CONTAINERS = frozenset((list, tuple, set, frozenset))
_SEQ_TAGS = {list: "l", tuple: "t", set: "s", frozenset: "f"}
_SEQ_TYPES = {v: k for k, v in _SEQ_TAGS.items()}
_MAP_TAGS = {dict: "d", collections.Counter: "C", collections.OrderedDict: "O"}
_MAP_TYPES = {v: k for k, v in _MAP_TAGS.items()}
_BUILTIN_FACTORIES = {
    t.__name__: t
    for t in (int, float, str, list, dict, set, tuple, frozenset, bool, bytes, complex)
}
_ENUM_FLAVOURS = (
    ("IntFlag", enum.IntFlag),
    ("Flag", enum.Flag),
    ("IntEnum", enum.IntEnum),
    ("StrEnum", getattr(enum, "StrEnum", None)),
    ("Enum", enum.Enum),
)
_MIXINS = {"int": int, "str": str, "float": float, "bytes": bytes}
MAX_DEPTH = 900

__all__ = ["Decoder", "Encoder", "NotPlain", "WireError", "is_plain", "update_in_place"]


class NotPlain(Exception):
    """A value that cannot cross, even as a handle (too large)."""


def is_plain(value, budget: int) -> bool:
    """True if `value` is built only of exact plain types, within `budget` nodes.
    Raises NotPlain past the budget."""
    stack = [value]
    while stack:
        v = stack.pop()
        budget -= 1
        if budget < 0:
            raise NotPlain("value too large")
        t = type(v)
        if t in _ATOMS:
            continue
        if t in _CONTAINERS:
            stack.extend(v)
        elif t is dict:
            stack.extend(v.keys())
            stack.extend(v.values())
        else:
            return False
    return True


def _plain_small(value) -> bool:
    try:
        return is_plain(value, 1000)
    except NotPlain:
        return False


def _enum_flavour(cls) -> str | None:
    for name, base in _ENUM_FLAVOURS:
        if base is not None and issubclass(cls, base):
            return name
    return None


def _program_defined(cls, name: str) -> bool:
    """Whether the program itself defines `name` on `cls` (its own behaviour)."""
    for c in cls.__mro__:
        if name in vars(c):
            return getattr(vars(c)[name], "__module__", None) == "solution"
    return False


_TUPLE_DUNDERS_OK = frozenset(
    ("__new__", "__repr__", "__getnewargs__", "__match_args__", "__slots__", "__doc__",
     "__module__", "__qualname__", "__annotations__", "__orig_bases__", "__firstlineno__",
     "__static_attributes__", "__dict__", "__weakref__", "__classcell__", "__init_subclass__")
)  # fmt: skip


def _is_namedtuple(t) -> bool:
    """A namedtuple class whose instances behave as tuples: only generated dunders (methods
    of its own are fine; they are asked of the program)."""
    if not (issubclass(t, tuple) and isinstance(getattr(t, "_fields", None), tuple)):
        return False
    if not all(type(f) is str for f in t._fields):
        return False
    for c in t.__mro__:
        if c is tuple:
            return True
        for name, value in vars(c).items():
            if name.startswith("__") and name.endswith("__"):
                own = getattr(value, "__module__", None) == "solution"
                if name not in _TUPLE_DUNDERS_OK or (own and name != "__new__"):
                    return False
    return True


def _tuple_defaults(t) -> list:
    defaults = getattr(t, "_field_defaults", {}) or {}
    values = [defaults[f] for f in t._fields if f in defaults]
    return values if all(_plain_small(v) for v in values) else []


# ---- the solution side ---------------------------------------------------------------------


class Encoder:
    """The solution process's side: encodes results, keeps handles, decodes arguments."""

    def __init__(self, limit: int):
        self.limit = limit
        self.objects: dict[int, object] = {}  # hid -> object (kept alive, so ids stay unique)
        self.hids: dict[int, int] = {}  # id(object) -> hid

    def hid(self, obj) -> int:
        h = self.hids.get(id(obj))
        if h is None:
            h = len(self.objects) + 1
            self.objects[h] = obj
            self.hids[id(obj)] = h
        return h

    def handle(self, obj) -> tuple:
        return ("h", self.hid(obj), type(obj).__name__[:100])

    def encode(self, value) -> tuple:
        if is_plain(value, self.limit):
            return ("v", value)
        self._budget = self.limit
        return ("n", self._node(value, 0))

    def _node(self, v, depth: int):
        self._budget -= 1
        if self._budget < 0:
            raise NotPlain("value too large")
        t = type(v)
        if t in _ATOMS:
            return v
        if depth > MAX_DEPTH:
            return self.handle(v)
        d = depth + 1
        if t in _SEQ_TAGS:
            return (_SEQ_TAGS[t], [self._node(x, d) for x in v])
        if t in _MAP_TAGS:
            return (_MAP_TAGS[t], self._pairs(v, d))
        if t is collections.defaultdict:
            f = v.default_factory
            if f is None:
                factory = None
            elif _BUILTIN_FACTORIES.get(getattr(f, "__name__", None)) is f:
                factory = ("b", f.__name__)
            else:
                factory = self.handle(f)
            return ("D", factory, self._pairs(v, d))
        if t is collections.deque:
            return ("Q", v.maxlen, [self._node(x, d) for x in v])
        if isinstance(v, enum.Enum):
            node = self._enum(v)
            if node is not None:
                return node
        elif isinstance(v, tuple) and t is not tuple and _is_namedtuple(t):
            items = [self._node(x, d) for x in v]
            return ("N", self.hid(t), t.__name__, list(t._fields), items, _tuple_defaults(t))
        node = simple.encode(v, lambda x: self._node(x, d))
        if node is not None:
            return node
        if (t.__module__ or "").startswith("numpy") and hasattr(v, "tolist"):
            return self._node(v.tolist(), depth)  # arrays of objects: their items
        return self.handle(v)

    def _pairs(self, mapping, depth: int) -> list:
        out = []
        for k, x in mapping.items():
            out.append(self._node(k, depth))
            out.append(self._node(x, depth))
        return out

    def _enum(self, member):
        cls = type(member)
        desc = self.enum_class(cls)
        if desc is None or not _plain_small(member._value_):
            return None
        module = getattr(cls, "__module__", None)
        origin = None if module in (None, "solution", "__main__") else (module, cls.__qualname__)
        return ("E", self.hid(cls), member._value_, desc, origin)

    @staticmethod
    def enum_class(cls) -> tuple | None:
        """(name, flavour, [(member, value)], mixin, strs) of an enum class the tests can
        mirror, else None. `strs` are the members' str() where the program defines __str__."""
        flavour = _enum_flavour(cls)
        if flavour is None:
            return None
        members = [(name, m._value_) for name, m in cls.__members__.items()]
        if not all(_plain_small(x) for _, x in members):
            return None
        mixin = ""
        if flavour == "Enum":
            mixin = next((k for k, t in _MIXINS.items() if cls._member_type_ is t), "")
            if not mixin and cls._member_type_ is not object:
                return None  # a mixin the mirror cannot take
        strs = None
        if _program_defined(cls, "__str__"):
            strs = [str(m) for m in cls.__members__.values()]
        return (cls.__name__, flavour, members, mixin, strs)

    def decode(self, msg):
        """Arguments from the test process (our own side of the sandbox wrote them)."""
        tag, value = msg
        return value if tag == "v" else self._value(value)

    def _value(self, n):
        if type(n) is not tuple:
            return n
        tag = n[0]
        if tag == "h":
            return self.objects[n[1]]
        if tag in _SEQ_TYPES:
            return _SEQ_TYPES[tag](self._value(x) for x in n[1])
        if tag in _MAP_TYPES:  # Counter(pairs) would count the pairs: build a dict first
            it = iter([self._value(x) for x in n[1]])
            return _MAP_TYPES[tag](dict(zip(it, it, strict=True)))
        if tag == "D":
            factory = n[1]
            if factory is not None:
                b = factory[0] == "b"
                factory = _BUILTIN_FACTORIES[factory[1]] if b else self._value(factory)
            it = iter([self._value(x) for x in n[2]])
            return collections.defaultdict(factory, zip(it, it, strict=True))
        if tag == "Q":
            return collections.deque((self._value(x) for x in n[2]), n[1])
        if tag == "N":
            return self.objects[n[1]]._make(self._value(x) for x in n[4])
        if tag == "E":
            return self.objects[n[1]](n[2])  # the value is plain, not a node
        if tag == "SE":
            return import_attr(n[1], n[2])(n[3])
        if tag == "X":
            return self._exception(n[1], self._value(n[2]))
        return simple.rebuild(n, self._value)

    def _exception(self, ref, args):
        kind = ref[0]
        if kind == "h":
            cls = self.objects[ref[1]]
        elif kind == "builtin":
            cls = getattr(builtins, ref[1])
        else:
            cls = import_attr(ref[1], ref[2])
        try:
            return cls(*args)
        except Exception:
            exc = cls.__new__(cls)
            exc.args = tuple(args)
            return exc


# ---- the test side -------------------------------------------------------------------------


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
        if tag == "h" and len(n) == 3 and type(n[1]) is int and type(n[2]) is str:
            return self.proxies.get(n[1], n[2])
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
                    if type(factory) is not self.proxies.cls:
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
        if t is self.proxies.cls:
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
            elif type(f) is self.proxies.cls:
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
            if type(handle) is self.proxies.cls:
                return self.proxies.ref(handle)  # the program's own exception object
            ref = self.exception_ref(t) if self.exception_ref is not None else None
            if ref is not None:
                return ("X", ref, self._arg(tuple(v.args), d))
        node = simple.encode(v, lambda x: self._arg(x, d))
        if node is not None:
            return node
        raise TypeError(
            f"argument of type {t.__name__} cannot be passed to the solution "
            "(only data, the solution's own objects and standard-library functions can)"
        )


# ---- mutation copy-back ---------------------------------------------------------------------


def snapshot(value) -> bytes | tuple:
    """A change detector for an argument the program may mutate (solution side)."""
    try:
        return marshal.dumps(value)
    except ValueError:
        return ("shape", id(value), _shape(value))


def _shape(v, depth: int = 0):
    t = type(v)
    if depth > 50 or t in _ATOMS:
        return v if t in _ATOMS else id(v)
    if t in (list, tuple, set, frozenset, collections.deque):
        return (t.__name__, [_shape(x, depth + 1) for x in v])
    if isinstance(v, dict):
        return (t.__name__, [(_shape(k, depth + 1), _shape(x, depth + 1)) for k, x in v.items()])
    return id(v)


MUTABLE = (list, dict, set, bytearray, collections.deque, collections.Counter,
           collections.OrderedDict, collections.defaultdict)  # fmt: skip


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
