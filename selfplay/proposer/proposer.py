"""`Proposer.propose`: the proposer model writes new tasks of one kind; only verified ones
reach the bank.

One proposal takes two generations, both with a prefilled code fence: first a program
`f` (shown K reference tasks from the bank), then, in a separate prompt that shows only
that program, a few calls of `f` with literal arguments. A small model writes a program
readily but rarely adds the input block in the same answer; asked separately, it does.
Outputs and examples are always computed by the verifier, never taken from the model.
"""

from __future__ import annotations

import ast
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from selfplay import kinds
from selfplay.backends.base import Backend, Sampling
from selfplay.backends.models import model_label
from selfplay.config import ProposerConfig
from selfplay.prompts import render
from selfplay.proposer.checks import Reason, run_checks, static_checks
from selfplay.proposer.parse import inputs_from, program_from
from task_bank.gate import Gate
from task_bank.schema import InvalidTask, Task, parse_task
from task_bank.store import Rejection
from task_bank.training import Proposal

ENTRY_POINT = "f"
SOURCE = "selfplay"
# Inputs a kind needs after the run checks (each kind's `proposal_inputs`).
MIN_INPUTS = {name: kind.proposal_inputs for name, kind in kinds.KINDS.items()}

Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class ProposalReport:
    """What one `propose` call did; `rejected` counts every candidate not admitted by reason."""

    kind: str
    proposed: int = 0
    admitted_ids: list[str] = field(default_factory=list)
    rejected: Counter = field(default_factory=Counter)
    tokens: int = 0
    seconds: float = 0.0
    # Every program written, with its prompt and outcome: the proposer role's training data.
    proposals: list[Proposal] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "proposed": self.proposed,
            "admitted_ids": self.admitted_ids,
            "rejected": dict(self.rejected),
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class _Candidate:
    index: int
    program: str
    inputs: list[str] = field(default_factory=list)


def test_of(entry_point: str, args: str, output: str) -> str:
    """`assert f(args) == output`, or a comparison of reprs where the output is no literal
    that compares equal to itself (`nan`, `inf`, `frozenset()`)."""
    try:
        value = ast.literal_eval(output)
        if value == value:
            return f"assert {entry_point}({args}) == {output}"
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return f"assert repr({entry_point}({args})) == {output!r}"


def _show_reference(task: Task, limit: int) -> str:
    program = task.program if len(task.program) <= limit else task.program[:limit] + "\n# ...\n"
    block = f"```python\n{program.rstrip()}\n```"
    shown = [e for e in task.examples if e.get("output") is not None][:3]
    return kinds.get(task.kind).describe(task, shown, block)


