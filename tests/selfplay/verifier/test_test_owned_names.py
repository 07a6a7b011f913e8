"""Names the tests bind are the tests': a program that rebinds its own global of such a name
during a call changes `solution.<name>`, never what the tests compare with. Each attack has a
legitimate twin that must still pass."""

import pytest

# A program that, during its first call, rebinds `name` to a handle of an object equal to
# anything (handle-vs-handle comparison asks the program) and returns another one.
_REBINDER = (
    "class Any:\n"
    "    def __eq__(self, other): return True\n"
    "    def __le__(self, other): return True\n"
    "    def __lt__(self, other): return True\n"
    "    def __mul__(self, other): return Any()\n"
    "    def __add__(self, other): return Any()\n"
    "    def __call__(self, *a, **k): return Any()\n"
    "    def __getattr__(self, name): return Any()\n"
    "    def __bool__(self): return True\n"
    "def {fn}(*args, **kwargs):\n"
    "    for name in {names!r}:\n"
    "        globals()[name] = Any()\n"
    "    return Any()\n"
)

ATTACKS = {
    "expected value": (
        "solve",
        ["expected", "want"],
        ["expected = 16\nassert solve(4) == expected"],
    ),
    "property input": (
        "floor_sqrt",
        ["n"],
        ["n = 3**301\nr = floor_sqrt(n)\nassert r*r <= n < (r+1)**2"],
    ),
    "seed operands": ("add", ["a", "b"], ["a, b = 2, 3\nassert add(a, b) == a + b"]),
    "reference helper": (
        "square",
        ["ref"],
        ["def ref(x):\n    return x * x\nfor x in range(5):\n    assert square(x) == ref(x)"],
    ),
    "imported approx": (
        "mean",
        ["isclose"],
        ["from math import isclose\nassert isclose(mean([1, 2]), 1.5)"],
    ),
    "expected table": (
        "solve",
        ["EXPECTED"],
        ["EXPECTED = {1: 1, 2: 4}", "for k, v in EXPECTED.items():\n    assert solve(k) == v"],
    ),
    "set by globals()": (
        "solve",
        ["target"],
        ["globals()['target'] = 16\nassert solve(4) == target"],
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_program_cannot_rebind_a_name_the_tests_bound(grade, attack):
    fn, names, tests = ATTACKS[attack]
    v = grade(_REBINDER.format(fn=fn, names=names), tests)
    assert not v.passed, f"attack passed: {v}"
    assert "name_rebind" in v.signals


def test_rebinding_pytest_in_kodcode_shaped_tests_fails(grade):
    pytest_module = pytest.importorskip("pytest")
    assert pytest_module
    v = grade(
        _REBINDER.format(fn="mean", names=["pytest"]),
        ["import pytest\nassert mean([1, 2]) == pytest.approx(1.5)"],
    )
    assert not v.passed and "name_rebind" in v.signals


# -- the legitimate twins --------------------------------------------------------------------
def test_tests_may_rebind_their_own_names_between_calls(grade):
    program = "def square(x):\n    return x * x\n"
    tests = [
        "expected = 16\nassert square(4) == expected\nexpected = 25\nassert square(5) == expected"
    ]
    v = grade(program, tests)
    assert v.passed, v.detail
    assert v.signals == []


def test_a_global_the_program_changes_is_seen_by_the_tests(grade):
    program = (
        "counter = 0\n"
        "log = []\n"
        "def tick():\n"
        "    global counter, last\n"
        "    counter += 1\n"
        "    last = counter\n"
        "    log.append(counter)\n"
    )
    tests = ["tick(); tick()\nassert counter == 2 and last == 2 and log == [1, 2]"]
    v = grade(program, tests)
    assert v.passed, v.detail
    assert "name_rebind" not in v.signals


def test_the_program_still_sees_its_own_rebinding_through_solution(grade):
    program = "mode = 'a'\ndef switch():\n    global mode\n    mode = 'b'\n"
    tests = [
        "import solution\nmode = 'mine'\nswitch()\nassert mode == 'mine'\nassert solution.mode == 'b'"
    ]
    v = grade(program, tests)
    assert v.passed, v.detail


@pytest.mark.parametrize(
    "imported, test",
    [
        ("from datetime import datetime", "assert stamp().year == 2020 and datetime(2020, 1, 1)"),
        ("from random import random", "assert 0 <= random() < 1 and stamp()"),
    ],
)
def test_a_standard_library_name_imported_under_a_module_name_reaches_the_tests(
    grade, imported, test
):
    program = f"{imported}\nimport datetime as _dt\ndef stamp():\n    return _dt.date(2020, 1, 1)\n"
    v = grade(program, [test])
    assert v.passed, v.detail
    assert "module_shadow" not in v.signals
