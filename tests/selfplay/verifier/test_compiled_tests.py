"""Tests and calls are compiled once on the host and loaded by each row's test process."""

import subprocess
import sys

from selfplay.verifier import sandbox

PROGRAM = "def square(x):\n    return x * x\n"


def test_rows_sharing_tests_compile_them_once_and_grade_alike(verifier_5s_512mb):
    tests = ["assert square(3) == 9", "assert square(-2) == 4"]
    before = sandbox.compiled.cache_info()
    rows = [
        {"id": str(i), "program": PROGRAM, "tests": tests, "calls": ["square(7)"]} for i in range(6)
    ]
    rows.append({"id": "wrong", "program": "def square(x):\n    return x\n", "tests": tests})
    verdicts = verifier_5s_512mb.grade(rows)
    assert [v.passed for v in verdicts] == [True] * 6 + [False]
    assert all(v.outputs == ["49"] for v in verdicts[:6])
    assert "<test 0>" in verdicts[-1].detail and "square(3) == 9" in verdicts[-1].detail
    after = sandbox.compiled.cache_info()
    assert after.hits - before.hits >= 5 * 3  # two tests and a call, rows 2 to 7


def test_a_test_that_does_not_compile_is_reported_by_the_test_process(grade):
    v = grade(PROGRAM, ["assert square(2) == 4", "def broken(:\n    pass"])
    assert not v.passed and v.tests_passed == 1
    assert "<test 1>" in v.detail and "SyntaxError" in v.detail, v.detail


def test_the_tests_compile_warnings_stay_off_the_hosts_stderr():
    # In a process of its own: pytest records warnings itself, whatever the filters say.
    script = (
        "from selfplay.verifier import Verifier\n"
        "tests = ['x = 3\\nassert (x is 3) or True\\nassert len(chr(92) + \\'\\\\d\\') > 0']\n"
        "with Verifier(workers=1) as v:\n"
        f"    r = v.grade([{{'id': 'a', 'program': {PROGRAM!r}, 'tests': tests}}])[0]\n"
        "assert r.passed, r.detail\n"
        "print('graded')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "graded", done.stderr
    assert "Warning" not in done.stderr, done.stderr
