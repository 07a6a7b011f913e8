"""`strengthen_bank`: strengthen a bank's codegen tasks and record what was added.

The tests a task came with stay as they were; what `strengthen` adds goes to the task's own
`strengthened` field with its provenance (when, by what, the mutation score it bought), and
grading (rewards, exports, solver attempts) uses both from then on (`Task.all_tests`). A
task strengthened before is strengthened again from all its tests: a second run adds only
what the first could not, which for the same code is nothing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from selfplay.strengthen.strengthen import Strengthened, strengthen
from selfplay.task import Task


@dataclass(slots=True)
class SourceReport:
    """What strengthening did to one source's tasks."""

    tasks: int = 0
    strengthened: int = 0  # tasks that got at least one test
    tests_added: int = 0
    mutants: int = 0  # wrong mutants over the source's tasks
    killed_before: int = 0
    killed_after: int = 0
    attempts_wrong: int = 0  # passing solver attempts that answer some new input wrongly
    reasons: Counter = field(default_factory=Counter)  # why a task got nothing

    def add(self, result: Strengthened) -> None:
        self.tasks += 1
        self.strengthened += bool(result.tests)
        self.tests_added += len(result.tests)
        self.mutants += result.mutants
        self.killed_before += result.killed_before
        self.killed_after += result.killed_after
        self.attempts_wrong += result.attempts_wrong
        if not result.tests:
            self.reasons[result.reason or "nothing_to_kill"] += 1

    def to_dict(self) -> dict[str, Any]:
        def score(k):
            return round(k / self.mutants, 4) if self.mutants else None

        return {"tasks": self.tasks, "strengthened": self.strengthened,
                "tests_added": self.tests_added, "mutants": self.mutants,
                "killed_before": self.killed_before, "killed_after": self.killed_after,
                "score_before": score(self.killed_before), "score_after": score(self.killed_after),
                "attempts_wrong": self.attempts_wrong,
                "reasons": dict(self.reasons)}  # fmt: skip


def strengthen_bank(
    bank: Any,
    verifier: Any,
    tasks: Iterable[Task],
    *,
    per_task: int = 8,
    written: dict[str, list[str]] | None = None,
    model: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, SourceReport]:
    """Strengthen `tasks` (of `bank`), record the new tests, and report by source;
    `written`: per task id, argument lists `model` wrote (`edge_cases`)."""
    from selfplay.kinds.fences import last_code_block

    tasks = list(tasks)
    # Solver attempts the tests passed: where one answers a new input unlike the reference,
    # a test that catches it is kept like one that kills a mutant.
    passing = {
        task_id: [code for _, answer, ok in rows if ok and (code := last_code_block(answer))]
        for task_id, rows in bank.attempts_for(t.id for t in tasks).items()
    }
    reports: dict[str, SourceReport] = {}
    records: dict[str, dict[str, Any]] = {}
    for done, task in enumerate(tasks, 1):
        before = task.strengthened or {}
        # Every test it has now is one the new ones must add to.
        result = strengthen(replace(task, tests=task.all_tests), verifier, per_task=per_task,
                            written=(written or {}).get(task.id, []),
                            attempts=passing.get(task.id, []))  # fmt: skip
        if before and not result.tests:
            # Nothing new: the mutation score is the first run's, from the original tests.
            result.killed_before = before["provenance"]["killed_before"]
            result.mutants = before["provenance"]["mutants"]
            result.killed_after = before["provenance"]["killed_after"]
        elif result.tests:
            records[task.id] = record(result, before, model=model)
            result.killed_before = records[task.id]["provenance"]["killed_before"]
        reports.setdefault(task.source, SourceReport()).add(result)
        if progress is not None:
            progress(done, len(tasks))
        if len(records) >= 64:  # written as it goes: an interrupted run keeps what it did
            bank.set_strengthened(records)
            records = {}
    if records:
        bank.set_strengthened(records)
    return reports


def strengthen_one(task: Task, verifier: Any) -> dict[str, Any] | None:
    """The `strengthened` record of one task new to the bank (admission's `extend_tests`),
    or None where nothing discriminating could be added."""
    result = strengthen(task, verifier)
    return record(result, by="bank import --strengthen") if result.tests else None


def record(result: Strengthened, before: dict[str, Any] | None = None,
           by: str = "bank strengthen", model: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A task's `strengthened` field after `result`: the tests added before it, then its own,
    with the provenance (the mutation score before is the first run's, on the task's own
    tests)."""
    before = before or {}
    first = before.get("provenance", {}).get("killed_before", result.killed_before)
    provenance = {"by": f"selfplay {_version()} {by}", "at": time.time(),
                  "inputs": result.inputs, "mutants": result.mutants,
                  "killed_before": first, "killed_after": result.killed_after,
                  "edge_cases_by": model}  # fmt: skip
    return {"tests": [*before.get("tests", []), *result.tests], "provenance": provenance}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("selfplay")
    except PackageNotFoundError:
        return "(source)"
