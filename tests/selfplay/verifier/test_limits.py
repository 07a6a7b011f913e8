"""One test per limit; after each, the worker must still grade a healthy row."""

import uuid

import pytest

HEALTHY = {"id": "ok", "program": "def f():\n    return 1\n", "tests": ["assert f() == 1"]}


@pytest.fixture
def then_healthy(verifier_5s_512mb):
    def check():
        assert all(v.passed for v in verifier_5s_512mb.grade([dict(HEALTHY) for _ in range(4)]))

    return check


def test_wall_clock_timeout_of_a_python_loop(grade, then_healthy):
    v = grade("def spin():\n    while True:\n        pass\n", ["spin()"], timeout_s=0.5)
    assert v.status == "timeout" and 0.5 <= v.duration_s < 3
    then_healthy()


def test_wall_clock_timeout_of_code_stuck_in_c(grade, then_healthy):
    v = grade("def big():\n    return 10 ** (10 ** 9)\n", ["big()"], timeout_s=0.5)
    assert v.status == "timeout"
    then_healthy()


def test_timeout_counts_tests_passed_before_it(grade):
    program = "import time\ndef f(x):\n    if x:\n        time.sleep(60)\n    return x\n"
    v = grade(program, ["assert f(0) == 0", "f(1)"], timeout_s=0.5)
    assert (v.status, v.tests_passed, v.tests_total) == ("timeout", 1, 2)


def test_memory_limit(grade, then_healthy):
    v = grade("def grow():\n    return len(bytearray(3 * 1024 ** 3))\n", ["grow()"])
    assert v.status == "memory", v.detail
    then_healthy()


def test_per_row_memory_limit_overrides_the_default(verifier_5s_512mb):
    program = "def grow():\n    return len(bytearray(200 * 1024 ** 2))\n"
    rows = [
        {"id": "small", "program": program, "tests": ["grow()"], "memory_mb": 128},
        {"id": "default", "program": program, "tests": ["grow()"]},
    ]
    small, default = verifier_5s_512mb.grade(rows)
    assert small.status == "memory" and default.passed


def test_file_size_limit(grade):
    program = (
        "def write(mb):\n"
        "    with open('big', 'wb') as f:\n"
        "        for _ in range(mb):\n"
        "            f.write(b'x' * 1024 * 1024)\n"
        "    return True\n"
    )
    v = grade(program, ["assert write(200)"])
    assert v.status == "failed" and "File too large" in v.detail, v.detail
    assert grade(program, ["assert write(8)"]).passed


def test_process_limit_stops_a_fork_bomb(grade, then_healthy, processes_with, verifier_5s_512mb):
    marker = f"bomb-{uuid.uuid4().hex}"
    program = (
        "import os, sys, time\n"
        "def bomb():\n"
        "    n = 0\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        f"            sys.argv.append({marker!r}); time.sleep(300); os._exit(0)\n"
        "        n += 1\n"
    )
    v = grade(program, ["bomb()"], timeout_s=3)
    assert not v.passed
    if verifier_5s_512mb.isolation.get("cgroups"):
        assert "BlockingIOError" in v.detail or "Resource temporarily unavailable" in v.detail, (
            v.detail
        )
    assert processes_with(marker) == []
    then_healthy()


def test_thread_limit(grade, verifier_5s_512mb):
    program = (
        "import threading, time\n"
        "def spawn(n):\n"
        "    for _ in range(n):\n"
        "        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "    return True\n"
    )
    v = grade(program, ["assert spawn(500)"], timeout_s=4)
    assert not v.passed
    assert "thread" in v.detail, v.detail


def test_output_flood_is_cut_off(grade, then_healthy):
    v = grade("def flood():\n    while True:\n        print('x' * 10000)\n", ["flood()"])
    assert v.status == "error" and "output exceeded" in v.detail, v.detail
    then_healthy()


def test_deep_recursion_that_crashes_the_interpreter_is_contained(grade, then_healthy):
    # Calls through a C slot use the C stack, so this overflows it and segfaults.
    program = (
        "import sys\n"
        "sys.setrecursionlimit(10 ** 8)\n"
        "def down(n):\n"
        "    return down.__call__(n + 1) + 1\n"
    )
    v = grade(program, ["down(0)"], timeout_s=10)
    assert v.status == "error" and "signal" in v.detail, v.detail
    then_healthy()


def test_runaway_python_recursion_fails_cleanly(grade):
    v = grade("def down(n):\n    return down(n + 1) + 1\n", ["down(0)"])
    assert v.status == "failed" and "RecursionError" in v.detail, v.detail
