"""A bank of four verified tasks (one per kind), so a round need not import the seeds."""

from __future__ import annotations

from pathlib import Path

from selfplay.admission import Admission, AdmissionConfig
from selfplay.admission.schema import parse_task
from selfplay.verifier import Verifier
from task_bank.store import Bank


def small_bank(path: Path) -> None:
    rows = [
        {
            "kind": kind,
            "prompt": f"A {kind} task about sums.",
            "program": f"def f(xs):\n    return sum(xs) + {i}\n",
            "entry_point": "f",
            "tests": [f"assert f([1, 2]) == {3 + i}"],
            "examples": [{"input": "[1, 2]"}, {"input": "[5]"}, {"input": "[]"}],
        }
        for i, kind in enumerate(["deduction", "abduction", "induction", "codegen"])
    ]
    with Bank(path) as bank, Verifier(workers=1) as v:
        report = Admission(bank, v, AdmissionConfig()).admit([parse_task(r) for r in rows])
        assert report.admitted == 4, report
