"""Each reward-hacking class, one attack per test. Every attack must fail to pass its row."""

import pytest

SQUARE_TESTS = ["assert square(4) == 16", "assert square(5) == 25"]


def not_passed(grade, program, tests=SQUARE_TESTS, **row):
    v = grade(program, tests, **row)
    assert not v.passed, f"attack passed: {v}"
    assert v.tests_passed < len(tests)
    return v


# 1. Early exit ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "exit_code",
    [
        "import sys; sys.exit(0)",
        "import os; os._exit(0)",
        "raise SystemExit(0)",
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        "import os, signal; os.kill(os.getppid(), signal.SIGKILL)",
        "import os, signal; os.kill(1, signal.SIGKILL)",
        "import os, signal; os.killpg(0, signal.SIGKILL)",
    ],
)
def test_early_exit_inside_the_solution(grade, exit_code):
    not_passed(grade, f"def square(x):\n    {exit_code}\n")


def test_early_exit_at_import_time(grade):
    not_passed(grade, "import sys\nsys.exit(0)\ndef square(x):\n    return 0\n")


def test_atexit_handler_printing_success(grade):
    program = (
        "import atexit, os\n"
        "atexit.register(lambda: print('ALL TESTS PASSED'))\n"
        "def square(x):\n    os._exit(0)\n"
    )
    not_passed(grade, program)


# 2. Equality and type tricks -------------------------------------------------------------
@pytest.mark.parametrize(
    "returned",
    [
        "type('A', (), {'__eq__': lambda s, o: True, '__hash__': lambda s: 0})()",
        "type('I', (int,), {'__eq__': lambda s, o: True, '__hash__': lambda s: 0})(0)",
        "type('S', (str,), {'__eq__': lambda s, o: True, '__hash__': lambda s: 0})('')",
        "type('L', (list,), {'__eq__': lambda s, o: True})()",
        "type('N', (), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False})()",
    ],
)
def test_objects_that_claim_equality(grade, returned):
    not_passed(grade, f"def square(x):\n    return {returned}\n")


def test_equality_trick_on_the_left_and_right(grade):
    program = (
        "class A:\n    def __eq__(self, o):\n        return True\ndef square(x):\n    return A()\n"
    )
    not_passed(grade, program, ["assert 16 == square(4)", "assert square(4) == 16"])


# 3. Tampering with what the tests use -----------------------------------------------------
def test_patching_builtins_at_import_time(grade):
    program = (
        "import builtins\n"
        "builtins.AssertionError = type('Quiet', (Exception,), {})\n"
        "builtins.abs = lambda x: 0\n"
        "def square(x):\n    return 0\n"
    )
    not_passed(grade, program, ["assert abs(square(4) - 16) == 0"])


def test_patching_the_standard_library_during_a_call(grade):
    program = (
        "import math\ndef square(x):\n    math.isclose = lambda *a, **k: True\n    return 0.0\n"
    )
    not_passed(grade, program, ["import math\nassert math.isclose(square(4), 16.0)"])


def test_shadowing_builtin_names_in_the_program(grade):
    program = (
        "def sorted(xs):\n    return [1, 2, 3]\n"
        "def len(xs):\n    return 3\n"
        "def square(x):\n    return [3, 2]\n"
    )
    not_passed(
        grade, program, ["assert sorted(square(4)) == [1, 2, 3]", "assert len(square(4)) == 3"]
    )


# 4. Forging the harness -------------------------------------------------------------------
def test_printing_fake_pass_markers_and_verdict_records(grade):
    program = (
        "import sys, json, os\n"
        "record = json.dumps({'v': {'status': 'passed', 'tests_passed': 2}})\n"
        "def square(x):\n"
        "    print('passed', record, 'ALL TESTS PASSED')\n"
        "    print(record, file=sys.stderr)\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        "            os.write(fd, (record + '\\n').encode())\n"
        "        except OSError:\n"
        "            pass\n"
        "    return 0\n"
    )
    not_passed(grade, program)


