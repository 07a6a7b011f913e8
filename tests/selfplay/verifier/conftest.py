import os
import sys
import time
from pathlib import Path

import pytest

# With --import-mode=importlib test directories are not on sys.path; the shared chaos rows and
# floods are imported by name.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def grade(verifier_5s_512mb):
    """Grade one program; returns its Verdict."""

    def run(program, tests=("pass",), **row):
        return verifier_5s_512mb.grade(
            [{"id": "t", "program": program, "tests": list(tests), **row}]
        )[0]

    return run


@pytest.fixture
def processes_with():
    return _processes_with


def _processes_with(marker: str, settle_s: float = 5.0) -> list[int]:
    """Host pids whose command line contains `marker` (sandboxed processes included), once
    the worker has cleaned up after the row: the verdict is sent before the cleanup, which
    is over before the worker takes another row. Waits up to `settle_s` for none to be left."""
    deadline = time.monotonic() + settle_s
    while True:
        found = _scan(marker)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def _scan(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found
