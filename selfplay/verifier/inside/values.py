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
shape and counts nodes against the row's `result_items` limit (`decoder.Decoder`, the test
side; this module is the solution side, `Encoder`, and what both share).
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

__all__ = ["Encoder", "NotPlain", "WireError", "is_plain", "snapshot"]


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
_CAPABILITY_METHODS = (
    "__call__",
    "__iter__",
    "__next__",
    "__len__",
    "__getitem__",
    "__contains__",
    "__enter__",
    "__reversed__",
)  # fmt: skip (remote.CAPABILITIES)


def capabilities(obj, known: bool) -> int:
    """What `obj` can do, as bits: its class defines each of _CAPABILITY_METHODS (not None),
    then (for a class the tests do not know by name: `known` False) whether it is a Sequence,
    MutableSequence, Mapping, MutableMapping, Set, MutableSet. A known class, the tests ask
    for as itself (`isinstance` then needs no registration)."""
    import collections.abc as abc

    t = type(obj)
    caps = 0
    for i, name in enumerate(_CAPABILITY_METHODS):
        defined = next((c.__dict__[name] for c in t.__mro__ if name in c.__dict__), None)
        if defined is not None:
            caps |= 1 << i
    if known:
        return caps
    for i, kind in enumerate((abc.Sequence, abc.MutableSequence, abc.Mapping,
                              abc.MutableMapping, abc.Set, abc.MutableSet)):  # fmt: skip
        try:
            if isinstance(obj, kind):
                caps |= 1 << (len(_CAPABILITY_METHODS) + i)
        except Exception:
            pass
    return caps


class Encoder:
    """The solution process's side: encodes results, keeps handles, decodes arguments."""

    def __init__(self, limit: int):
        self.limit = limit
        self.objects: dict[int, object] = {}  # hid -> object (kept alive, so ids stay unique)
        self.hids: dict[int, int] = {}  # id(object) -> hid
        self.caps: dict[type, tuple[bool, int]] = {}

    def hid(self, obj) -> int:
        h = self.hids.get(id(obj))
        if h is None:
            h = len(self.objects) + 1
            self.objects[h] = obj
            self.hids[id(obj)] = h
        return h

    def handle(self, obj) -> tuple:
        """A handle, with its class's handle and what the object can do (`remote.CAPABILITIES`
        bit by bit, then the registered ABCs it belongs to): the test process gives its proxy
        exactly those methods."""
        t = type(obj)
        found = self.caps.get(t)
        if found is None:
            # A class of the standard library (a generator's, say) is asked for as itself,
            # not stood in for by a proxy class: -1.
            known = simple.global_ref(t) is not None
            found = self.caps[t] = (known, capabilities(obj, known))
        known, caps = found
        return ("h", self.hid(obj), t.__name__[:100], -1 if known else self.hid(t), caps)

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
        if t.__name__ == "MaskedArray" and (t.__module__ or "").startswith("numpy"):
            # A masked array of the program's would pass numpy.testing's assertions against
            # anything (masked entries are not compared): it stays the program's, a handle.
            return self.handle(v)
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


# Arguments the tests pass that the program may change in place; the changes are copied back
# (`decoder.update_in_place`).
MUTABLE = (list, dict, set, bytearray, collections.deque, collections.Counter,
           collections.OrderedDict, collections.defaultdict)  # fmt: skip
