"""Admission: the chain of checks a candidate task passes before it enters the bank.

`Gate.admit(tasks)` runs, per batch:
1. already present (same id and content: skipped, not a rejection) or id conflict;
2. verification through `selfplay.verifier` (the reference passes its own tests, twice,
   with the same example outputs both times); example outputs are computed here;
3. exact dedup on the normalized-AST key;
4. decontamination (flags, does not reject);
5. near-duplicate search, confirmed by behaviour: each reference program is run on the
   other task's tests and example inputs, and only tasks that agree both ways count as
   duplicates, so look-alikes that compute different things are kept;
6. one transaction that writes the admitted tasks, their vectors and the rejections.
Every candidate that does not get in is counted by reason.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from selfplay import kinds
from selfplay.task import Task
from task_bank.decontam import Decontaminator, humaneval_decontaminator
from task_bank.dedup import NearDupIndex, Vectorizer
from task_bank.examples import inputs_from_tests, is_literal, same_value
from task_bank.normalize import ast_hash
from task_bank.store import Bank, BankError, Rejection, dedup_key


class Grader(Protocol):
    def grade(self, rows: list[dict[str, Any]]) -> list[Any]: ...


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    near_dup_threshold: float = Field(0.85, ge=0.0, le=1.0, description="cosine similarity")
    near_dup_neighbours: int = Field(8, ge=1, description="neighbours checked per task")
    max_examples: int = Field(10, ge=1, description="example inputs kept per task")
    check_determinism: bool = Field(True, description="run each reference twice")
    decontaminate: bool = Field(True, description="flag HumanEval look-alikes")
    vectorizer_model: str | None = Field(None, description="sentence-transformers model")
    dim: int = Field(256, ge=16, description="hashed vector dimension")
    timeout_s: float | None = Field(None, gt=0, description="per-row verifier limit")


@dataclass(slots=True)
class GateReport:
    seen: int = 0
    admitted: int = 0
    already_present: int = 0
    contaminated: int = 0
    rejected: Counter = field(default_factory=Counter)
    admitted_ids: list[str] = field(default_factory=list)
    # Why each candidate that was not admitted was turned away, by task id.
    outcomes: dict[str, str] = field(default_factory=dict)

    def merge(self, other: GateReport) -> None:
        self.seen += other.seen
        self.admitted += other.admitted
        self.already_present += other.already_present
        self.contaminated += other.contaminated
        self.rejected.update(other.rejected)
        self.admitted_ids.extend(other.admitted_ids)
        self.outcomes.update(other.outcomes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "admitted": self.admitted,
            "already_present": self.already_present,
            "contaminated": self.contaminated,
            "rejected": dict(self.rejected.most_common()),
        }


def _alias(program: str, own: str | None, other: str | None) -> str:
    """Make `program` answer to the other task's entry-point name."""
    if own and other and own != other:
        return f"{program}\n{other} = {own}\n"
    return program


