"""Without bubblewrap the verifier still grades correctly, says loudly that isolation is
weakened, and cleans up after every row (no namespaces: process groups and a scratch
directory per row)."""

import uuid

import pytest

from selfplay.verifier import IsolationUnavailable, Verifier
from selfplay.verifier import verifier as verifier_module

SQUARE = "def square(x):\n    return x * x\n"


@pytest.fixture
def no_sandbox(monkeypatch):
    monkeypatch.setattr(verifier_module, "probe_bwrap", lambda: "bubblewrap switched off")


def test_many_rows_grade_correctly_and_leave_nothing_behind(no_sandbox, processes_with):
    marker = f"selfplay-degraded-{uuid.uuid4().hex}"
    leave = (
        "import subprocess, sys\n"
        "def square(x):\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}],"
        " start_new_session=True)\n"
        "    return x * x\n"
    )
    rows = []
    for i in range(150):  # more rows than the worker's process limit: zombies would fill it
        program = [SQUARE, "def square(x):\n    return x + x\n", leave][i % 3]
        rows.append({"id": str(i), "program": program, "tests": ["assert square(3) == 9"]})
    warnings: list[str] = []
    with Verifier(workers=1, timeout_s=10, warn=warnings.append) as v:
        verdicts = v.grade(rows)
        assert not v.isolation["pid_namespace"]
    assert [x.passed for x in verdicts] == [i % 3 != 1 for i in range(150)], [
        x.detail for x in verdicts if x.status == "error"
    ][:3]
    assert any("weakened isolation" in w and "bubblewrap switched off" in w for w in warnings)
    assert processes_with(marker) == []


def test_a_row_that_runs_too_long_is_stopped(no_sandbox):
    with Verifier(workers=1, timeout_s=1.0, warn=lambda _: None) as v:
        slow, fine = v.grade(
            [
                {"id": "slow", "program": "def square(x):\n    while True: pass\n",
                 "tests": ["assert square(3) == 9"]},
                {"id": "fine", "program": SQUARE, "tests": ["assert square(3) == 9"]},
            ]
        )  # fmt: skip
    assert slow.status == "timeout", slow.detail
    assert fine.passed, fine.detail


def test_require_isolation_refuses_to_run_without_the_sandbox(no_sandbox):
    with pytest.raises(IsolationUnavailable, match="bubblewrap switched off"):
        with Verifier(workers=1, require_isolation=True) as v:
            v.start()
