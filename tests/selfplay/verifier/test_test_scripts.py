"""Tests written as scripts run as scripts: `unittest.main()` (behind the `__main__` guard or
not) runs the tests' TestCase classes and its success exit is a pass; a program's own
SystemExit is never one; tests that never call the program pass only with a signal."""

from __future__ import annotations

RIGHT, WRONG = "def f(x):\n    return 2 * x\n", "def f(x):\n    return 3 * x\n"
CASE = "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(2), 4)\n"
SCRIPTS = {
    "guarded": CASE + "if __name__ == '__main__':\n    unittest.main()\n",
    "plain": CASE + "unittest.main(argv=['x'])\n",
    "runner": CASE + "import sys\nr = unittest.TextTestRunner().run(unittest.defaultTestLoader"
    ".loadTestsFromTestCase(T))\nsys.exit(not r.wasSuccessful())\n",
}


def test_unittest_scripts_pass_right_programs_and_fail_wrong_ones(verifier):
    rows = [{"id": f"{name}:{which}", "program": program, "tests": [script]}
            for name, script in SCRIPTS.items()
            for which, program in (("right", RIGHT), ("wrong", WRONG))]  # fmt: skip
    verdicts = {v.id: v for v in verifier.grade(rows)}
    for name in SCRIPTS:
        assert verdicts[f"{name}:right"].passed, verdicts[f"{name}:right"].detail
        assert not verdicts[f"{name}:right"].signals
        assert not verdicts[f"{name}:wrong"].passed


def test_a_programs_own_success_exit_is_a_failure(verifier):
    rows = [
        {"id": "raise", "program": "def f(x):\n    raise SystemExit(0)\n",
         "tests": ["assert f(2) == 4"]},
        {"id": "exit", "program": "import sys\ndef f(x):\n    sys.exit(False)\n",
         "tests": ["f(2)", "assert f(2) == 4"]},
    ]  # fmt: skip
    assert [v.passed for v in verifier.grade(rows)] == [False, False]


def test_only_returned_values_decide_the_degenerate_signal(verifier):
    # Tests that never call the program assert nothing about it: no signal here (admission
    # turns such tasks away, `test_degenerate.py`); a call that raised is no value either way.
    rows = [
        {"id": "uncalled", "program": WRONG, "tests": ["def test_a():\n    assert f(2) == 4"]},
        {"id": "raises_only", "program": "def f(x):\n    raise ValueError(x)\n",
         "tests": ["import pytest\nwith pytest.raises(ValueError):\n    f(-1)"]},
        {"id": "raises_then_empty", "program": "def f(x):\n    if x < 0:\n        raise ValueError(x)\n"
         "    return []\n", "tests": ["import pytest\nwith pytest.raises(ValueError):\n"
                                    "    f(-1)\nassert len(f(2)) == 0"]},
        {"id": "raises_then_value", "program": "def f(x):\n    if x < 0:\n        raise ValueError(x)\n"
         "    return 2 * x\n", "tests": ["import pytest\nwith pytest.raises(ValueError):\n"
                                      "    f(-1)\nassert f(2) == 4"]},
    ]  # fmt: skip
    verdicts = verifier.grade(rows)
    assert [v.passed for v in verdicts] == [True, True, True, True]
    assert [("degenerate_pass" in v.signals) for v in verdicts] == [False, False, True, False]
