"""The admission chain with the real sandboxed verifier and a real bank: each program runs
exactly twice, every candidate gets one outcome, and the counts add up."""

from __future__ import annotations

from collections import Counter

import pytest
from bank_samples import codegen_row

from selfplay.admission import Admission, AdmissionConfig, Candidate, degenerate
from selfplay.admission.schema import parse_task


class Counting:
    """The verifier, with every row it is asked to grade recorded."""

    def __init__(self, verifier):
        self.verifier, self.rows = verifier, []

    def grade(self, rows):
        self.rows += rows
        return self.verifier.grade(rows)

    def runs(self) -> Counter:
        return Counter(r["program"] for r in self.rows)


def _proposal(n: int, program: str, inputs: list[str], kind: str = "deduction") -> Candidate:
    return Candidate.proposal(
        f"p-{n}", kind, program, inputs, entry_point="f", source="selfplay", metadata={"n": n}
    )


IMPORTS = [
    codegen_row("def sq(x):\n    return x * x\n", "sq", ["assert sq(3) == 9"], id="imp-square"),
    codegen_row(
        "def rev(s):\n    return s[::-1]\n", "rev", ["assert rev('ab') == 'ba'"], id="imp-rev"
    ),
]
PROPOSALS = [
    ("def f(x):\n    return x * 7 - 2\n", ["1", "2", "3"]),
    ("def f(s):\n    return ''.join(sorted(str(s)))\n", ["'cab'", "'zyx'", "12"]),
]


def test_each_program_runs_exactly_twice(bank, verifier):
    counting = Counting(verifier)
    admission = Admission(bank, counting, AdmissionConfig(decontaminate=False))
    batch = [Candidate.of_task(parse_task(r, source="t")) for r in IMPORTS]
    batch += [_proposal(n, p, x) for n, (p, x) in enumerate(PROPOSALS)]
    report = admission.admit(batch)
    assert report.admitted == 4, report.outcomes
    programs = [r["program"] for r in IMPORTS] + [p for p, _ in PROPOSALS]
    # Besides, each codegen task's tests meet every degenerate probe once (test_degenerate).
    probes = {
        degenerate.program(n, r["entry_point"]): 1 for r in IMPORTS for n in degenerate.PROBES
    }
    assert counting.runs() == {p: 2 for p in programs} | probes
    # The second run of a proposal carries the tests built from the first run's outputs.
    task = bank.get(report.task_ids["p-0"])
    assert task.tests == ["assert f(1) == 5", "assert f(2) == 12", "assert f(3) == 19"]
    second = [r for r in counting.rows if r["program"] == PROPOSALS[0][0]][1]
    assert second["tests"] == task.tests


def test_a_program_turned_away_by_its_first_run_runs_once(bank, verifier):
    counting = Counting(verifier)
    admission = Admission(bank, counting, AdmissionConfig(decontaminate=False))
    raising = "def f(x):\n    return x // 0\n"
    report = admission.admit([_proposal(0, raising, ["1", "2"])])
    assert dict(report.rejected) == {"input_raises": 1}
    assert counting.runs() == {raising: 1}


def test_a_static_rejection_runs_nothing(bank, verifier):
    counting = Counting(verifier)
    admission = Admission(bank, counting, AdmissionConfig(decontaminate=False))
    report = admission.admit([_proposal(0, "def f(x):\n    return hash(x)\n", ["1", "2"])])
    assert dict(report.rejected) == {"hidden_state": 1} and counting.rows == []


