"""Without the sandbox the verifier refuses, unless isolation "none" is asked for: then it
still grades correctly, says loudly that nothing is sandboxed, marks every verdict, and cleans
up after every row (no namespaces: process groups and a scratch directory per row)."""

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
    with Verifier(workers=1, timeout_s=10, isolation="none", warn=warnings.append) as v:
        verdicts = v.grade(rows)
        assert not v.isolation["pid_namespace"] and v.isolation["mode"] == "none"
    assert [x.passed for x in verdicts] == [i % 3 != 1 for i in range(150)], [
        x.detail for x in verdicts if x.status == "error"
    ][:3]
    assert {x.isolation for x in verdicts} == {"none"}
    assert any("WITHOUT a sandbox" in w for w in warnings)
    assert processes_with(marker) == []


def test_a_row_that_runs_too_long_is_stopped(no_sandbox):
    with Verifier(workers=1, timeout_s=1.0, isolation="none", warn=lambda _: None) as v:
        slow, fine = v.grade(
            [
                {"id": "slow", "program": "def square(x):\n    while True: pass\n",
                 "tests": ["assert square(3) == 9"]},
                {"id": "fine", "program": SQUARE, "tests": ["assert square(3) == 9"]},
            ]
        )  # fmt: skip
    assert slow.status == "timeout", slow.detail
    assert fine.passed, fine.detail


def test_without_the_sandbox_nothing_runs_unless_none_is_asked_for(no_sandbox, monkeypatch):
    monkeypatch.delenv("SELFPLAY_ISOLATION", raising=False)
    with pytest.raises(IsolationUnavailable, match="bubblewrap switched off.*--isolation none"):
        with Verifier(workers=1) as v:
            v.grade([{"id": "d", "program": SQUARE, "tests": ["assert square(3) == 9"]}])


def test_the_environment_can_ask_for_no_sandbox(no_sandbox, monkeypatch):
    monkeypatch.setenv("SELFPLAY_ISOLATION", "none")
    with Verifier(workers=1, warn=lambda _: None) as v:
        (verdict,) = v.grade([{"id": "d", "program": SQUARE, "tests": ["assert square(3) == 9"]}])
    assert verdict.passed and verdict.isolation == "none"
    assert verdict.to_dict()["isolation"] == "none"


def test_an_unknown_isolation_is_refused():
    with pytest.raises(ValueError, match="'sandbox' or 'none'"):
        Verifier(isolation="weak")


def test_a_transient_probe_failure_is_tried_again(monkeypatch):
    from selfplay.verifier import bwrap

    answers = iter(["bubblewrap failed to start: timed out", None])
    monkeypatch.setattr(bwrap, "_probe_once", lambda: next(answers))
    monkeypatch.setattr(bwrap.time, "sleep", lambda s: None)
    assert bwrap.probe_bwrap() is None


def test_a_persistent_probe_failure_is_reported(monkeypatch):
    from selfplay.verifier import bwrap

    calls = []
    monkeypatch.setattr(bwrap, "_probe_once", lambda: calls.append(1) or "no namespaces")
    monkeypatch.setattr(bwrap.time, "sleep", lambda s: None)
    assert bwrap.probe_bwrap() == "no namespaces" and len(calls) == 3


def test_a_replacement_worker_without_the_sandbox_grades_nothing(monkeypatch):
    """A worker that dies mid-run is started again sandboxed; one that comes back without
    an isolation property is refused, and its rows are errors, never graded unsandboxed."""
    from selfplay.verifier import sandbox

    with Verifier(workers=1, timeout_s=5, warn=lambda _: None) as v:
        first = v.grade([{"id": "a", "program": SQUARE, "tests": ["assert square(3) == 9"]}])
        assert first[0].passed and first[0].isolation == "sandbox"
        worker = v._workers[0]
        real_start = sandbox.Worker._start

        def start_without_seccomp(self):
            real_start(self)
            self.facts = dict(self.facts, seccomp=False)

        monkeypatch.setattr(sandbox.Worker, "_start", start_without_seccomp)
        worker.proc.kill()
        worker.proc.wait()
        hack = "import os\ndef square(x):\n    return os.path.exists('/root')\n"
        later = v.grade([{"id": "b", "program": hack, "tests": ["assert square(3)"]}])
    assert not later[0].passed and later[0].status == "error"
    assert "without seccomp filter" in later[0].detail