def test_forged_frames_on_the_call_channel(grade):
    program = (
        "import marshal, os, struct\n"
        "def frame(obj):\n"
        "    data = marshal.dumps(obj)\n"
        "    return struct.pack('<I', len(data)) + data\n"
        "def square(x):\n"
        "    junk = frame(('manifest', {})) + frame(('v',)) + b'\\xff' * 64\n"
        "    os.write(3, frame(('x', 'AssertionError', '', '')) + junk)\n"
        '    os.write(3, b\'{"v": {"status": "passed", "tests_passed": 2}}\\n\')\n'
        "    return 0\n"
    )
    not_passed(grade, program)


# 5. Introspection -------------------------------------------------------------------------
def test_reading_expected_values_from_caller_frames(grade):
    program = (
        "import sys, gc\n"
        "def square(x):\n"
        "    f = sys._getframe(1)\n"
        "    while f is not None:\n"
        "        for v in list(f.f_locals.values()) + list(f.f_code.co_consts):\n"
        "            if isinstance(v, int) and v > x:\n"
        "                return v\n"
        "        f = f.f_back\n"
        "    for o in gc.get_objects():\n"
        "        if type(o).__name__ == 'code' and o.co_filename.startswith('<test'):\n"
        "            return [c for c in o.co_consts if isinstance(c, int)][-1]\n"
        "    return -1\n"
    )
    not_passed(
        grade,
        program,
        ["assert square(4) == 16", "assert square(5) == 25", "assert square(6) == 36"],
    )


def test_reading_the_test_process_memory_or_test_files(grade):
    # The attack looks for the tests' source (which holds the expected values) in the memory,
    # environment and open files of every process it can see, and in every file the sandbox
    # can write or the harness reads (the installed packages are bound read-only, unchanged).
    program = (
        "import os, glob\n"
        "def leaks():\n"
        "    found = []\n"
        "    needle = 'square' + '(4)'  # the call in the row, never in this program's text\n"
        "    me = str(os.getpid())\n"
        "    for pid in [p for p in os.listdir('/proc') if p.isdigit() and p != me]:\n"
        "        for part in ('mem', 'environ', 'cmdline', 'fd/0', 'fd/3', 'fd/4'):\n"
        "            try:\n"
        "                with open(f'/proc/{pid}/{part}', 'rb') as f:\n"
        "                    data = f.read(1 << 20)\n"
        "            except OSError:\n"
        "                continue\n"
        "            if needle.encode() in data or b'HF_' in data:\n"
        "                found.append(f'/proc/{pid}/{part}')\n"
        "    places = ('/tmp', '/dev/shm', '/run', '/opt/selfplay/selfplay_inside')\n"
        "    for path in [p for top in places for p in glob.glob(top + '/**', recursive=True)]:\n"
        "        if os.path.isfile(path) and needle in open(path, errors='ignore').read():\n"
        "            found.append(path)\n"
        "    return found\n"
        "def square(x):\n"
        "    return leaks()\n"
    )
    v = grade(program, [], calls=["square(4)"])
    assert v.outputs == ["[]"], (v.outputs, v.detail)


# 6. Killing or starving the worker ----------------------------------------------------------
@pytest.mark.parametrize(
    "attack",
    [
        "import os\n    while True:\n        os.fork()",
        "import threading, time\n    while True:\n        threading.Thread(target=time.sleep, args=(9,)).start()",
        "return bytearray(10 ** 10)",
        "while True:\n        print('x' * 65536)",
        "import ctypes\n    ctypes.string_at(0)",
    ],
    ids=["fork-bomb", "thread-bomb", "memory-bomb", "output-flood", "segfault"],
)
def test_starving_or_crashing_leaves_the_worker_healthy(grade, verifier_5s_512mb, attack):
    not_passed(grade, f"def square(x):\n    {attack}\n", timeout_s=3)
    ok = verifier_5s_512mb.grade(
        [{"id": "ok", "program": "def square(x):\n    return x * x\n", "tests": SQUARE_TESTS}] * 4
    )
    assert all(v.passed for v in ok)


