"""Near duplicates, found by vectors and confirmed by behaviour.

A candidate's nearest neighbours (in the bank and earlier in its batch) above the
similarity threshold are only suspects: each pair's programs are run on each other's
tests and example inputs, and only tasks that agree both ways count as duplicates, so
look-alikes that compute different things are kept. These runs compare two tasks; they
are not part of a candidate's own two runs, and happen only for similar pairs.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from selfplay import kinds
from selfplay.admission.dedup import Vectorizer
from selfplay.admission.examples import same_value
from selfplay.task import Task
from task_bank.store import Bank, BankError
from task_bank.vectors import NearDupIndex


class Grader(Protocol):
    def grade(self, rows: list[dict[str, Any]]) -> list[Any]: ...


def _alias(program: str, own: str | None, other: str | None) -> str:
    """Make `program` answer to the other task's entry-point name."""
    if own and other and own != other:
        return f"{program}\n{other} = {own}\n"
    return program


def _comparable(a: Task, b: Task) -> bool:
    if a.kind != b.kind or (a.entry_point is None) != (b.entry_point is None):
        return False
    kind = kinds.get(a.kind)
    return kind.shown(a) == kind.shown(b)  # the same question, if the kind shows one


def _agrees(verdict: Any, task: Task) -> bool:
    """The verdict of another program on `task`'s tests matches `task`'s examples."""
    if not verdict.passed:
        return False
    if not task.entry_point:
        return True
    return all(
        out is not None and same_value(out, e["output"])
        for out, e in zip(verdict.outputs or [], task.examples, strict=False)
    )


class NearDuplicates:
    """The bank's vector index and the behaviour check of the pairs it suggests."""

    def __init__(
        self,
        bank: Bank,
        verifier: Grader,
        vectorizer: Vectorizer,
        *,
        threshold: float,
        neighbours: int,
        timeout_s: float | None,
    ) -> None:
        self.bank, self.verifier, self.vectorizer = bank, verifier, vectorizer
        self.threshold, self.neighbours, self.timeout_s = threshold, neighbours, timeout_s
        self._index: NearDupIndex | None = None

    def index(self) -> NearDupIndex:
        if self._index is None:
            name = self.bank.meta("vectorizer")
            if name is None:
                self.bank.set_meta("vectorizer", self.vectorizer.name)
            elif name != self.vectorizer.name:
                raise BankError(
                    f"{self.bank.path} holds vectors from '{name}', not '{self.vectorizer.name}'"
                )
            keys, vectors = self.bank.vectors()
            self._index = NearDupIndex(self.vectorizer.dim)
            self._index.add(keys, vectors)
        return self._index

    def _row(self, a: Task, b: Task, tag: str) -> dict[str, Any]:
        """A row that passes only if `a` behaves like `b` on b's tests and examples."""
        calls = [f"{b.entry_point}({e['input']})" for e in b.examples] if b.entry_point else []
        row: dict[str, Any] = {
            "id": tag,
            "program": _alias(a.program, a.entry_point, b.entry_point),
            "tests": b.tests,
            "calls": calls,
        }
        if self.timeout_s:
            row["timeout_s"] = self.timeout_s
        return row

    def find(self, tasks: list[Task], vectors: np.ndarray) -> dict[int, str]:
        """Index in `tasks` -> id of an existing or earlier task it duplicates."""
        hits = self.index().search(vectors, self.threshold, self.neighbours)
        stored = self.bank.tasks_by_key({k for row in hits for k, _ in row})
        pairs: list[tuple[int, Task]] = []
        for i, row in enumerate(hits):
            pairs += [(i, stored[k]) for k, _ in row if k in stored]
        within = vectors @ vectors.T if len(tasks) > 1 else np.zeros((1, 1))
        for i in range(len(tasks)):
            pairs += [(i, tasks[j]) for j in range(i) if within[i, j] >= self.threshold]
        pairs = [(i, other) for i, other in pairs if _comparable(tasks[i], other)]
        if not pairs:
            return {}
        rows = []
        for n, (i, other) in enumerate(pairs):
            rows += [self._row(tasks[i], other, f"{n}a"), self._row(other, tasks[i], f"{n}b")]
        verdicts = self.verifier.grade(rows)
        dup: dict[int, str] = {}
        for n, (i, other) in enumerate(pairs):
            agree = _agrees(verdicts[2 * n], other) and _agrees(verdicts[2 * n + 1], tasks[i])
            earlier_dropped = any(other is tasks[j] and j in dup for j in range(i))
            if agree and not earlier_dropped and i not in dup:
                dup[i] = other.id
        return dup

    def add(self, keys: list[int], vectors: list[np.ndarray]) -> None:
        if keys:
            self.index().add(np.array(keys), np.array(vectors))
