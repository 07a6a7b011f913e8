"""What the zygote imports once, before it forks anything, and how it forks afterwards.

Modules imported here are in every row's processes from the start, so a row that uses them
does not pay for the import. The row's processes are forked with fork(2) itself where
CPython's own work around it would do nothing (see `osutil.fork`): when no preloaded module
registered an at-fork hook (random's reseeding, threading's bookkeeping) and none of the
modules known to is loaded. Otherwise with os.fork, hooks and all.
"""

from __future__ import annotations

import os
import sys

from . import osutil

# Standard-library modules that register at-fork hooks when imported.
FORK_HOOK_MODULES = ("random", "threading", "logging", "multiprocessing", "concurrent.futures")
# Modules imported once here rather than by every row that uses them. Not `random` (nor
# `statistics` or `tempfile`, which import it): it reseeds itself in every forked child, two
# forks a row, at about 0.2 ms each; a row that uses it pays its import (0.5 ms) instead.
PRELOAD = (
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "heapq",
    "bisect",
    "string",
    "typing",
    "dataclasses",
    "json",
    "fractions",
    "decimal",
    "copy",
    "operator",
    "enum",
    "datetime",
    "textwrap",
    "unicodedata",
    "array",
    "cmath",
    "pickle",
)


def _recorder(hooks: list):
    register = os.register_at_fork

    def record(**kwargs):
        hooks.append(kwargs)
        register(**kwargs)

    return record


def load(extra=()):
    """Import PRELOAD and `extra` (what fails to import is skipped); the fork to use."""
    hooks: list = []
    register, os.register_at_fork = os.register_at_fork, _recorder(hooks)
    try:
        for name in PRELOAD + tuple(extra):
            try:
                __import__(name)
            except Exception:
                pass
    finally:
        os.register_at_fork = register
    quiet = not hooks and not any(m in sys.modules for m in FORK_HOOK_MODULES)
    return osutil.fork if quiet else os.fork
