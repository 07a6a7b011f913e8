"""Mutants of a reference: one small change each, distinct, deterministic, and wrong where
it matters (run here in-process on plain functions: the sandbox runs them for real)."""

from __future__ import annotations

import ast

from bank_samples import CLAMP

from selfplay.strengthen import degenerate, mutants

SUM_EVENS = """def sum_evens(xs):
    total = 0
    for x in xs:
        if x % 2 == 0 and x > 0:
            total += x
    return total
"""


def run(program: str, name: str, *args):
    space: dict = {}
    exec(program, space)  # noqa: S102 - the test's own small programs
    return space[name](*args)


def test_every_operator_makes_distinct_mutants_that_differ_from_the_reference():
    found = mutants(SUM_EVENS, "sum_evens")
    operators = {m.operator for m in found}
    assert {"compare", "arith", "constant+", "constant-", "boolean", "negate", "branch",
            "early_return"} <= operators  # fmt: skip
    texts = [m.program for m in found]
    assert len(set(texts)) == len(texts)
    assert ast.unparse(ast.parse(SUM_EVENS)) + "\n" not in texts
    assert all(ast.parse(t) for t in texts)  # every mutant is Python
    # Deterministic: the same program gives the same mutants, in the same order.
    assert [m.program for m in mutants(SUM_EVENS, "sum_evens")] == texts


def test_most_mutants_change_some_output_and_the_limit_spreads_over_operators():
    inputs = [[1, 2, 3, 4], [-2, 6, 7], [], [10, 0, 5]]
    found = mutants(SUM_EVENS, "sum_evens")
    wrong = [m for m in found
             if any(run(m.program, "sum_evens", list(i)) != run(SUM_EVENS, "sum_evens", list(i))
                    for i in inputs)]  # fmt: skip
    assert len(wrong) >= 0.7 * len(found), (len(wrong), len(found))
    # clamp has four operators' sites (early return, negate, branch, compare): four mutants
    # within a limit of four are one of each, not four comparisons.
    few = mutants(CLAMP, "clamp", limit=4)
    assert len(few) == 4 and len({m.operator for m in few}) == 4


def test_an_early_return_answers_with_the_first_argument():
    (early,) = [m for m in mutants(CLAMP, "clamp") if m.operator == "early_return"]
    assert run(early.program, "clamp", 50, 0, 10) == 50 != run(CLAMP, "clamp", 50, 0, 10)


def test_degenerate_answers_replace_the_entry_point_whatever_the_arguments():
    found = {m.operator: m for m in degenerate(CLAMP, "clamp")}
    assert run(found["degenerate:empty_list"].program, "clamp", 5, 0, 10) == []
    assert run(found["degenerate:none"].program, "clamp", 5, 0, 10) is None
    anything = run(found["degenerate:equals_everything"].program, "clamp", 5, 0, 10)
    assert anything == 5 and anything == "five"


def test_a_program_that_does_not_parse_has_no_mutants():
    assert mutants("def f(:\n", "f") == []


def test_variants_keep_types_and_shapes_and_change_one_value_at_a_time():
    from selfplay.strengthen.inputs import variants

    near = variants("5, 0, 10", limit=12)
    assert near[:3] == ["6, 0, 10", "5, 1, 10", "5, 0, 11"]  # one step of each first
    assert len(set(near)) == len(near) == 12 and "5, 0, 10" not in near
    assert all(sum(a != b for a, b in zip(v.split(", "), ["5", "0", "10"], strict=True)) == 1
               for v in near)  # fmt: skip
    rows = variants("[[1, 2], [3, 4]], 'ab'")
    for v in rows:
        grid, text = ast.literal_eval(f"({v},)")
        assert isinstance(text, str) and all(isinstance(r, list) for r in grid)
    assert variants("not a literal(") == []
