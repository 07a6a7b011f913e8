"""What admission works on and what it reports.

A `Candidate` is one task on its way into the bank. It comes from one of two sources:
- an **import** arrives whole, as a `Task` with its own tests;
- a **proposal** arrives as a program and the literal inputs the proposer model wrote,
  plus the fields the proposer knows (prompt, provenance) in `draft`. It becomes a task
  only once the first run has computed its outputs, since its tests are built from them.

Every candidate ends with exactly one outcome, so the counts add up:
`seen == admitted + already_present + sum(rejected)`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from selfplay.task import Task


@dataclass(slots=True)
class Reason:
    """Why a candidate is turned away: `name` is the counter the summaries show."""

    name: str
    detail: str = ""


@dataclass(slots=True)
class Candidate:
    item: str  # the name its outcome (and a rejection before it has a task) is recorded under
    source: str
    kind: str
    task: Task | None = None
    program: str | None = None
    inputs: list[str] = field(default_factory=list)
    draft: dict[str, Any] = field(default_factory=dict)
    reason: Reason | None = None  # set by the first step that turns it away
    screened: bool = False  # a proposal's static steps have run (the proposer may run them early)
    # Filled in by the runs: the calls made, their outputs in the first run, run 2's verdict.
    calls: list[str] = field(default_factory=list)
    outputs: list[str | None] = field(default_factory=list)
    second: Any = None
    arrived_hash: str | None = None  # an import's content hash before outputs were filled in

    @classmethod
    def of_task(cls, task: Task) -> Candidate:
        return cls(task.id, task.source, task.kind, task=task, program=task.program)

    @classmethod
    def proposal(
        cls, item: str, kind: str, program: str | None, inputs: list[str], **draft: Any
    ) -> Candidate:
        """`draft` holds the task's fields besides program, tests and examples."""
        return cls(
            item, draft.get("source", "selfplay"), kind, program=program, inputs=inputs, draft=draft
        )

    @property
    def proposed(self) -> bool:
        return bool(self.draft)

    @property
    def entry_point(self) -> str | None:
        return self.task.entry_point if self.task is not None else self.draft.get("entry_point")

    @property
    def alive(self) -> bool:
        return self.reason is None


@dataclass(slots=True)
class AdmissionReport:
    """One admission's counts. `admitted` tasks are in the bank; `contaminated` counts those
    of them flagged as benchmark look-alikes (stored, but left out of schedules and exports)."""

    seen: int = 0
    admitted: int = 0
    already_present: int = 0
    contaminated: int = 0
    rejected: Counter = field(default_factory=Counter)
    admitted_ids: list[str] = field(default_factory=list)
    flagged_ids: list[str] = field(default_factory=list)
    # Each candidate's one outcome by item: "admitted", "contaminated", "already_present"
    # or the reason it was turned away.
    outcomes: dict[str, str] = field(default_factory=dict)
    # Each candidate's task id where it got one, by item.
    task_ids: dict[str, str] = field(default_factory=dict)

    def merge(self, other: AdmissionReport) -> None:
        self.seen += other.seen
        self.admitted += other.admitted
        self.already_present += other.already_present
        self.contaminated += other.contaminated
        self.rejected.update(other.rejected)
        self.admitted_ids.extend(other.admitted_ids)
        self.flagged_ids.extend(other.flagged_ids)
        self.outcomes.update(other.outcomes)
        self.task_ids.update(other.task_ids)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "admitted": self.admitted,
            "already_present": self.already_present,
            "contaminated": self.contaminated,
            "rejected": dict(self.rejected.most_common()),
        }
