"""`selfplay` on a pseudo-terminal, and the screen a person would be left looking at.

The command's stdout and stderr both go to one pty (as in a terminal window), so rich draws
its live bars; a terminal emulator (pyte) replays every byte, cursor moves and erases
included, and what remains on its screen is what the user sees when the command ends.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import termios
import time

import pyte
from selfplay_cli import cli_command


def run_on_terminal(
    *args: str, columns: int = 80, lines: int = 60, timeout: float = 300
) -> tuple[int, list[str]]:
    """Run `selfplay ARGS...` on a `columns` x `lines` terminal; (exit code, screen lines)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(columns), LINES=str(lines))
    for name in ("NO_COLOR", "TERM_PROGRAM", "CI", "GITHUB_ACTIONS"):
        env.pop(name, None)  # rich treats some of these as "not a real terminal"
    proc = subprocess.Popen(
        cli_command(*args), stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
    )
    os.close(slave)
    screen = pyte.Screen(columns, lines)
    stream = pyte.ByteStream(screen)
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"selfplay {' '.join(args)} ran past {timeout} s")
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the pty
                break
            if not data:
                break
            stream.feed(data)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
    return code, [line.rstrip() for line in screen.display]
