"""A row's test process, from its fork to its exit.

The zygote forks it, and beside it the row's solution process, *before* the row arrives (while
the previous row still runs), each the first two processes of a new PID namespace sharing a
new IPC namespace, with the zygote's seccomp filter (the zygote answers refused calls). It
prepares everything that does not depend on the row: no capabilities, the row's limits, and
the solution's channel (the solution process sends its pid as the row's namespace numbers it).
Then it blocks on its control socket (descriptor 3) until the zygote hands it the row and the
verdict as two descriptors it has never read. It grades the row, writes the verdict, tells the
zygote `done`, and exits; its namespace, and with it every process the row started, dies with
it. The solution process is the zygote's child, not this one's: its exit status comes from the
zygote (`_solution_status`).

Descriptors while prepared: 3 the control socket, 4 a placeholder for the verdict, 5-7 its
ends of the solution's channel, stdout and stderr.
"""

from __future__ import annotations

import marshal
import os
import socket
import struct
import time

from . import harness, osutil, wire


def read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _solution_status() -> int:
    """The solution process's wait status, from the zygote (its parent); call once it has
    been killed or has hung up."""
    try:
        os.write(3, b"wait")
        data = os.read(3, 16)
    except OSError:
        data = b""
    return struct.unpack("=i", data)[0] if len(data) == 4 else 0


def _prepare(limits: dict, plan, fds: tuple, scratch, devnull: int, rep):
    """Everything before the row: returns the solution's channel and the phases so far."""
    t0 = time.perf_counter()
    ctl, chan, out_r, err_r = fds
    # 0: never the host's channel; 4: the verdict's place, until the row comes.
    placed = {0: devnull, 3: ctl, 4: devnull, 5: chan, 6: out_r, 7: err_r}
    directory = osutil.become("test", placed, scratch)
    if scratch is not None:
        os.mkdir(directory)
    # Not dumpable, SIGPIPE ignored, SIGINT default, no_new_privs: as the zygote left them.
    osutil.apply_limits(plan)
    t1 = time.perf_counter()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=5)
    hello = wire.recv(5)
    if type(hello) is not tuple or len(hello) != 2 or type(hello[1]) is not int:
        raise OSError("the solution process did not start")
    chan = harness.Channel(hello[1], sock, 6, 7, limits, rep.emit)
    chan.waiter = _solution_status
    return chan, {"setup": t1 - t0, "spawn": time.perf_counter() - t1}


def _await_row() -> tuple[int, int] | None:
    """Block until the zygote hands over (row, verdict); None if it never will."""
    ctl = socket.socket(fileno=3)
    try:
        msg, fds, _, _ = socket.recv_fds(ctl, 16, 2)
    except OSError:
        return None
    finally:
        ctl.detach()
    if msg != b"row" or len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return None
    return fds[0], fds[1]


def main(limits: dict, plan, fds: tuple, scratch, devnull: int) -> None:
    """The test process (in the child, right after the fork); never returns."""
    rep = harness.Reporter()
    try:
        try:
            chan, phases = _prepare(limits, plan, fds, scratch, devnull, rep)
            failure = None
        except BaseException as e:  # reported in the verdict, once there is one
            failure = e
        handed = _await_row()
        if handed is None:
            return
        row_fd, verdict_fd = handed
        phases_go = time.monotonic()
        os.dup2(verdict_fd, 4)
        os.close(verdict_fd)
        rep.attach(4)
        if failure is not None:
            raise failure
        t = time.perf_counter()
        req = marshal.loads(read_all(row_fd))  # written by the host, never by a row
        os.close(row_fd)
        phases.update(read=time.perf_counter() - t, t_go=phases_go)
        req["limits"] = limits
        verdict = harness.Row(req, rep, chan, phases).run()
        verdict["phases"]["t_end"] = time.monotonic()
        rep.write({"v": verdict})
    except BaseException as e:
        try:
            detail = f"harness error: {e!r}"[:500]
            rep.write({"v": {"status": "error", "tests_passed": 0, "detail": detail}})
        except BaseException:
            pass
    finally:
        try:
            os.write(3, b"done")  # the zygote answers the host now, and cleans up after
        except BaseException:
            pass
        os._exit(0)
