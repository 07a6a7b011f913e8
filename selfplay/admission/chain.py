"""`Admission.admit`: the one chain every candidate task passes before it enters the bank.

Per batch, in order (each step turns a candidate away with one `Reason`, counted once):
1. a proposal's static steps (`static.screen`, `static.check_inputs`): nothing runs;
2. an import already present (same id and content: skipped, not a rejection) or an id
   conflict;
3. run 1 (`runs`): the program on its own tests and inputs; a proposal's tests are then
   built from the outputs, and a proposal the bank already has is a duplicate;
4. run 2: the same program with those tests must pass with the same outputs;
5. the kind's own check (enough examples, ...);
6. the degenerate-response probe (`degenerate`): a codegen task's tests must fail programs
   that return an empty container, None, NaN, an empty array... (`weak_tests`);
7. exact dedup on the normalized-AST key;
8. near duplicates, confirmed by behaviour (`neardup`);
9. decontamination, which flags and does not reject;
10. one transaction that writes the admitted tasks, their vectors and every rejection.
Each program runs exactly twice (once when determinism checking is off for imports);
only pairs of similar tasks are run again, on each other's tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from selfplay.admission import degenerate, runs
from selfplay.admission.candidate import AdmissionReport, Candidate, Reason
from selfplay.admission.decontam import Decontaminator, humaneval_decontaminator
from selfplay.admission.dedup import Vectorizer, dedup_key
from selfplay.admission.neardup import Grader, NearDuplicates
from selfplay.admission.normalize import ast_hash
from selfplay.admission.static import check_inputs, screen
from selfplay.task import Task
from task_bank.store import Bank, Rejection

Progress = Callable[[str, int, int], None]


class AdmissionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    near_dup_threshold: float = Field(0.85, ge=0.0, le=1.0, description="cosine similarity")
    near_dup_neighbours: int = Field(8, ge=1, description="neighbours checked per task")
    max_examples: int = Field(10, ge=1, description="example inputs kept per task")
    check_determinism: bool = Field(True, description="run each imported reference twice")
    decontaminate: bool = Field(True, description="flag HumanEval look-alikes")
    vectorizer_model: str | None = Field(None, description="sentence-transformers model")
    dim: int = Field(256, ge=16, description="hashed vector dimension")
    timeout_s: float | None = Field(None, gt=0, description="per-row verifier limit")
    max_program_chars: int = Field(2000, ge=100, description="longer proposals are rejected")
    max_output_chars: int = Field(1000, ge=10, description="longer proposal outputs are rejected")
    proposal_examples: int = Field(
        5, ge=2, description="a proposal's calls that returned, kept as its examples"
    )
    probe_degenerate: bool = Field(
        True, description="turn away codegen tasks whose tests pass a degenerate answer"
    )


class Admission:
    def __init__(
        self,
        bank: Bank,
        verifier: Grader,
        config: AdmissionConfig | None = None,
        decontaminator: Decontaminator | None = None,
        extend_tests: Callable[[Task, Grader], dict | None] | None = None,
    ) -> None:
        self.bank = bank
        self.verifier = verifier
        # Given each verified codegen import before the degenerate-answer probe; what it
        # returns becomes the task's `strengthened` record (`selfplay bank import
        # --strengthen` passes `selfplay.strengthen.bank.strengthen_one`), so the probe runs
        # on the added tests too.
        self.extend_tests = extend_tests
        self.config = c = config or AdmissionConfig()
        self.vectorizer = Vectorizer(dim=c.dim, model=c.vectorizer_model)
        self.decontaminator = decontaminator
        if decontaminator is None and c.decontaminate:
            self.decontaminator = humaneval_decontaminator()
        self.near = NearDuplicates(
            bank,
            verifier,
            self.vectorizer,
            threshold=c.near_dup_threshold,
            neighbours=c.near_dup_neighbours,
            timeout_s=c.timeout_s,
        )

    def screen(self, candidate: Candidate) -> Reason | None:
        """A proposal's program steps, before its inputs exist (so a proposer need not ask
        for inputs of a program that cannot be admitted). The reason stays on it."""
        if candidate.alive and candidate.proposed and not candidate.screened:
            candidate.reason = screen(candidate, self.config.max_program_chars)
            candidate.screened = True
        return candidate.reason

    def _grade(self, live: list[Candidate], row: Callable, progress: Progress, phase: str):
        rows = [row(c, str(n), self.config.timeout_s) for n, c in enumerate(live)]
        progress(phase, 0, len(rows))
        verdicts = self.verifier.grade(rows) if rows else []
        progress(phase, len(rows), len(rows))
        return verdicts

    def admit(
        self, candidates: Iterable[Candidate | Task], progress: Progress | None = None
    ) -> AdmissionReport:
        """Check a batch of candidates and write the admitted ones in one transaction."""
        batch = [c if isinstance(c, Candidate) else Candidate.of_task(c) for c in candidates]
        progress = progress or (lambda phase, done, total: None)
        report = AdmissionReport(seen=len(batch))
        c = self.config

        def step(check: Callable[[Candidate], Reason | None], among: list[Candidate]):
            for cand in among:
                if cand.alive:
                    cand.reason = check(cand)
            return [cand for cand in among if cand.alive]

        for cand in batch:
            self.screen(cand)
        live = step(lambda x: check_inputs(x) if x.proposed else None, batch)
        live = self._arrivals([x for x in live if not x.proposed], report) + [
            x for x in live if x.proposed
        ]
        for cand in live:
            runs.prepare(cand, c.max_examples)
        firsts = self._grade(live, runs.first_row, progress, "run 1")
        for cand, verdict in zip(live, firsts, strict=True):
            if cand.proposed:
                cand.reason = runs.proposal_outputs(
                    cand, verdict, c.max_output_chars, c.proposal_examples
                ) or runs.build(cand)
            else:
                cand.reason = runs.import_outputs(cand, verdict)
        live = [x for x in live if x.alive]
        # A proposal's id is known only now; the bank or the batch may have it already.
        proposals = [x for x in live if x.proposed]
        self._known_proposals(proposals, [x for x in live if not x.proposed])
        live = [x for x in live if x.alive]
        twice = [x for x in live if x.proposed or c.check_determinism]
        seconds = self._grade(twice, runs.second_row, progress, "run 2")
        for cand, verdict in zip(twice, seconds, strict=True):
            cand.second = verdict
            cand.reason = runs.same_again(cand, verdict)
        live = step(lambda x: runs.finish(x, x.second is not None), live)
        if self.extend_tests is not None:
            self._extend(live, progress)
        if c.probe_degenerate:
            live = self._probe(live, progress)
        admitted = self._write(batch, live, report)
        for cand in batch:
            if cand.task is not None:
                report.task_ids[cand.item] = cand.task.id
            if cand.reason is not None:
                report.rejected[cand.reason.name] += 1
                report.outcomes[cand.item] = cand.reason.name
        report.admitted_ids = [t.id for t in admitted]
        return report

    def _extend(self, live: list[Candidate], progress: Progress) -> None:
        todo = [
            x for x in live if x.task is not None and not x.proposed and x.task.kind == "codegen"
        ]
        for done, cand in enumerate(todo):
            progress("strengthen", done, len(todo))
            cand.task.strengthened = self.extend_tests(cand.task, self.verifier)
        progress("strengthen", len(todo), len(todo))

    def _probe(self, live: list[Candidate], progress: Progress) -> list[Candidate]:
        """Every probe of every codegen candidate in one batch of rows (`degenerate`)."""
        probed = [x for x in live if degenerate.probes_for(x)]
        rows = [r for n, x in enumerate(probed)
                for r in degenerate.rows(x, str(n), self.config.timeout_s)]  # fmt: skip
        if not rows:
            return live
        progress("probe", 0, len(rows))
        verdicts = degenerate.grade(self.verifier, rows)
        progress("probe", len(rows), len(rows))
        per = len(degenerate.PROBES)
        for n, x in enumerate(probed):
            mine = verdicts[n * per : (n + 1) * per]
            x.reason = degenerate.judge(x, [p for p, v in zip(degenerate.PROBES, mine,
                                                               strict=True) if v.passed])  # fmt: skip
        return [x for x in live if x.alive]

    def _arrivals(self, imports: list[Candidate], report: AdmissionReport) -> list[Candidate]:
        """Imports the bank has already (skipped) and id clashes (rejected)."""
        present = self.bank.content_hashes(x.item for x in imports)
        arrived: dict[str, str] = {}
        fresh = []
        for x in imports:
            assert x.task is not None
            digest = x.arrived_hash = x.task.content_hash()
            if x.item in present:
                if present[x.item] == digest:
                    report.already_present += 1
                    report.outcomes[x.item] = "already_present"
                    continue
                x.reason = Reason("id_conflict", f"another task in the bank has id {x.item}")
            elif x.item in arrived:
                same = arrived[x.item] == digest
                x.reason = Reason("duplicate" if same else "id_conflict", f"repeats id {x.item}")
            else:
                arrived[x.item] = digest
                fresh.append(x)
        return fresh

    def _known_proposals(self, proposals: list[Candidate], imports: list[Candidate]) -> None:
        """The same program and inputs proposed again are a duplicate, not news."""
        ids = [x.task.id for x in proposals if x.task is not None]
        present = self.bank.content_hashes(ids)
        arrived = {x.task.id for x in imports if x.task is not None}
        for x in proposals:
            assert x.task is not None
            x.arrived_hash = x.task.content_hash()
            if x.task.id in present or x.task.id in arrived:
                x.reason = Reason("duplicate", f"repeats task {x.task.id}")
            arrived.add(x.task.id)

    def _write(
        self, batch: list[Candidate], live: list[Candidate], report: AdmissionReport
    ) -> list[Task]:
        """Exact and near dedup, the contamination flag, and the one transaction."""
        tasks = [x.task for x in live if x.task is not None]
        hashes = [ast_hash(t.program) for t in tasks]
        keys = [dedup_key(t, h) for t, h in zip(tasks, hashes, strict=True)]
        taken = self.bank.ids_by_dedup_key(keys)
        unique: list[int] = []
        for n, (x, key) in enumerate(zip(live, keys, strict=True)):
            if key in taken:
                x.reason = Reason("duplicate", f"same normalized program as {taken[key]}")
                continue
            taken[key] = x.item
            unique.append(n)
        kept = [tasks[n] for n in unique]
        vectors = self.vectorizer.vectorize(kept) if kept else np.zeros((0, self.config.dim))
        dups = self.near.find(kept, vectors) if kept else {}
        chosen: list[int] = []
        for i, n in enumerate(unique):
            if i in dups:
                live[n].reason = Reason("near_duplicate", f"behaves like {dups[i]}")
                continue
            if self.decontaminator is not None:
                tasks[n].contaminated = self.decontaminator.check(tasks[n], hashes[n])
            chosen.append(i)
        written_tasks = [kept[i] for i in chosen]
        written_vectors = vectors[chosen] if chosen else vectors[:0]
        chosen_n = [unique[i] for i in chosen]
        rejections = [
            Rejection(x.source, x.task.id if x.task is not None else x.item, *_reason(x))
            for x in batch
            if x.reason is not None
        ]
        written = self.bank.add_tasks(
            written_tasks,
            vectors=written_vectors,
            ast_hashes=[hashes[n] for n in chosen_n],
            dedup_keys=[keys[n] for n in chosen_n],
            content_hashes=[live[n].arrived_hash or tasks[n].content_hash() for n in chosen_n],
            rejections=rejections,
        )
        admitted, new_keys, new_vectors = [], [], []
        for n, key, vec in zip(chosen_n, written, written_vectors, strict=True):
            t = tasks[n]
            if key is None:  # a concurrent writer admitted the same task first
                live[n].reason = Reason("duplicate", "admitted by another writer meanwhile")
                continue
            admitted.append(t)
            report.admitted += 1
            report.outcomes[live[n].item] = "admitted" if t.contaminated is None else "contaminated"
            if t.contaminated is not None:
                report.contaminated += 1
                report.flagged_ids.append(t.id)
            new_keys.append(key)
            new_vectors.append(vec)
        self.near.add(new_keys, new_vectors)
        return admitted


def _reason(c: Candidate) -> tuple[str, str]:
    assert c.reason is not None
    return c.reason.name, c.reason.detail
