"""The solution process: it runs the untrusted program, and nothing else ever does.

The zygote forks it, beside the row's test process and into the same PID and IPC namespaces,
before the row exists: its memory holds nothing of the row, not the tests, not the expected
outputs, not an earlier row (the zygote never reads rows). It is not the test process's child,
so it never shares the pages the test process has written either. What reaches it afterwards
is the program text and, call by call, the arguments the tests pass. It starts (`start`) by
keeping only its own four descriptors (stdin, stdout, stderr, the call channel to the test
process) and dropping its capabilities (the zygote's seccomp filter it has from birth: the
zygote answers its refused calls), tells the test process its pid, then sets its rlimits and
waits for:
- `("io", program)` with four descriptors: fork a child that runs the program as a script on
  that stdin (stdin/stdout tests), report its pid, then its exit status;
- `("load", program)`: become the program's server. The program is a real module named
  `solution` (a file in a directory on `sys.path`, so pickle and multiprocessing find its
  functions and classes), compiled without inheriting any `__future__` flags. The server
  answers calls with values (`values.Encoder`) or handles; an exception raised by the program
  is data for the tests.
"""

from __future__ import annotations

import builtins
import os
import signal
import socket
import sys
import types

from . import osutil, signals, values, wire
from .osutil import PROGRAM_FILES, close_fds_from
from .server import Server, innermost_line

# Exit code of a script that ran out of memory; the harness reports status "memory".
MEMORY_EXIT = 86


def _write_program(directory: str, name: str, program: str) -> str:
    """The program's file (plain system calls: a file object costs this freshly forked process
    a tenth of a millisecond in page faults)."""
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(program.encode("utf-8", "surrogatepass"))
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


def load_module(program: str, path: str):
    """The program as the module `solution`, registered before it runs (dataclasses and
    pickle look their module up while it loads)."""
    module = types.ModuleType("solution")
    module.__file__ = path
    module.__builtins__ = builtins
    sys.modules["solution"] = module
    code = compile(program, path, "exec", dont_inherit=True)
    exec(code, vars(module))
    return module


def run_server(fd: int, program: str, directory: str, result_items: int) -> None:
    path = _write_program(directory, PROGRAM_FILES[0], program)
    sys.argv[:] = [path]
    hook = signals.Hook((path,))
    enc = values.Encoder(result_items)
    try:
        module = load_module(program, path)
    except BaseException as e:
        srv = Server(fd, None, enc, hook, path, program)
        wire.send(fd, ("load_error", type(e).__name__, srv.error_tail(e), hook.take()))
        return
    server = Server(fd, module, enc, hook, path, program)
    try:
        manifest = server.manifest()
    except BaseException as e:  # a global whose encoding raised
        wire.send(fd, ("load_error", type(e).__name__, server.error_tail(e), hook.take()))
        return
    wire.send(fd, ("manifest", manifest, hook.take()))
    server.serve()


def run_main(program: str, path: str) -> int:
    """Run the program as a script (stdin/stdout tests); the exit code is the verdict's input."""
    main = types.ModuleType("__main__")
    main.__file__ = path
    sys.argv[:] = [path]  # argparse, fileinput and the like see a plain script
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    try:
        exec(compile(program, path, "exec", dont_inherit=True), vars(main))
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except MemoryError as e:
        print(f"MemoryError: {e}", file=sys.stderr)
        return MEMORY_EXIT
    except BaseException as e:
        line = innermost_line(e, path, program)
        where = f" (line {line[0]}: {line[1]})" if line else ""
        print(f"{type(e).__name__}: {e}"[:600] + where, file=sys.stderr)
        return 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
    return 0


def _io_child(program: str, directory: str) -> None:
    """A child of the solution process that runs one stdin/stdout test (descriptors 0-3)."""
    code = 1
    try:
        path = _write_program(directory, PROGRAM_FILES[1], program)
        hook = signals.Hook((path,))
        code = run_main(program, path)
        try:
            os.write(3, (" ".join(hook.take()) + "\n").encode())
        except OSError:
            pass
    finally:
        os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)


def start(limits: dict, plan, fds: tuple, scratch: str | None) -> None:
    """The solution process, right after the zygote forked it; never returns. `fds`: its ends
    of the channel, stdout, stderr, and its stdin."""
    try:
        channel_fd, out_w, err_w, stdin = fds
        directory = osutil.become(
            "solution", {0: stdin, 1: out_w, 2: err_w, 3: channel_fd}, scratch
        )
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)
        # Before any program code: the test process learns this process's pid as the row's
        # namespace numbers it.
        wire.send(3, ("hello", os.getpid()))
        main(limits, plan, directory, channel)
    finally:
        os._exit(0)


def main(limits: dict, plan, directory: str, channel: socket.socket) -> None:
    """The solution process's loop (descriptors 0-2 and the channel on 3 are in place)."""
    osutil.apply_limits(plan)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    sys.path.append(directory)  # so that `import solution` finds the program's file
    while True:
        try:
            req, fds = wire.recv_fds(channel)
        except EOFError:
            return
        if req[0] == "io" and len(fds) == 4:
            pid = os.fork()
            if pid == 0:
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                close_fds_from(4)
                _io_child(req[1], directory)
            for fd in fds:
                os.close(fd)
            wire.send(3, ("io_pid", pid))
            _, status = os.waitpid(pid, 0)
            wire.send(3, ("io_done", status))
        elif req[0] == "load":
            for fd in fds:
                os.close(fd)
            run_server(3, req[1], directory, limits["result_items"])
            return
        else:
            for fd in fds:
                os.close(fd)
            return