def test_every_candidate_has_one_outcome_and_the_counts_add_up(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    first = admission.admit([parse_task(IMPORTS[0], source="t")])
    assert first.admitted == 1
    wrong = codegen_row("def g(x):\n    return x + 1\n", "g", ["assert g(1) == 3"], id="imp-wrong")
    batch = [
        Candidate.of_task(parse_task(IMPORTS[0], source="t")),  # already present
        Candidate.of_task(parse_task(wrong, source="t")),  # fails its own test
        _proposal(0, "def f(x):\n    return (x\n", ["1"]),  # does not parse
        _proposal(1, PROPOSALS[0][0], PROPOSALS[0][1]),  # admitted
        _proposal(2, PROPOSALS[0][0], PROPOSALS[0][1]),  # the same again
        _proposal(3, "def f(x):\n    return 4\n", ["1", "2", "3"], kind="induction"),
    ]
    report = admission.admit(batch)
    assert report.seen == len(batch)
    assert report.seen == report.admitted + report.already_present + sum(report.rejected.values())
    assert report.outcomes == {
        "imp-square": "already_present",
        "imp-wrong": "reference_failed",
        "p-0": "unparseable",
        "p-1": "admitted",
        "p-2": "duplicate",
        "p-3": "constant_output",
    }
    # The rejections were written with the admitted task, each once.
    assert bank.rejection_counts() == dict(report.rejected)
    assert bank.count() == 2


def test_a_benchmark_look_alike_is_admitted_flagged_and_counted_once(bank, verifier):
    from selfplay.admission.decontam import Decontaminator

    bench = Decontaminator()
    bench.add("Bench/1", "", PROPOSALS[0][0])
    admission = Admission(bank, verifier, AdmissionConfig(), decontaminator=bench)
    report = admission.admit([_proposal(0, *PROPOSALS[0])])
    assert report.admitted == 1 and report.contaminated == 1 and not report.rejected
    assert report.outcomes == {"p-0": "contaminated"} and report.flagged_ids == report.admitted_ids


# ---- what a task must show to be admitted: one test per reason, through the real chain ------

GUARDED = "def f(x):\n    if not x:\n        return 0\n    return {}(x)\n"


def _only(admission, candidate, reason):
    report = admission.admit([candidate])
    assert dict(report.rejected) == {reason: 1}, report.outcomes
    assert report.admitted == 0 and admission.bank.rejection_counts() == {reason: 1}
    return report


def test_an_undefined_name_behind_a_guard_is_rejected_before_anything_runs(bank, verifier):
    # Both inputs stop at the guard and return 0, so every call passes; any other input
    # would raise NameError.
    counting = Counting(verifier)
    admission = Admission(bank, counting, AdmissionConfig(decontaminate=False))
    _only(admission, _proposal(0, GUARDED.format("helper"), ["0", "''"]), "undefined_name")
    assert counting.rows == []


@pytest.mark.parametrize("kind", ["deduction", "abduction", "induction"])
def test_a_program_that_returns_one_value_for_all_its_inputs_is_rejected(bank, verifier, kind):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    candidate = _proposal(0, GUARDED.format("len"), ["0", "''", "[]"], kind=kind)
    _only(admission, candidate, "constant_output")


@pytest.mark.parametrize(
    "program",
    ['def f(plain_input):\n    """Return the input."""\n    return plain_input\n',
     'def f(x):\n    """Reverse twice."""\n    return x[::-1][::-1] if isinstance(x, (str, list)) else x\n'],
    ids=["identity", "identity in disguise"],
)  # fmt: skip
def test_a_program_that_returns_each_input_unchanged_is_rejected(bank, verifier, program):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    _only(admission, _proposal(0, program, ["'abc'", "[1, 2]", "0"]), "returns_input")


def test_a_program_that_changes_only_some_inputs_is_admitted(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    program = 'def f(x):\n    """Absolute value."""\n    return abs(x)\n'
    assert admission.admit([_proposal(0, program, ["3", "-2", "0"])]).admitted == 1


def test_an_input_that_raises_rejects_the_task_when_under_two_others_return(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    candidate = _proposal(0, GUARDED.format("len"), ["'ab'", "5"])
    _only(admission, candidate, "input_raises")
    assert "<call 1>" in candidate.reason.detail and "TypeError" in candidate.reason.detail


def test_an_input_given_twice_is_rejected_before_anything_runs(bank, verifier):
    # `+1` is the value 1 written differently; `1.0` would be another input.
    counting = Counting(verifier)
    admission = Admission(bank, counting, AdmissionConfig(decontaminate=False))
    candidate = _proposal(0, "def f(x):\n    return x * 3\n", ["1", "2", "+1"])
    _only(admission, candidate, "repeated_inputs")
    assert counting.rows == []


@pytest.mark.parametrize("kind", ["deduction", "abduction"])
def test_a_single_input_is_too_few_to_tell_a_constant(bank, verifier, kind):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    _only(
        admission, _proposal(0, "def f(x):\n    return x * 3\n", ["4"], kind=kind), "too_few_inputs"
    )


def test_a_task_whose_inputs_reach_both_branches_is_admitted(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    report = admission.admit([_proposal(0, GUARDED.format("len"), ["0", "''", "'abc'", "[7, 8]"])])
    assert report.admitted == 1 and not report.rejected, report.outcomes
    task = bank.get(report.task_ids["p-0"])
    assert [e["output"] for e in task.examples] == ["0", "0", "3", "2"]
