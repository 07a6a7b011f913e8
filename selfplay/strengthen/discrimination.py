"""`discrimination`: how much a proposed codegen task's own tests (the proposer's) catch
that inputs synthesised from its program alone would not: CURE's signal for a test writer.

A mutant of the reference (or a degenerate answer) is wrong where the task's tests fail it or
it answers some synthesised input differently from the reference. Of the wrong ones, those
only the tests catch measure what the proposer's test writing added; the score is their
share. A proposal whose tests catch nothing the synthesised inputs would not scores 0, as
does one whose tests catch nothing at all. Recorded per proposal beside its learnability
reward (`Bank.set_proposal_discrimination`), for the proposer's training to use.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from selfplay.proposer.synthesis import synthesize
from selfplay.strengthen.mutants import degenerate, mutants
from selfplay.strengthen.strengthen import MUTANT_TIMEOUT_MIN_S, _outputs, _same


@dataclass(slots=True)
class Discrimination:
    mutants: int  # wrong ones
    by_tests: int  # the task's tests fail them
    only_by_tests: int  # ... and no synthesised input tells them apart

    @property
    def score(self) -> float:
        return self.only_by_tests / self.mutants if self.mutants else 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"score": round(self.score, 4)}


def discrimination(tasks: list[Any], verifier: Any, *, synthesized: int = 12,
                   mutant_limit: int = 24) -> dict[str, Discrimination]:  # fmt: skip
    """Per codegen task with an entry point and Python tests, in one batch of rows."""
    plans, rows = [], []
    for task in tasks:
        entry = task.entry_point
        if task.kind != "codegen" or not entry or any(not isinstance(t, str) for t in task.tests):
            continue
        calls = [f"{entry}({a})" for a in synthesize(task.program, entry, limit=synthesized)]
        wrong = mutants(task.program, entry, mutant_limit) + degenerate(task.program, entry)
        plans.append((task.id, len(rows), len(wrong)))
        rows.append({"id": "ref", "program": task.program, "tests": [], "calls": calls})
        rows += [{"id": m.operator, "program": m.program, "tests": task.tests, "calls": calls,
                  "timeout_s": MUTANT_TIMEOUT_MIN_S} for m in wrong]  # fmt: skip
    verdicts = verifier.grade(rows) if rows else []
    out = {}
    for task_id, start, n in plans:
        calls = rows[start]["calls"]
        expected = _outputs(verdicts[start], calls)
        wrong = by_tests = only = 0
        for v in verdicts[start + 1 : start + 1 + n]:
            if v.status == "timeout" and v.tests_passed == v.tests_total:
                continue  # some synthesised call never returned: undecided
            failed = v.status != "passed"
            differs = any(e is not None and not _same(o, e)
                          for o, e in zip(_outputs(v, calls), expected, strict=True))  # fmt: skip
            wrong += failed or differs
            by_tests += failed
            only += failed and not differs
        out[task_id] = Discrimination(wrong, by_tests, only)
    return out
