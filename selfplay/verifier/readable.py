"""The files a row may read, and keeping every page of them in memory.

Every row reads through the host's page cache. A page a row reads is loaded if it was not
cached, and a row can tell a load from a hit (by timing the read, by its own major faults,
by /proc/self/io), so rows that may read cold files can pass values to each other, and to
later verifier runs, through which pages are cached: one row loads page k to write bit k,
another times its reads to read it. Nothing a row may do can drop a page (the seccomp
filter refuses fadvise, madvise's eviction advice and the like), so the channel lives in
pages nobody has read yet. The cure is to leave none: a row sees only the interpreter, the
standard library, the packages a task may import and the shared libraries they load, and
the host reads every page of them before any row runs (`warm`) and again now and then, so a
row's read always hits. Nothing else of the host's filesystem is mounted in the sandbox.

What stays: the kernel may still drop a warm page under memory pressure from outside the
sandbox (a row's own pressure reclaims only what its cgroup loaded, and it loaded nothing
here), and the next read loads it. That is noise a row can see but cannot write.
"""

from __future__ import annotations

import functools
import os
import re
import site
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from importlib import metadata

# What a program may import beyond the standard library unless the configuration says more
# (`verifier.packages`), with what these need to import.
DEFAULT_PACKAGES = ("numpy", "pandas", "pytest")
# A comma list of what programs may import beyond the standard library, for every verifier
# this process makes that is not told otherwise (the RL reward functions, which a trainer
# calls, have no other way to be told).
PACKAGES_ENV = "SELFPLAY_PACKAGES"


# Parts of the standard library no program needs: its own test suite (123 MB, most of the
# library's size), the GUI, the bundled pip wheels, the static library for embedding.
STDLIB_HIDDEN = ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "site-packages")
# Beside libc: what glibc loads on its own (libgcc_s, when a thread is cancelled) and the
# parts of the C library a program reaches through ctypes by their old names (librt's
# message queues, libdl, libutil's openpty: stubs of libc today).
GLIBC_COMPANIONS = (
    "libgcc_s.so.1",
    "librt.so.1",
    "libdl.so.2",
    "libpthread.so.0",
    "libutil.so.1",
    "libanl.so.1",
    "libresolv.so.2",
    "libnss_files.so.2",
)
# How often `Readable.keep_warm` reads everything again, in seconds.
REWARM_S = 30.0
_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")
_SHARED = re.compile(r"\.so(\.[0-9.]+)?$")


def default_packages() -> tuple[str, ...]:
    """The packages $SELFPLAY_PACKAGES names, else DEFAULT_PACKAGES."""
    value = os.environ.get(PACKAGES_ENV)
    if value is None:
        return DEFAULT_PACKAGES
    return tuple(p.strip() for p in value.split(",") if p.strip())


@dataclass
class Readable:
    """The host paths bound into the sandbox (directories or files), the directories hidden
    under them, and when they were last read."""

    paths: list[str]
    hidden: list[str]
    packages: tuple[str, ...]
    missing: list[str] = field(default_factory=list)
    # Read too, but bound elsewhere by the sandbox's command (its own code, its /etc files).
    also: list[str] = field(default_factory=list)
    bytes: int = 0
    warmed_at: float = 0.0

    def files(self):
        hidden = tuple(h + "/" for h in self.hidden)
        for path in [*self.paths, *self.also]:
            if os.path.isfile(path):
                yield path
                continue
            for top, dirs, names in os.walk(path):
                dirs[:] = [d for d in dirs if os.path.join(top, d) + "/" not in hidden]
                for name in names:
                    full = os.path.join(top, name)
                    if not os.path.islink(full):
                        yield full

    def warm(self) -> int:
        """Read every page of every readable file once; the bytes read."""
        total, buf = 0, bytearray(1 << 20)
        view = memoryview(buf)
        for path in self.files():
            try:
                with open(path, "rb", buffering=0) as f:
                    while n := f.readinto(view):
                        total += n
            except OSError:
                continue  # unreadable to us too: not a page a row can load either
        self.bytes, self.warmed_at = total, time.monotonic()
        return total

    def keep_warm(self) -> None:
        if time.monotonic() - self.warmed_at >= REWARM_S:
            self.warm()


def _site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    user = site.getusersitepackages()
    if isinstance(user, str):
        dirs.append(user)
    return [os.path.realpath(d) for d in dirs if os.path.isdir(d)]


def _distribution(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _requirements(dist: metadata.Distribution) -> list[str]:
    # Imported here: the verifier package is imported with the standard library alone in
    # places (a sandboxed interpreter started with -S).
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for line in dist.requires or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        # Only what the package needs to import, not its extras.
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.append(req.name)
    return names


def package_paths(packages: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The site-packages entries (package directories, modules, their .libs and metadata)
    of `packages` and of what they require; and the names not installed."""
    seen, todo, missing, entries = set(), list(packages), [], set()
    sites = _site_dirs()
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        dist = _distribution(name)
        if dist is None:
            if name in packages:
                missing.append(name)
            continue
        todo.extend(_requirements(dist))
        for file in dist.files or []:
            full = os.path.realpath(dist.locate_file(file))
            for s in sites:
                if full.startswith(s + "/"):
                    top = full[len(s) + 1 :].split("/", 1)[0]
                    if top != "__pycache__":
                        entries.add(os.path.join(s, top))
    return sorted(e for e in entries if os.path.exists(e)), missing


def shared_libraries(files: list[str]) -> list[str]:
    """The shared libraries `files` (executables and extension modules) load, as `ldd`
    resolves them, and glibc's companions (`GLIBC_COMPANIONS`)."""
    libs: set[str] = set()
    for i in range(0, len(files), 200):
        out = subprocess.run(["ldd", *files[i : i + 200]], capture_output=True, text=True)
        libs.update(m.group(1) for m in _LDD_PATH.finditer(out.stdout))
    for lib in list(libs):
        if os.path.basename(lib).startswith("libc.so"):
            for name in GLIBC_COMPANIONS:
                if os.path.exists(companion := os.path.join(os.path.dirname(lib), name)):
                    libs.add(companion)
    return sorted(lib for lib in libs if os.path.exists(lib))


@functools.lru_cache(maxsize=8)
def readable(packages: tuple[str, ...] = DEFAULT_PACKAGES) -> Readable:
    """What a row may read for these packages (computed once per process)."""
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    hidden = [os.path.join(stdlib, h) for h in STDLIB_HIDDEN]
    hidden += [os.path.join(stdlib, d) for d in os.listdir(stdlib) if d.startswith("config-")]
    hidden = [h for h in hidden if os.path.isdir(h)]
    entries, missing = package_paths(tuple(packages))
    python = os.path.realpath(sys.executable)
    objects = [python]
    for root in [stdlib, *entries]:
        if os.path.isdir(root):
            for top, dirs, names in os.walk(root):
                dirs[:] = [d for d in dirs if os.path.join(top, d) not in hidden]
                objects += [os.path.join(top, n) for n in names if _SHARED.search(n)]
        elif _SHARED.search(root):
            objects.append(root)
    inside = tuple(e + "/" for e in entries)
    libs = [
        lib for lib in shared_libraries(objects) if not os.path.realpath(lib).startswith(inside)
    ]
    paths = [stdlib, python, *entries, *libs]
    return Readable(paths=paths, hidden=hidden, packages=tuple(packages), missing=missing)
