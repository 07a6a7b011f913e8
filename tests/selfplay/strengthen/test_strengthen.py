"""Strengthening a weakly tested task in the real sandbox: the new tests fail the wrong
solutions the old ones let through, and never the reference."""

from __future__ import annotations

from bank_samples import CLAMP

from selfplay.admission.schema import parse_task
from selfplay.strengthen import degenerate, mutants
from selfplay.strengthen.strengthen import strengthen


def weak_task():
    # One test, and a value inside the range: returning x passes it.
    return parse_task({"id": "clamp", "kind": "codegen", "prompt": "Clamp x.", "program": CLAMP,
                       "entry_point": "clamp", "tests": ["assert clamp(5, 0, 10) == 5"]},
                      source="mine")  # fmt: skip


def test_new_tests_kill_the_mutants_the_old_ones_let_through(verifier):
    task = weak_task()
    result = strengthen(task, verifier)
    assert result.tests and result.reason is None, result
    assert result.mutants > 0 and result.killed_after > result.killed_before
    assert result.score_after > result.score_before
    wrong = [*mutants(CLAMP, "clamp"), *degenerate(CLAMP, "clamp")]
    rows = [{"id": m.operator, "program": m.program, "tests": task.tests} for m in wrong]
    old = verifier.grade(rows)
    new = verifier.grade([{**r, "tests": task.tests + result.tests} for r in rows])
    # The early return (clamp returns x) passes the old test; a kept test fails it.
    early = [i for i, m in enumerate(wrong) if m.operator == "early_return"]
    assert early and old[early[0]].status == "passed" and new[early[0]].status == "failed"
    # No degenerate answer passes the strengthened tests.
    assert all(v.status != "passed" for m, v in zip(wrong, new, strict=True)
               if m.operator.startswith("degenerate"))  # fmt: skip
    # The reference passes every kept test.
    (ref,) = verifier.grade([{"id": "ref", "program": CLAMP, "tests": task.tests + result.tests}])
    assert ref.status == "passed", ref.detail


def test_a_stdin_task_gets_input_output_pairs_that_fail_what_its_own_let_through(verifier):
    program = "n = int(input())\nif n > 10:\n    print(n - 10)\nelse:\n    print(n)\n"
    task = parse_task({"id": "cut", "kind": "codegen", "prompt": "Cut n above 10.",
                       "program": program, "tests": [{"input": "9\n", "output": "9\n"}]},
                      source="mine")  # fmt: skip
    result = strengthen(task, verifier)
    assert result.tests and all(set(t) == {"input", "output"} for t in result.tests), result
    assert result.killed_after > result.killed_before
    wrong = "print(int(input()))\n"  # right on the task's own pair, wrong above 10
    (ref, old, new) = verifier.grade([
        {"id": "ref", "program": program, "tests": task.tests + result.tests},
        {"id": "old", "program": wrong, "tests": task.tests},
        {"id": "new", "program": wrong, "tests": task.tests + result.tests},
    ])  # fmt: skip
    assert ref.passed and old.passed and not new.passed, (ref.detail, new.detail)


def test_near_variants_stay_inside_what_the_given_arguments_always_are():
    from selfplay.strengthen.inputs import domain, variants

    # HumanEval/11's strings of 0s and 1s are always of one length; /111's sentences never
    # start with a space; clamp's bounds are never negative.
    for given, outside in ((["'111000', '101010'", "'1', '1'"], "'11000', '101010'"),
                           (["'a b c d g'", "'r t g'", "''"], "' b c d g'"),
                           (["5, 0, 10"], "5, 0, -10")):  # fmt: skip
        inside = domain(given)
        near = [v for g in given for v in variants(g)]
        assert outside in near and not inside(outside)
        assert all(inside(g) for g in given) and any(inside(v) for v in near)
