"""`Task`: one programming task with its provenance and verification facts.

The record every layer passes around (kinds, admission, the bank, exports, training),
so it sits at the bottom and imports nothing from the rest of selfplay. Reading one from
an untrusted row is `selfplay.admission.schema.parse_task`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


class InvalidTask(ValueError):
    """A row that is not a task; the message is one sentence."""


@dataclass(slots=True)
class Task:
    """One verified task with its provenance and verification facts.

    `examples` are `{"input": "<args literal>", "output": "<repr of result>"}`; an
    `output` of None means "not computed yet" (admission fills it in by execution).
    `contaminated` is None, or the reason the task overlaps a benchmark set.
    """

    id: str
    kind: str
    prompt: str
    program: str
    entry_point: str | None
    tests: list[str | dict[str, str]]
    examples: list[dict[str, str | None]] = field(default_factory=list)
    source: str = "unknown"
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    parent_ids: list[str] = field(default_factory=list)
    proposer: str | None = None
    round_id: int | None = None
    created_at: float | None = None
    verified_at: float | None = None
    deterministic: bool | None = None
    contaminated: str | None = None
    # Tests added after admission, kept apart from `tests` (which stay as the task came):
    # {"tests": [...], "provenance": {...}} (`selfplay.strengthen`).
    strengthened: dict[str, Any] | None = None

    @property
    def all_tests(self) -> list[str | dict[str, str]]:
        """What grading uses: the task's tests, then the strengthened ones."""
        return [*self.tests, *((self.strengthened or {}).get("tests") or [])]

    def to_row(self) -> dict[str, Any]:
        """The task in the import/export row format."""
        return {
            "id": self.id,
            "kind": self.kind,
            "prompt": self.prompt,
            "program": self.program,
            "entry_point": self.entry_point,
            "tests": self.tests,
            "examples": self.examples,
            "source": self.source,
            "tags": self.tags,
            "metadata": self.metadata,
        }

    def content_hash(self) -> str:
        """A hash of what the task asks, used for ids and for 'already present'."""
        payload = [
            self.kind,
            self.prompt,
            self.program,
            self.entry_point,
            self.tests,
            [e["input"] for e in self.examples],
        ]
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