class Proposer:
    """Writes candidate tasks with a backend, validates them, admits them through the gate."""

    def __init__(
        self,
        backend: Backend,
        verifier: Any,
        gate: Gate,
        config: ProposerConfig | None = None,
        *,
        seed: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.backend = backend
        self.verifier = verifier
        self.gate = gate
        self.config = config or ProposerConfig()
        self.seed = seed
        self.progress = progress or (lambda phase, done, total: None)
        self._written: list[tuple[list[dict[str, str]], str]] = []

    def _sampling(self, max_new_tokens: int) -> Sampling:
        c = self.config
        return Sampling(
            temperature=c.temperature,
            top_p=c.top_p,
            max_new_tokens=max_new_tokens,
            stop=("```",),
            seed=self.seed,
        )

    def propose(self, kind: str, references: list[Task], round_id: int | None) -> ProposalReport:
        """Sample `proposals_per_kind` tasks of `kind` and admit the ones that pass every check."""
        report = ProposalReport(kind)
        started, tokens0 = time.perf_counter(), self.backend.stats.tokens
        rejections: list[Rejection] = []

        outcome: dict[int, str] = {}

        def reject(index: int, reason: Reason) -> None:
            report.rejected[reason.name] += 1
            outcome[index] = reason.name
            item = f"{SOURCE}-r{round_id}-{kind}-{index}"
            rejections.append(Rejection(SOURCE, item, reason.name, reason.detail))

        candidates = self._programs(kind, references, reject, report)
        candidates = self._inputs(kind, candidates, reject)
        tasks = self._run(kind, candidates, references, round_id, reject)
        if rejections:
            self.gate.bank.add_rejections(rejections)
        task_of: dict[int, str] = {}
        if tasks:
            self.progress("admit", 0, len(tasks))
            gated = self.gate.admit(tasks)
            self.progress("admit", len(tasks), len(tasks))
            report.rejected.update(gated.rejected)
            # The same program and inputs proposed again are a duplicate, not news.
            if gated.already_present:
                report.rejected["duplicate"] += gated.already_present
            # A flagged look-alike of a benchmark stays in the bank but out of schedules
            # and exports, so it does not count as admitted.
            contaminated = {t.id for t in tasks if t.contaminated is not None}
            flagged = contaminated & set(gated.admitted_ids)
            if flagged:
                report.rejected["contaminated"] += len(flagged)
            report.admitted_ids = [i for i in gated.admitted_ids if i not in flagged]
            for t in tasks:
                index = t.metadata["proposal"]
                task_of[index] = t.id
                outcome[index] = (
                    "admitted"
                    if t.id in report.admitted_ids
                    else "contaminated"
                    if t.id in flagged
                    else gated.outcomes.get(t.id, "duplicate")
                )
        report.proposals = [
            Proposal(
                round_id,
                kind,
                index,
                prompt,
                text,
                outcome.get(index, "unknown"),
                task_of.get(index) if outcome.get(index) == "admitted" else None,
                model_label(self.backend.model),
            )
            for index, (prompt, text) in enumerate(self._written)
        ]
        report.tokens = self.backend.stats.tokens - tokens0
        report.seconds = time.perf_counter() - started
        return report

    def _programs(
        self, kind: str, references: list[Task], reject: Any, report: ProposalReport
    ) -> list[_Candidate]:
        c = self.config
        shown = "\n\n".join(
            f"Puzzle {i + 1}:\n{_show_reference(t, c.reference_chars)}"
            for i, t in enumerate(references)
        )
        prompt = render(f"proposer_{kind}", references=shown or "(none yet)")
        self.progress(f"propose {kind}", 0, c.proposals_per_kind)
        completions = self.backend.generate(
            [prompt], c.proposals_per_kind, self._sampling(c.max_new_tokens)
        )[0]
        self.progress(f"propose {kind}", c.proposals_per_kind, c.proposals_per_kind)
        report.proposed = len(completions)
        # The assistant turn as the model wrote it (prefill included), for proposer training.
        self._written = [(list(prompt.messages), prompt.prefill + c.text) for c in completions]
        kept = []
        for i, completion in enumerate(completions):
            program = program_from(prompt.prefill, completion.text)
            if program is not None and len(program) > c.max_program_chars:
                reject(i, Reason("too_long", f"{len(program)} characters"))
                continue
            reason = static_checks(program, ENTRY_POINT, kind)
            if reason:
                reject(i, reason)
                continue
            assert program is not None
            kept.append(_Candidate(i, program))
        return kept

    def _inputs(self, kind: str, candidates: list[_Candidate], reject: Any) -> list[_Candidate]:
        if not candidates:
            return []
        c = self.config
        prompts = [
            render("proposer_inputs", program=cand.program.rstrip(), count=c.inputs_per_task)
            for cand in candidates
        ]
        self.progress(f"inputs {kind}", 0, len(prompts))
        results = self.backend.generate(prompts, 1, self._sampling(c.input_max_new_tokens))
        self.progress(f"inputs {kind}", len(prompts), len(prompts))
        kept = []
        for cand, prompt, result in zip(candidates, prompts, results, strict=True):
            cand.inputs = inputs_from(
                prompt.prefill, result[0].text, ENTRY_POINT, c.inputs_per_task
            )
            if len(cand.inputs) < MIN_INPUTS[kind]:
                reject(cand.index, Reason("too_few_inputs", f"{len(cand.inputs)} literal calls"))
                continue
            kept.append(cand)
        return kept

    def _run(
        self,
        kind: str,
        candidates: list[_Candidate],
        references: list[Task],
        round_id: int | None,
        reject: Any,
    ) -> list[Task]:
        """Run each program twice on its inputs; build the tasks that pass the run checks."""
        if not candidates:
            return []
        rows = [
            {
                "id": f"{cand.index}.{run}",
                "program": cand.program,
                "tests": [],
                "calls": [f"{ENTRY_POINT}({x})" for x in cand.inputs],
            }
            for run in range(2)
            for cand in candidates
        ]
        self.progress(f"verify {kind}", 0, len(rows))
        verdicts = self.verifier.grade(rows)
        self.progress(f"verify {kind}", len(rows), len(rows))
        tasks = []
        for n, cand in enumerate(candidates):
            first, second = verdicts[n], verdicts[len(candidates) + n]
            keep, reason = run_checks(first, second, len(cand.inputs), self.config.max_output_chars)
            if reason is None and len(keep) < MIN_INPUTS[kind]:
                reason = Reason("inputs_raise", first.detail[:300])
            outputs = [first.outputs[i] for i in keep] if reason is None else []
            if reason is None and kinds.get(kind).varied_outputs and len(set(outputs)) == 1:
                reason = Reason("constant_output", f"every input gives {outputs[0][:100]}")
            if reason:
                reject(cand.index, reason)
                continue
            task = self._task(kind, cand, keep, outputs, references, round_id)
            if isinstance(task, Reason):
                reject(cand.index, task)
            else:
                tasks.append(task)
        return tasks

    def _task(
        self,
        kind: str,
        cand: _Candidate,
        keep: list[int],
        outputs: list[str],
        references: list[Task],
        round_id: int | None,
    ) -> Task | Reason:
        inputs = [cand.inputs[i] for i in keep]
        # Tests are built from values the verifier computed, never from model text.
        tests = [test_of(ENTRY_POINT, x, y) for x, y in zip(inputs, outputs, strict=True)]
        prompt = kinds.get(kind).statement(cand.program, ENTRY_POINT)
        row = {
            "kind": kind,
            "prompt": prompt,
            "program": cand.program,
            "entry_point": ENTRY_POINT,
            "tests": tests,
            "examples": [{"input": x, "output": y} for x, y in zip(inputs, outputs, strict=True)],
            "source": SOURCE,
            "tags": ["selfplay"],
        }
        try:
            task = parse_task(row, source=SOURCE)
        except InvalidTask as e:
            return Reason("invalid_task", str(e))
        task.parent_ids = [t.id for t in references]
        task.proposer = model_label(self.backend.model)
        task.round_id = round_id
        task.metadata = {"proposal": cand.index}
        return task