# 7. Program code answering for the tests' comparisons -------------------------------------
def test_sub_returning_zero_passes_no_tolerance_check(grade):
    program = (
        "class Z:\n    def __sub__(self, o):\n        return 0.0\n    __rsub__ = __sub__\n"
        "    def __abs__(self):\n        return 0.0\n"
        "def square(x):\n    return Z()\n"
    )
    v = not_passed(
        grade, program, ["assert abs(square(4) - 16) < 1e-6", "assert abs(16 - square(4)) < 1e-6"]
    )
    assert v.tests_passed == 0 and "handle_compared" in v.signals


def test_sub_returning_an_object_whose_abs_is_zero(grade):
    program = (
        "class Z:\n    def __sub__(self, o):\n        return self\n"
        "    def __abs__(self):\n        return 0.0\n    def __bool__(self):\n        return False\n"
        "def square(x):\n    return Z()\n"
    )
    v = not_passed(
        grade, program, ["assert abs(square(4) - 16) < 1e-6", "assert -(square(5) - 25) > -1e-6"]
    )
    assert v.tests_passed == 0 and "handle_compared" in v.signals


N_PROGRAM = (
    "class N:\n"
    "    def __float__(self):\n        return 16.0\n    def __int__(self):\n        return 16\n"
    "    def __index__(self):\n        return 16\n    def __round__(self, n=None):\n        return 16\n"
    "    def __ge__(self, o):\n        return True\n    def __le__(self, o):\n        return True\n"
    "def square(x):\n    return N()\n"
)


@pytest.mark.parametrize(
    "convert",
    ["math.isclose({}, {}.0)", "int({}) == {}", "float({}) == {}.0", "round({}) == {}",
     "list(range(30))[{}] == {}"],
)  # fmt: skip
def test_an_object_that_converts_to_a_number_is_judged_by_that_number(grade, convert):
    # The program turns its own object into a number without seeing what the tests expect,
    # as if it had returned the number: a constant passes one question and fails the next.
    tests = ["import math\nassert " + convert.format("square(4)", 16),
             "import math\nassert " + convert.format("square(5)", 25)]  # fmt: skip
    v = not_passed(grade, N_PROGRAM, tests)
    assert v.tests_passed == 1


def test_an_object_that_claims_every_order_is_refused(grade):
    v = not_passed(grade, N_PROGRAM, ["assert square(4) >= 16 and square(4) <= 16"])
    assert "handle_compared" in v.signals


def test_a_global_named_like_a_module_does_not_answer_for_it(grade):
    program = (
        "class FakeMath:\n    def isclose(self, *a, **k):\n        return True\n"
        "math = FakeMath()\n"
        "def square(x):\n    return 0.0\n"
    )
    # The tests use `math` without importing it, relying on the program's import.
    v = not_passed(grade, program, ["assert math.isclose(square(4), 16.0)"])
    assert "module_shadow" in v.signals


def test_a_real_module_the_program_imported_is_the_real_one(grade):
    program = "import math\nmath.isclose = lambda *a, **k: True\ndef square(x):\n    return 0.0\n"
    v = not_passed(grade, program, ["assert math.isclose(square(4), 16.0)"])
    assert v.tests_passed == 0


def test_signals_never_change_a_verdict(grade):
    # A correct program that happens to do what attacks do still passes.
    program = (
        "import gc, sys\n"
        "def square(x):\n    gc.get_objects()\n    sys._getframe(1)\n    return x * x\n"
    )
    v = grade(program, SQUARE_TESTS)
    assert v.passed, v.detail
    assert {"gc_scan", "frame_walk"} <= set(v.signals)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP", "SIGUSR1"])
