"""Decontamination against HumanEval: copies are flagged, kept, and left out of exports."""

from __future__ import annotations

from selfplay.admission.decontam import humaneval_decontaminator
from selfplay.admission.importers import read_humaneval
from selfplay.admission.schema import parse_task

PROBLEM = read_humaneval()[3]  # below_zero


def _task(prompt: str, program: str):
    return parse_task(
        {
            "kind": "codegen",
            "prompt": prompt,
            "program": program,
            "entry_point": "f",
            "tests": ["assert True"],
        }
    )


def test_a_renamed_copy_of_a_humaneval_solution_is_flagged_by_its_ast():
    program = (PROBLEM["prompt"] + PROBLEM["canonical_solution"]).replace("balance", "acc")
    program = program.replace("below_zero", "dips_negative").replace("operations", "ops")
    reason = humaneval_decontaminator().check(_task("Does the account dip?", program))
    assert reason == "HumanEval/3: same normalized program"


def test_a_copied_statement_is_flagged_by_word_ngrams():
    statement = PROBLEM["prompt"].split('"""')[1]
    reason = humaneval_decontaminator().check(_task(statement, "def f(x):\n    return x\n"))
    assert reason is not None and reason.startswith("HumanEval/3: shares the 13-gram")


def test_a_lightly_edited_solution_is_flagged_by_code_ngrams():
    solution = PROBLEM["prompt"] + PROBLEM["canonical_solution"] + "\nEXTRA = 1\n"
    reason = humaneval_decontaminator().check(_task("Something else entirely.", solution))
    assert reason is not None and "HumanEval/3" in reason


def test_ordinary_tasks_are_not_flagged():
    d = humaneval_decontaminator()
    assert (
        d.check(
            _task(
                "Sum the even numbers.", "def f(xs):\n    return sum(x for x in xs if x % 2 == 0)\n"
            )
        )
        is None
    )
    assert (
        d.check(
            _task(
                "Reverse the words of a sentence.",
                "def f(s):\n    return ' '.join(s.split()[::-1])\n",
            )
        )
        is None
    )


def test_the_gate_flags_but_keeps_contaminated_tasks(admission):
    p = PROBLEM
    row = {
        "kind": "codegen",
        "prompt": "Detect a negative balance.",
        "program": p["prompt"] + p["canonical_solution"],
        "entry_point": p["entry_point"],
        "tests": [p["test"] + f"\ncheck({p['entry_point']})\n"],
    }
    report = admission.admit([parse_task(row, source="copied")])
    assert report.admitted == 1 and report.contaminated == 1
    assert list(admission.bank.tasks()) == []
    assert next(admission.bank.tasks(include_contaminated=True)).contaminated.startswith(
        "HumanEval/3"
    )
