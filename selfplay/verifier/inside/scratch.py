"""What a row could leave in its worker, renewed after every row: the sandbox's writable
places and the zygote's own settings.

The writable places (/tmp, /dev/shm and the program's directory) are tmpfs: wherever a row
changed anything, a fresh tmpfs replaces the old one (`osutil.fresh_tmpfs`), so its files,
modes, times, extended attributes and even the next inode number start again, and a lazy
unmount frees a million files in the kernel in a fraction of a second. The zygote is PID 1 of
the /proc the rows see, and a row (same uid) can write some of its settings there: its OOM
score, core-dump filter and scheduling group's nice value are put back.
"""

from __future__ import annotations

import os

from . import osutil
from .osutil import PROGRAM_DIR

PLACES = ("/tmp", "/dev/shm", PROGRAM_DIR)


class Scratch:
    def __init__(self, scratch_mb: int):
        self.size = scratch_mb * 1024 * 1024
        # (place, tmpfs options, its change time when last renewed; None: renew every row)
        self.places: list[tuple[str, str, int | None]] = []
        self.settings = _own_settings()

    def start(self) -> bool:
        """In the sandbox: take the places over (their modes as bubblewrap made them)."""
        for top in PLACES:
            try:
                mode = os.stat(top).st_mode & 0o7777
            except OSError:
                mode = 0o755
            every_row = top == PROGRAM_DIR
            self.places.append((top, f"size={self.size},mode={mode:o}", None if every_row else -1))
        return self.renew()

    def renew(self) -> bool:
        """Fresh places where a row changed them, and the zygote's settings put back; False
        if a place could not be renewed."""
        ok = True
        for i, (top, options, changed) in enumerate(self.places):
            # Every row writes its program to the program's directory; /tmp and /dev/shm mostly
            # stay untouched, and then their inode's change time says so (it moves with any
            # entry made in it, and with any change of mode, times or attributes).
            if changed is not None and _ctime(top) == changed:
                continue
            ok = osutil.fresh_tmpfs(top, options) and ok
            if changed is not None:
                self.places[i] = (top, options, _ctime(top))
        self.restore_settings()
        return ok

    def restore_settings(self) -> None:
        for path, value in self.settings:
            osutil.write_file(path, value)


def _own_settings() -> list[tuple[str, bytes]]:
    out = []
    for name in ("oom_score_adj", "coredump_filter"):
        try:
            with open(f"/proc/self/{name}", "rb") as f:
                out.append((f"/proc/self/{name}", f.read().strip()))
        except OSError:
            pass
    if os.path.exists("/proc/self/autogroup"):
        out.append(("/proc/self/autogroup", b"0"))
    return out


def _ctime(path: str) -> int:
    try:
        return os.stat(path).st_ctime_ns
    except OSError:
        return -2
