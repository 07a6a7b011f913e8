"""The proposer's test-writing reward: how much of the reference's wrong mutants only a
task's own tests catch, measured in the real sandbox."""

from __future__ import annotations

from bank_samples import CLAMP

from selfplay.admission.schema import parse_task
from selfplay.strengthen.discrimination import discrimination


def task(tests: list[str], id_: str):
    return parse_task({"id": id_, "kind": "codegen", "prompt": "Clamp x.", "program": CLAMP,
                       "entry_point": "clamp", "tests": tests}, source="mine")  # fmt: skip


def test_tests_that_check_the_edges_catch_more_than_tests_that_check_nothing(verifier):
    weak = task(["clamp(5, 0, 10)"], "weak")  # calls, asserts nothing
    strong = task(["assert clamp(5, 0, 10) == 5", "assert clamp(-3, 0, 10) == 0",
                   "assert clamp(20, 0, 10) == 10"], "strong")  # fmt: skip
    found = discrimination([weak, strong], verifier)
    w, s = found["weak"], found["strong"]
    assert w.mutants > 0 and s.mutants > 0
    assert w.by_tests == 0 and w.score == 0.0  # nothing a test checks can fail
    assert s.by_tests > 0 and 0.0 <= s.score <= 1.0
    assert s.only_by_tests <= s.by_tests <= s.mutants


def test_other_kinds_and_stdin_tasks_are_not_measured(verifier):
    echo = parse_task({"id": "echo", "kind": "codegen", "prompt": "Echo.",
                       "program": "print(input())\n",
                       "tests": [{"input": "a\n", "output": "a\n"}]}, source="mine")  # fmt: skip
    assert discrimination([echo], verifier) == {}
