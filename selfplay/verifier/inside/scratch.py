"""What a row could leave in its worker, renewed after every row: the sandbox's writable
places and the zygote's own settings.

The writable places are tmpfs, and a row gets fresh ones wherever it could have left
anything: files, modes, times, extended attributes and even the next inode number start
again.
- /tmp and /dev/shm mostly stay untouched: where a row changed anything (their change time
  says so), the old tmpfs is unmounted and a new one mounted (a lazy unmount frees a million
  files in the kernel in a fraction of a second). An unnamed file (O_TMPFILE) changes nothing
  there yet moves the inode counter: one of the kernel counters the threat model lists as not
  covered.
- The program's directory changes with every row (the solution process writes the program
  there). Unmounting costs an expedited RCU grace period, in which the kernel interrupts every
  CPU while the zygote waits: about a tenth of each row's time on two busy cores. So once the
  program's own files are removed (their memory released), a new tmpfs is mounted *over* the
  old one (`ProgramDir`), and the covered ones go together every PROGRAM_STACK rows, in one
  unmount of the read-only tmpfs at /run that holds them. A row that left anything else in
  the directory sends them all at once.

The zygote is PID 1 of the /proc the rows see, and a row (same uid) can write some of its
settings there: its OOM score, core-dump filter and scheduling group's nice value are put
back.
"""

from __future__ import annotations

import os

from . import osutil
from .osutil import PROGRAM_DIR, PROGRAM_FILES

PLACES = ("/tmp", "/dev/shm")
HOLDER = os.path.dirname(PROGRAM_DIR)
# Program directories stacked before they are unmounted together: each covered one is an
# empty tmpfs (a few kilobytes of kernel memory).
PROGRAM_STACK = 64


class ProgramDir:
    """The program's directory: a tmpfs mounted over the previous row's (see the module)."""

    def __init__(self, options: str):
        self.options = options
        self.depth = 0

    def start(self) -> bool:
        """A read-only tmpfs at /run holding the directory, and a first tmpfs on it."""
        if not osutil.mount_tmpfs(HOLDER, "size=65536,mode=755"):
            return False
        try:
            os.mkdir(PROGRAM_DIR, 0o755)
        except OSError:
            return False
        self.depth = 1
        return osutil.make_read_only(HOLDER) and osutil.mount_tmpfs(PROGRAM_DIR, self.options)

    def renew(self) -> bool:
        if self.depth < PROGRAM_STACK and _remove_program_files():
            if osutil.mount_tmpfs(PROGRAM_DIR, self.options):
                self.depth += 1
                return True
        return osutil.unmount(HOLDER) and self.start()


def _remove_program_files() -> bool:
    """Remove the program's files from its directory; False as soon as the row is seen to
    have left anything else there (a million files are not listed first), extended
    attributes on the directory itself included (kernel memory that the tmpfs's size does not
    bound, which would stay taken under the cover), or something could not be removed."""
    try:
        if os.listxattr(PROGRAM_DIR):
            return False
        with os.scandir(PROGRAM_DIR) as entries:
            names = []
            for entry in entries:
                if entry.name not in PROGRAM_FILES or len(names) == len(PROGRAM_FILES):
                    return False
                names.append(entry.name)
        for name in names:
            os.unlink(os.path.join(PROGRAM_DIR, name))
    except OSError:
        return False
    return True


class Scratch:
    def __init__(self, scratch_mb: int):
        self.size = scratch_mb * 1024 * 1024
        # (place, tmpfs options, its change time when last renewed)
        self.places: list[tuple[str, str, int]] = []
        self.program = ProgramDir(f"size={self.size},mode=755")
        self.settings = _own_settings()

    def start(self) -> bool:
        """In the sandbox: take the places over (their modes as bubblewrap made them)."""
        for top in PLACES:
            try:
                mode = os.stat(top).st_mode & 0o7777
            except OSError:
                mode = 0o755
            self.places.append((top, f"size={self.size},mode={mode:o}", -1))
        return self.program.start() and self.renew()

    def renew(self) -> bool:
        """Fresh places where a row changed them, and the zygote's settings put back; False
        if a place could not be renewed."""
        ok = self.program.renew()
        for i, (top, options, changed) in enumerate(self.places):
            # The inode's change time moves with any entry made in it, and with any change of
            # mode, times or attributes.
            if _ctime(top) == changed:
                continue
            ok = osutil.fresh_tmpfs(top, options) and ok
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
