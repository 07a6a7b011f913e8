"""Warnings a program raises during a call reach the tests, as `pytest.warns` expects: the
solution process records them and the test process warns them again (at most 32 a call, so
a flood of warnings costs the tests nothing)."""

from __future__ import annotations

PROGRAM = (
    "import warnings\n"
    "def old(x):\n    warnings.warn('use new', DeprecationWarning)\n    return x + 1\n"
    "def quiet(x):\n    return x\n"
    "def loud(x):\n    for i in range(100000):\n        warnings.warn(str(i))\n    return x\n"
    "def raises(x):\n    warnings.warn('about to fail', UserWarning)\n    raise ValueError(x)\n"
)


def test_pytest_warns_sees_the_programs_warnings_and_only_those(verifier):
    tests = {
        "warns": "import pytest\nwith pytest.warns(DeprecationWarning, match='use new'):\n"
        "    assert old(1) == 2",
        "quiet": "import pytest\nwith pytest.warns(DeprecationWarning):\n    quiet(1)",
        "record": "import warnings\nwith warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n    old(3)\n    loud(1)\n"
        "assert [x.category for x in w][:1] == [DeprecationWarning] and len(w) == 33",
        "raising": "import pytest\nwith pytest.warns(UserWarning), pytest.raises(ValueError):\n"
        "    raises(1)",
    }
    rows = [{"id": k, "program": PROGRAM, "tests": [t]} for k, t in tests.items()]
    got = {v.id: v.passed for v in verifier.grade(rows)}
    assert got == {"warns": True, "quiet": False, "record": True, "raising": True}
