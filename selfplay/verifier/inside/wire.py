"""Framing: length-prefixed `marshal` frames on a stream socket, some carrying descriptors.

`marshal` writes only built-in types (an int subclass is refused), so the sender cannot smuggle
an object that lies about equality; the receiving test process still checks every decoded
value (`decoder.Decoder`), because the sender is untrusted and a crafted frame could carry code
objects or absurd nesting.
"""

from __future__ import annotations

import array
import marshal
import os
import socket
import struct

MAX_FRAME = 1 << 30
_HEADER = struct.Struct("<I")


class WireError(Exception):
    """The peer sent something that is not a valid frame."""


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            raise EOFError("peer closed the channel")
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def encode_frame(obj) -> bytes:
    data = marshal.dumps(obj)
    if len(data) > MAX_FRAME:
        raise ValueError(f"a frame of {len(data)} bytes is over the limit")
    return _HEADER.pack(len(data)) + data


def send(fd: int, obj) -> None:
    _write_all(fd, encode_frame(obj))


def recv(fd: int):
    (n,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    return _decode(n, _read_exact(fd, n))


def _decode(n: int, data: bytes):
    if n > MAX_FRAME:
        raise WireError(f"frame of {n} bytes exceeds the limit")
    try:
        return marshal.loads(data)
    except (ValueError, EOFError, TypeError) as e:
        raise WireError(f"malformed frame: {e}") from None


def send_fds(sock: socket.socket, obj, fds: list[int]) -> None:
    """A frame whose first byte carries `fds` (SCM_RIGHTS)."""
    frame = encode_frame(obj)
    if fds:
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        if sock.sendmsg([frame[:1]], anc) != 1:
            raise OSError("short send")
        frame = frame[1:]
    _write_all(sock.fileno(), frame)


def recv_fds(sock: socket.socket, max_fds: int = 8):
    """(object, descriptors) of a frame sent with `send_fds`."""
    fd = sock.fileno()
    data, anc, _, _ = sock.recvmsg(1, socket.CMSG_LEN(max_fds * 4))
    fds: list[int] = []
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(payload[: len(payload) - len(payload) % a.itemsize])
            fds.extend(a)
    if not data:
        for f in fds:
            os.close(f)
        raise EOFError("peer closed the channel")
    head = data + _read_exact(fd, _HEADER.size - 1)
    (n,) = _HEADER.unpack(head)
    return _decode(n, _read_exact(fd, n)), fds
