"""Value types built from plain parts, the same way on both sides of the call channel.

`encode(v, part)` gives the node of such a value (or None), `rebuild(node, part, strict)` the
value of a node; `part` encodes or decodes a sub-value (a slice's bounds). The test process
rebuilds with `strict=True`: every part's type is checked, because the sender is untrusted.

| node | value |
|---|---|
| `("F", numerator, denominator)`, `("M", text)` | Fraction, Decimal |
| `("B", bytes)`, `("A", typecode, [items])`, `("R", start, stop, step)` | bytearray, array.array, range |
| `("K", [n])`, `("V", [n])`, `("I", [n])` | dict keys, values and items views |
| `("sl", start, stop, step)` | a slice (bounds are nodes) |
| `("dt", kind, fields, tz, fold)` | datetime.date, time, datetime, timedelta, timezone (tz: None, a fixed offset or a zoneinfo key) |
| `("nd", dtype, shape, bytes)` | a numpy array (shape None: a numpy scalar) of numbers, booleans or dates (never objects) |
| `("pS", ...)`, `("pF", ...)`, `("pI", ...)`, `("pR", ...)` | pandas Series, DataFrames and indexes of plain data (`frames.py`) |
| `("G", module, qualname)` | a function or class of the standard library (`len`, `str.lower`, `math.sqrt`, `int`): the same object on the other side |
"""

from __future__ import annotations

import array
import builtins
import collections
import datetime
import decimal
import fractions
import functools
import importlib
import operator
import re
import sys
import types

from . import frames, remote


class WireError(Exception):
    """The peer sent something that is not a valid message."""


_VIEWS = {type({}.keys()): "K", type({}.values()): "V", type({}.items()): "I"}
_DT = {"date": datetime.date, "datetime": datetime.datetime, "time": datetime.time}
_NUMPY_DTYPE = re.compile(r"^[<>|=]?([biufcmM?]\d{0,2}(\[[a-zA-Z]+\])?|[US]\d{1,6})$")
_PATH_TYPES = ("PosixPath", "PurePosixPath", "PureWindowsPath")  # pathlib's, imported when used
_GLOBAL_TYPES = (types.BuiltinFunctionType, types.FunctionType, type, types.MethodDescriptorType)


