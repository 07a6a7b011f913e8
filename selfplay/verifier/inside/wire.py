"""Framing and plain data: how values cross between the test process and the solution.

Values travel as `marshal` frames. `marshal` serialises only exact built-in types (an int
subclass is refused), so an object that lies about equality cannot be sent as data. The
receiving side still re-checks every decoded value with `check_plain`, because the sender is
untrusted and a crafted frame could carry code objects or absurd nesting.
"""

from __future__ import annotations

import marshal
import os
import struct

MAX_FRAME = 64 * 1024 * 1024
MAX_NODES = 2_000_000
_HEADER = struct.Struct("<I")
PLAIN_ATOMS = (type(None), bool, int, float, complex, str, bytes)
PLAIN_CONTAINERS = (list, tuple, dict, set, frozenset)


class WireError(Exception):
    """The peer sent something that is not a valid frame or not plain data."""


class NotPlain(Exception):
    """A value that cannot cross the boundary as data."""


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            raise EOFError("peer closed the channel")
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def send(fd: int, obj) -> None:
    data = marshal.dumps(obj)
    if len(data) > MAX_FRAME:
        raise NotPlain(f"value of {len(data)} bytes exceeds the {MAX_FRAME}-byte limit")
    buf = _HEADER.pack(len(data)) + data
    view = memoryview(buf)
    while view:
        view = view[os.write(fd, view) :]


def recv(fd: int):
    (n,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    if n > MAX_FRAME:
        raise WireError(f"frame of {n} bytes exceeds the limit")
    try:
        return marshal.loads(_read_exact(fd, n))
    except (ValueError, EOFError, TypeError) as e:
        raise WireError(f"malformed frame: {e}") from None


def check_plain(value, _budget: list[int] | None = None):
    """Return `value` if it is built only of exact plain types, else raise WireError."""
    budget = [MAX_NODES] if _budget is None else _budget
    stack = [value]
    while stack:
        v = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise WireError("value too large")
        t = type(v)
        if t in PLAIN_ATOMS:
            continue
        if t is list or t is tuple or t is set or t is frozenset:
            stack.extend(v)
        elif t is dict:
            stack.extend(v.keys())
            stack.extend(v.values())
        else:
            raise WireError(f"non-plain value of type {t.__name__}")
    return value


def to_plain(value):
    """Solution side: `value` as plain data, converting numpy values; else NotPlain.

    This runs in the untrusted process, so it needs no defences: whatever it produces is
    checked again by the receiver.
    """
    # marshal alone is not enough: it writes any buffer (a numpy array, a bytearray) as bytes.
    try:
        return check_plain(value)
    except WireError:
        pass
    converted = _convert(value, 0)
    try:
        marshal.dumps(converted)
    except ValueError:
        raise NotPlain(type(value).__name__) from None
    return converted


def _convert(v, depth):
    if depth > 200:
        raise NotPlain("nesting too deep")
    t = type(v)
    if t in PLAIN_ATOMS:
        return v
    mod = getattr(t, "__module__", "") or ""
    if mod.startswith("numpy") and hasattr(v, "tolist"):
        return _convert(v.tolist(), depth + 1)
    if t is list:
        return [_convert(x, depth + 1) for x in v]
    if t is tuple:
        return tuple(_convert(x, depth + 1) for x in v)
    if t is dict:
        return {_convert(k, depth + 1): _convert(x, depth + 1) for k, x in v.items()}
    if t is set:
        return {_convert(x, depth + 1) for x in v}
    if t is frozenset:
        return frozenset(_convert(x, depth + 1) for x in v)
    raise NotPlain(t.__name__)