class Gate:
    def __init__(
        self,
        bank: Bank,
        verifier: Grader,
        config: GateConfig | None = None,
        decontaminator: Decontaminator | None = None,
    ) -> None:
        self.bank = bank
        self.verifier = verifier
        self.config = config or GateConfig()
        self.vectorizer = Vectorizer(dim=self.config.dim, model=self.config.vectorizer_model)
        self.decontaminator = decontaminator
        if decontaminator is None and self.config.decontaminate:
            self.decontaminator = humaneval_decontaminator()
        self._index: NearDupIndex | None = None

    # ---- the steps -----------------------------------------------------------------

    def _row(self, tid: str, program: str, tests: list, calls: list[str]) -> dict[str, Any]:
        row: dict[str, Any] = {"id": tid, "program": program, "tests": tests, "calls": calls}
        if self.config.timeout_s:
            row["timeout_s"] = self.config.timeout_s
        return row

    def _verify(self, tasks: list[Task], reject: Any) -> list[Task]:
        """Grade each reference on its own tests; fill in example outputs by execution."""
        inputs = []
        for t in tasks:
            given = [e["input"] for e in t.examples]
            found = inputs_from_tests(t.tests, t.entry_point, self.config.max_examples)
            inputs.append(given or found)
        runs = 2 if self.config.check_determinism else 1
        rows = [
            self._row(
                f"{i}.{run}", t.program, t.tests, [f"{t.entry_point}({x})" for x in inputs[i]]
            )
            for run in range(runs)
            for i, t in enumerate(tasks)
        ]
        verdicts = self.verifier.grade(rows)
        kept = []
        now = time.time()
        for i, t in enumerate(tasks):
            first = verdicts[i]
            if not first.passed:
                reject(t, f"reference_{first.status}", first.detail)
                continue
            outputs = list(first.outputs or [None] * len(inputs[i]))
            if not t.examples:
                # Inputs found in the tests are only kept where the result is a plain
                # value: an object repr (with its address) is no example.
                outputs = [out if out is not None and is_literal(out) else None for out in outputs]
            if runs == 2:
                second = verdicts[len(tasks) + i]
                again = list(second.outputs or [None] * len(inputs[i]))
                if not second.passed or any(
                    out is not None and out != other
                    for out, other in zip(outputs, again, strict=True)
                ):
                    reject(t, "nondeterministic", "a second run gave a different result")
                    continue
            if t.examples:
                bad = next(
                    (
                        (e, out)
                        for e, out in zip(t.examples, outputs, strict=True)
                        if out is None
                        or (e["output"] is not None and not same_value(e["output"], out))
                    ),
                    None,
                )
                if bad:
                    reason = "example_error" if bad[1] is None else "example_mismatch"
                    reject(
                        t,
                        reason,
                        f"input {bad[0]['input']}: given {bad[0]['output']}, ran {bad[1]}",
                    )
                    continue
            t.examples = [
                {"input": x, "output": out}
                for x, out in zip(inputs[i], outputs, strict=True)
                if out is not None
            ]
            problem = kinds.get(t.kind).check(t)
            if problem:
                reject(t, *problem)
                continue
            t.verified_at, t.deterministic = now, runs == 2
            kept.append(t)
        return kept

    def _index_for(self) -> NearDupIndex:
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

    def _same_behaviour_rows(self, a: Task, b: Task, tag: str) -> list[dict[str, Any]]:
        """Rows that pass only if `a` behaves like `b` on b's tests and examples."""
        prog = _alias(a.program, a.entry_point, b.entry_point)
        calls = [f"{b.entry_point}({e['input']})" for e in b.examples] if b.entry_point else []
        return [self._row(tag, prog, b.tests, calls)]

    def _comparable(self, a: Task, b: Task) -> bool:
        if a.kind != b.kind or (a.entry_point is None) != (b.entry_point is None):
            return False
        kind = kinds.get(a.kind)
        return kind.shown(a) == kind.shown(b)  # the same question, if the kind shows one

    def _near_duplicates(self, tasks: list[Task], vectors: np.ndarray) -> dict[int, str]:
        """Index in `tasks` -> id of an existing or earlier task it duplicates."""
        index = self._index_for()
        threshold = self.config.near_dup_threshold
        hits = index.search(vectors, threshold, self.config.near_dup_neighbours)
        stored = self.bank.tasks_by_key({k for row in hits for k, _ in row})
        pairs: list[tuple[int, Task]] = []
        for i, row in enumerate(hits):
            pairs += [(i, stored[k]) for k, _ in row if k in stored]
        within = vectors @ vectors.T if len(tasks) > 1 else np.zeros((1, 1))
        for i in range(len(tasks)):
            pairs += [(i, tasks[j]) for j in range(i) if within[i, j] >= threshold]
        pairs = [(i, other) for i, other in pairs if self._comparable(tasks[i], other)]
        if not pairs:
            return {}
        rows = []
        for n, (i, other) in enumerate(pairs):
            rows += self._same_behaviour_rows(tasks[i], other, f"{n}a")
            rows += self._same_behaviour_rows(other, tasks[i], f"{n}b")
        verdicts = self.verifier.grade(rows)
        dup: dict[int, str] = {}
        for n, (i, other) in enumerate(pairs):
            there, back = verdicts[2 * n], verdicts[2 * n + 1]
            agree = there.passed and back.passed
            if agree and other.entry_point:
                agree = all(
                    out is not None and same_value(out, e["output"])
                    for out, e in zip(there.outputs or [], other.examples, strict=False)
                ) and all(
                    out is not None and same_value(out, e["output"])
                    for out, e in zip(back.outputs or [], tasks[i].examples, strict=False)
                )
            earlier_dropped = any(other is tasks[j] and j in dup for j in range(i))
            if agree and not earlier_dropped and i not in dup:
                dup[i] = other.id
        return dup

    # ---- the verb --------------------------------------------------------------------

    def admit(self, tasks: list[Task]) -> GateReport:
        """Check a batch of candidates and write the admitted ones in one transaction."""
        report = GateReport(seen=len(tasks))
        rejections: list[Rejection] = []

        def reject(t: Task, reason: str, detail: str = "") -> None:
            report.rejected[reason] += 1
            report.outcomes[t.id] = reason
            rejections.append(Rejection(t.source, t.id, reason, detail))

        arrived: dict[str, str] = {}
        present = self.bank.content_hashes(t.id for t in tasks)
        fresh = []
        for t in tasks:
            digest = t.content_hash()
            if t.id in present:
                if present[t.id] == digest:
                    report.already_present += 1
                    report.outcomes[t.id] = "duplicate"
                else:
                    reject(t, "id_conflict", f"another task in the bank has id {t.id}")
            elif t.id in arrived:
                same = arrived[t.id] == digest
                reject(t, "duplicate" if same else "id_conflict", f"repeats id {t.id}")
            else:
                arrived[t.id] = digest
                fresh.append(t)
        verified = self._verify(fresh, reject) if fresh else []
        hashes = [ast_hash(t.program) for t in verified]
        keys = [dedup_key(t, h) for t, h in zip(verified, hashes, strict=True)]
        taken = self.bank.ids_by_dedup_key(keys)
        unique, unique_hashes = [], []
        for t, h, k in zip(verified, hashes, keys, strict=True):
            if k in taken:
                reject(t, "duplicate", f"same normalized program as {taken[k]}")
                continue
            taken[k] = t.id
            unique.append(t)
            unique_hashes.append(h)
        vectors = self.vectorizer.vectorize(unique) if unique else np.zeros((0, self.config.dim))
        dups = self._near_duplicates(unique, vectors) if unique else {}
        admitted, admitted_hashes, admitted_rows = [], [], []
        for i, t in enumerate(unique):
            if i in dups:
                reject(t, "near_duplicate", f"behaves like {dups[i]}")
                continue
            if self.decontaminator is not None:
                t.contaminated = self.decontaminator.check(t, unique_hashes[i])
            admitted.append(t)
            admitted_hashes.append(unique_hashes[i])
            admitted_rows.append(i)
        vectors = vectors[admitted_rows] if admitted_rows else vectors[:0]
        written = self.bank.add_tasks(
            admitted,
            vectors=vectors,
            ast_hashes=admitted_hashes,
            content_hashes=[arrived[t.id] for t in admitted],
            rejections=rejections,
        )
        new_keys, new_vectors = [], []
        for t, key, vec in zip(admitted, written, vectors, strict=True):
            if key is None:  # a concurrent writer admitted the same task first
                report.rejected["duplicate"] += 1
                report.outcomes[t.id] = "duplicate"
                continue
            report.admitted += 1
            report.admitted_ids.append(t.id)
            report.contaminated += t.contaminated is not None
            new_keys.append(key)
            new_vectors.append(vec)
        if new_keys:
            self._index_for().add(np.array(new_keys), np.array(new_vectors))
        return report
