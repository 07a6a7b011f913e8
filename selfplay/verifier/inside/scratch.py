"""What a row could leave in its worker, renewed after every row: the sandbox's writable
places and the zygote's own settings.

The writable places are tmpfs, and every row gets fresh ones, whatever it did: files, modes,
times, extended attributes and even the next inode number start again (an unnamed file,
O_TMPFILE, changes nothing visible in a place yet moves its inode counter, which a later row
would read: so no place is ever kept for the next row, touched or not).
Unmounting costs an expedited RCU grace period, in which the kernel interrupts every CPU while
the zygote waits: about a tenth of each row's time on two busy cores. So a place the row left
empty gets a new tmpfs mounted *over* the old one, and the covered ones, empty, go together
every STACK rows in one unmount of the place's first tmpfs (`Place`), or of the read-only
tmpfs at /run that holds the program's directory (`ProgramDir`: the solution process writes
the program there every row, and its files are removed first). A row that left anything in a
place (files, extended attributes: kernel memory that would stay taken under the cover) sends
that place's whole stack at once (a lazy unmount frees a million files in the kernel in a
fraction of a second).

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
# Tmpfs stacked on a place before they are unmounted together: each covered one is an empty
# tmpfs (a few kilobytes of kernel memory).
STACK = PROGRAM_STACK = 64


class Place:
    """/tmp or /dev/shm: a new tmpfs over the previous row's, every row (see the module)."""

    def __init__(self, path: str, options: str):
        self.path, self.options = path, options
        self.base = -1  # the place's first tmpfs: unmounting it takes the stack on it
        self.depth = 0

    def start(self) -> bool:
        if not osutil.mount_tmpfs(self.path, self.options):
            return False
        self.base = os.open(self.path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.depth = 1
        return True

    def renew(self) -> bool:
        if self.depth < STACK and _left_empty(self.path):
            if osutil.mount_tmpfs(self.path, self.options):
                self.depth += 1
                return True
        base, self.base = self.base, -1
        ok = osutil.unmount(f"/proc/self/fd/{base}")
        os.close(base)
        return ok and self.start()


def _left_empty(path: str) -> bool:
    """Nothing in the place that holds kernel memory: no entry, no extended attribute (a
    million files are not listed first)."""
    try:
        if os.listxattr(path):
            return False
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


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
        self.places: list[Place] = []
        self.program = ProgramDir(f"size={self.size},mode=755")
        self.settings = _own_settings()

    def start(self) -> bool:
        """In the sandbox: take the places over (their modes as bubblewrap made them)."""
        for top in PLACES:
            try:
                mode = os.stat(top).st_mode & 0o7777
            except OSError:
                mode = 0o755
            self.places.append(Place(top, f"size={self.size},mode={mode:o}"))
        return self.program.start() and all(p.start() for p in self.places)

    def renew(self) -> bool:
        """Fresh places for the next row, and the zygote's settings put back; False if a place
        could not be renewed."""
        ok = self.program.renew()
        for place in self.places:
            ok = place.renew() and ok
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