def import_attr(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


_TYPES = {id(t): name for name, t in vars(types).items() if isinstance(t, type)}


def global_ref(v):
    """("G", module, qualname) when `v` is reachable by name from a standard-library module
    (the interpreter's own classes by their names in `types`: `types.GeneratorType`)."""
    if not isinstance(v, _GLOBAL_TYPES):
        return None
    if id(v) in _TYPES and getattr(types, _TYPES[id(v)]) is v:
        return ("G", "types", _TYPES[id(v)])
    bound = _module_method(v)
    if bound is not None:
        return bound
    owner = getattr(v, "__objclass__", None)
    module = getattr(v, "__module__", None) or getattr(owner, "__module__", None)
    qualname = getattr(v, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    if module.split(".")[0] not in sys.stdlib_module_names:
        return None  # the program's own functions and classes are handles
    if module == "builtins" and getattr(builtins, qualname.split(".")[0], None) is None:
        return None
    try:
        if import_attr(module, qualname) is not v:
            return None
    except Exception:
        return None
    return ("G", module, qualname)


def _module_method(v):
    """("G", module, name) for a method of a standard-library module's own instance that the
    module exports as a function (`random.random` is `random._inst.random`)."""
    owner = getattr(v, "__self__", None)
    if type(v) is not types.BuiltinFunctionType or owner is None or type(owner) is types.ModuleType:
        return None
    module, name = getattr(type(owner), "__module__", None), getattr(v, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str) or module == "builtins":
        return None
    if module.split(".")[0] not in sys.stdlib_module_names:
        return None
    try:
        exported = getattr(importlib.import_module(module), name)
    except Exception:
        return None
    # Compared by identity of the instance (no program code runs).
    if getattr(exported, "__self__", None) is not owner or exported.__name__ != name:
        return None
    return ("G", module, name)


def _tz_node(tz):
    if tz is None:
        return None
    if type(tz) is datetime.timezone:
        off = tz.utcoffset(None)
        return ("off", off.days, off.seconds, off.microseconds, tz.tzname(None))
    key = getattr(tz, "key", None)
    if type(tz).__name__ == "ZoneInfo" and isinstance(key, str):
        return ("zone", key)
    raise LookupError


def _tz(node):
    if node is None:
        return None
    if node[0] == "off" and len(node) == 5:
        offset = datetime.timedelta(node[1], node[2], node[3])
        name = node[4]
        utc_name = datetime.timezone(offset).tzname(None)
        return datetime.timezone(offset) if name == utc_name else datetime.timezone(offset, name)
    if node[0] == "zone" and len(node) == 2 and type(node[1]) is str:
        import zoneinfo

        return zoneinfo.ZoneInfo(node[1])
    raise ValueError("bad time zone")


def _datetime(v, t):
    try:
        if t is datetime.date:
            return ("dt", "date", (v.year, v.month, v.day), None, 0)
        if t is datetime.datetime:
            fields = (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)
            return ("dt", "datetime", fields, _tz_node(v.tzinfo), v.fold)
        if t is datetime.time:
            fields = (v.hour, v.minute, v.second, v.microsecond)
            return ("dt", "time", fields, _tz_node(v.tzinfo), v.fold)
        if t is datetime.timedelta:
            return ("dt", "timedelta", (v.days, v.seconds, v.microseconds), None, 0)
        if t is datetime.timezone:
            return ("dt", "timezone", (), _tz_node(v), 0)
    except LookupError:
        return None  # an unusual tzinfo: the value crosses as a handle
    return None


def encode(v, part):
    """The node of a simple value, or None if `v` is not one."""
    t = type(v)
    if t is fractions.Fraction:
        return ("F", v.numerator, v.denominator)
    if t is decimal.Decimal:
        return ("M", str(v))
    if t is bytearray:
        return ("B", bytes(v))
    if t is range:
        return ("R", v.start, v.stop, v.step)
    if t is array.array:
        return ("A", v.typecode, v.tolist())
    if t is slice:
        return ("sl", part(v.start), part(v.stop), part(v.step))
    if t in _VIEWS:
        return (_VIEWS[t], [part(x) for x in v])
    if t.__module__ == "datetime" or t.__module__ == "zoneinfo":
        return _datetime(v, t)
    if (t.__module__ or "").startswith("numpy") and hasattr(v, "dtype") and hasattr(v, "tobytes"):
        return _numpy(v, t, part)
    if (t.__module__ or "").split(".")[0] == "pandas" and t.__name__ in frames.TYPES:
        return frames.encode(v, t, part)
    if t.__module__ == "pathlib" and t.__name__ in _PATH_TYPES:
        return ("P", t.__name__, str(v))
    if t is collections.ChainMap:
        return ("CM", [part(m) for m in v.maps])
    if t is types.SimpleNamespace:
        return ("NS", [x for k, val in vars(v).items() for x in (part(k), part(val))])
    if t is operator.itemgetter or t is operator.attrgetter:
        # their own reduction: (class, the items or attribute names)
        return ("IG" if t is operator.itemgetter else "AG", [part(x) for x in v.__reduce__()[1]])
    if t is functools.partial:
        kwargs = [x for k, val in v.keywords.items() for x in (part(k), part(val))]
        return ("PA", part(v.func), [part(x) for x in v.args], kwargs)
    return global_ref(v)


def _numpy(v, t, part):
    if v.dtype.kind not in "biufcmM?US" or v.dtype.names is not None:
        return None
    if t.__name__ == "MaskedArray":  # its data and its mask, both plain arrays
        import numpy

        return ("ma", part(numpy.asarray(v.data)), part(numpy.ma.getmaskarray(v)))
    # A numpy scalar (np.int64(7)) arrives as one, an array as an array, a matrix as one.
    if t.__name__ not in ("ndarray", "matrix") and hasattr(v, "shape") and v.shape:
        return None  # another subclass of ndarray: a handle
    shape = (
        None
        if not hasattr(v, "shape") or t.__name__ not in ("ndarray", "matrix")
        else list(v.shape)
    )
    tag = "mx" if t.__name__ == "matrix" else "nd"
    return (tag, v.dtype.str, shape, v.tobytes())


def rebuild(n: tuple, part, strict: bool = False, importable=None):
    """The value of a simple node (WireError for one that is not valid)."""
    tag = n[0]
    if tag in ("K", "V", "I") and len(n) == 2 and type(n[1]) is list:
        items = [part(x) for x in n[1]]
        if tag == "K":
            return dict.fromkeys(items).keys()
        if tag == "V":
            return dict(enumerate(items)).values()
        if strict and not all(type(i) is tuple and len(i) == 2 for i in items):
            raise WireError("malformed items view")
        return dict(items).items()
    if tag == "F" and len(n) == 3 and type(n[1]) is int and type(n[2]) is int:
        return fractions.Fraction(n[1], n[2])
    if tag == "M" and len(n) == 2 and type(n[1]) is str:
        return decimal.Decimal(n[1])
    if tag == "B" and len(n) == 2 and type(n[1]) is bytes:
        return bytearray(n[1])
    if tag == "R" and len(n) == 4 and all(type(x) is int for x in n[1:]):
        return range(n[1], n[2], n[3])
    if tag == "sl" and len(n) == 4:
        return slice(part(n[1]), part(n[2]), part(n[3]))
    if tag == "A" and len(n) == 3 and type(n[1]) is str and type(n[2]) is list:
        if strict and not all(type(x) in (int, float, str) for x in n[2]):
            raise WireError("malformed array")
        return array.array(n[1], n[2])
    if tag == "dt" and len(n) == 5 and type(n[2]) is tuple and type(n[4]) is int:
        kind, fields, tz, fold = n[1], n[2], n[3], n[4]
        if strict and not all(type(x) is int for x in fields):
            raise WireError("malformed datetime")
        if kind == "timedelta":
            return datetime.timedelta(*fields)
        if kind == "timezone":
            return _tz(tz)
        if kind == "date":
            return _DT[kind](*fields)
        return _DT[kind](*fields, tzinfo=_tz(tz), fold=fold)
    if tag == "nd" and len(n) == 4:
        return _ndarray(*n[1:], strict=strict)
    if tag == "mx" and len(n) == 4 and type(n[2]) is list and len(n[2]) == 2:
        import numpy

        return numpy.matrix(_ndarray(*n[1:], strict=strict))
    if tag == "ma" and len(n) == 3:
        import numpy

        if strict:  # from the program: never (values.Encoder keeps them handles)
            raise WireError("a masked array from the program")
        data, mask = part(n[1]), part(n[2])
        if not isinstance(data, numpy.ndarray) or not isinstance(mask, numpy.ndarray):
            raise WireError("malformed masked array")
        return numpy.ma.masked_array(data, mask=mask)
    if tag == "P" and len(n) == 3 and n[1] in _PATH_TYPES and type(n[2]) is str:
        import pathlib

        return getattr(pathlib, n[1])(n[2])
    if tag == "CM" and len(n) == 2 and type(n[1]) is list:
        maps = [part(x) for x in n[1]]
        if strict and not all(isinstance(m, dict) for m in maps):
            raise WireError("malformed chain map")
        return collections.ChainMap(*maps)
    if tag == "NS" and len(n) == 2 and type(n[1]) is list:
        it = iter([part(x) for x in n[1]])
        pairs = dict(zip(it, it, strict=True))
        if strict and not all(type(k) is str for k in pairs):
            raise WireError("malformed namespace")
        return types.SimpleNamespace(**pairs)
    if tag in ("IG", "AG") and len(n) == 2 and type(n[1]) is list and n[1]:
        items = [part(x) for x in n[1]]
        if tag == "AG":
            # no private or special attributes: the tests apply it to their own objects
            if not all(type(x) is str and not x.startswith("_") and "._" not in x for x in items):
                raise WireError("malformed attrgetter")
            return operator.attrgetter(*items)
        return operator.itemgetter(*items)
    if tag == "PA" and len(n) == 4 and type(n[2]) is list and type(n[3]) is list:
        func = part(n[1])
        it = iter([part(x) for x in n[3]])
        kwargs = dict(zip(it, it, strict=True))
        if not callable(func) or not all(type(k) is str for k in kwargs):
            raise WireError("malformed partial")
        # From the program (strict) only around its own function: a standard-library one with
        # arguments the program chose (`partial(exec, code, {})`) would run here, in the tests.
        if strict and not remote.is_remote(func):
            raise WireError("a partial of a function that is not the program's")
        return functools.partial(func, *[part(x) for x in n[2]], **kwargs)
    if tag in frames.TAGS:
        try:
            return frames.rebuild(n, part, WireError)
        except (ValueError, TypeError, OverflowError) as e:  # parts pandas will not join
            raise WireError(f"malformed pandas value: {type(e).__name__}") from None
    if tag == "IT" and len(n) == 2 and type(n[1]) is list:
        return iter([part(x) for x in n[1]])
    if tag == "G" and len(n) == 3 and type(n[1]) is str and type(n[2]) is str:
        if importable is not None and not importable(n[1]):
            raise WireError(f"a reference to {n[1]}.{n[2]}, which the tests cannot import")
        obj = import_attr(n[1], n[2])
        if strict and not isinstance(obj, _GLOBAL_TYPES):
            raise WireError("a reference that is not a function or class")
        return obj
    raise WireError(f"unknown node {tag!r}")


def _ndarray(dtype, shape, data, strict: bool):
    if type(dtype) is not str or not _NUMPY_DTYPE.match(dtype) or type(data) is not bytes:
        raise WireError("malformed array")
    scalar = shape is None
    shape = [] if scalar else shape
    if type(shape) is not list or not all(type(x) is int and x >= 0 for x in shape):
        raise WireError("malformed array shape")
    import numpy

    dt = numpy.dtype(dtype)
    count = 1
    for x in shape:
        count *= x
    if dt.kind == "O" or count * dt.itemsize != len(data):
        raise WireError("malformed array")
    array = numpy.frombuffer(data, dtype=dt).reshape(shape).copy()
    return array[()] if scalar else array