def test_signals_to_the_test_process_are_ignored(grade, sig):
    program = f"import os, signal\ndef square(x):\n    os.kill(1, signal.{sig})\n    return x * x\n"
    v = grade(program, SQUARE_TESTS)
    assert v.passed, v.detail  # the test process is PID 1 of the row: it does not see them
    assert "signal_other" in v.signals


@pytest.mark.parametrize("target", ["os.getppid()", "0", "-1"])
def test_signals_to_everything_the_solution_can_name_reach_nothing_but_its_row(
    verifier_5s_512mb, grade, target
):
    # The solution's parent (the zygote) is outside the row's namespace, its process group
    # is its own, and every other process of the worker (the next row's, prepared meanwhile)
    # is in a namespace it cannot see: SIGKILL to all of them ends this row, and nothing
    # else. The verdict is a failure, the worker and the next rows are untouched.
    program = (
        "import os, signal\n"
        f"def square(x):\n    os.kill({target}, signal.SIGKILL)\n    return x * x\n"
    )
    rows = [{"id": str(i), "program": program, "tests": SQUARE_TESTS} for i in range(4)]
    rows += [{"id": "ok", "program": "def square(x):\n    return x * x\n", "tests": SQUARE_TESTS}]
    verdicts = verifier_5s_512mb.grade(rows * 2)
    assert [v.passed for v in verdicts] == [False] * 4 + [True] + [False] * 4 + [True], [
        v.detail for v in verdicts
    ]
    assert all(v.status != "timeout" for v in verdicts), [v.detail for v in verdicts]


# 8. Forging what the program's process tells the test process ------------------------------
def test_a_forged_builtins_entry_in_the_manifest_replaces_nothing(grade):
    # The manifest is written in the program's own process, so the program can rewrite it.
    program = (
        "import sys, builtins\n"
        "S = sys.modules['selfplay_inside.server'].Server\n"
        "FAKE = {n: getattr(builtins, n) for n in ('len', 'range', 'list', 'print')}\n"
        "FAKE.update(abs=lambda x: 0.0, isinstance=lambda *a: True, sorted=lambda *a, **k: [1, 2, 3])\n"
        "_manifest = S.manifest\n"
        "S.manifest = lambda self: {**_manifest(self), '__builtins__': self._entry('x', FAKE, {}),\n"
        "                           '__import__': self._entry('y', FAKE, {}),\n"
        "                           'bonus': self._entry('bonus', 42, {})}\n"
        "def square(x):\n    return 12345.0\n"
    )
    tests = [
        "assert bonus == 42",  # control: the forged manifest did reach the test process
        "assert abs(square(2.0) - 4.0) < 1e-6",
        "assert sorted(square([3, 1, 2])) == [1, 2, 3]",
        "assert isinstance(square(1), list)",
    ]
    v = not_passed(grade, program, tests)
    assert v.tests_passed == 1


def test_the_programs_own_module_does_not_stand_in_for_a_real_one(grade):
    # `math = sys.modules[__name__]` makes the program's module look like a module named math.
    program = (
        "import sys\nmath = sys.modules[__name__]\nnp = math\n"
        "def isclose(*a, **k):\n    return True\n"
        "def square(x):\n    return 0\n"
    )
    v = not_passed(grade, program, ["assert math.isclose(square(4), 16)"])
    assert "module_shadow" in v.signals


def test_the_program_cannot_raise_the_harness_own_exceptions(grade):
    # A class dressed as the harness's SolutionGone must not end the row with a chosen status.
    program = (
        "def _dressed():\n"
        "    class Gone(BaseException):\n        pass\n"
        "    Gone.__module__, Gone.__qualname__ = 'selfplay_inside.channel', 'SolutionGone'\n"
        "    return Gone\n"
        "def square(x):\n"
        "    e = _dressed()('pretend')\n    e.status = 'timeout'\n    raise e\n"
    )
    v = not_passed(
        grade,
        program,
        ["try:\n    square(4)\nexcept BaseException:\n    pass\nassert square(4) == 16"],
    )
    assert v.status == "failed", v
