"""`Proposer.propose`: the proposer model writes new tasks of one kind; admission judges them.

One proposal takes two generations, both with a prefilled code fence: first a program
`f` (shown K reference tasks from the bank), then, in a separate prompt that shows only
that program, a few calls of `f` with literal arguments. A small model writes a program
readily but rarely adds the input block in the same answer; asked separately, it does.
The proposer only generates and parses: every check, both runs of the program and the
write are admission's (`selfplay.admission`), and outputs and tests are always computed
by the verifier, never taken from the model.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from selfplay import kinds
from selfplay.admission import Admission, Candidate
from selfplay.backends.base import Backend, Sampling, engine_name
from selfplay.backends.models import model_label
from selfplay.config import ProposerConfig
from selfplay.prompts import render
from selfplay.proposer.parse import inputs_from, program_from
from selfplay.task import Task
from task_bank.training import Proposal

ENTRY_POINT = "f"
SOURCE = "selfplay"
PROPOSALS_DEFAULT = 3  # programs per kind and round, when the config leaves it to the engine
PROPOSALS_VLLM = 32

Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class ProposalReport:
    """What one `propose` call did. Each proposal is counted once: admitted, flagged (a
    benchmark look-alike, stored but out of schedules and exports) or rejected by reason."""

    kind: str
    proposed: int = 0
    admitted_ids: list[str] = field(default_factory=list)
    flagged: int = 0
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
            "flagged": self.flagged,
            "rejected": dict(self.rejected),
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
        }


def _show_reference(task: Task, limit: int) -> str:
    program = task.program if len(task.program) <= limit else task.program[:limit] + "\n# ...\n"
    block = f"```python\n{program.rstrip()}\n```"
    shown = [e for e in task.examples if e.get("output") is not None][:3]
    return kinds.get(task.kind).describe(task, shown, block)


class Proposer:
    """Writes candidate tasks with a backend and hands them to admission."""

    def __init__(
        self,
        backend: Backend,
        admission: Admission,
        config: ProposerConfig | None = None,
        *,
        seed: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.backend = backend
        self.admission = admission
        self.config = config or ProposerConfig()
        self.seed = seed
        self.progress = progress or (lambda phase, done, total: None)

    def count(self) -> int:
        """Programs to sample per kind: the config's, else what the engine makes cheaply. vLLM
        gains with the batch (3.7x the transformers backend's tokens/s at 16 sequences, 1.5x
        at one): on 2 cores its round with 32 a kind took 181 s for 128 proposals, the
        transformers backend's with 3 a kind 116 s for 12 (docs/self-play.md). The engine
        is known once the model loaded."""
        if self.config.proposals_per_kind is not None:
            return self.config.proposals_per_kind
        self.backend.load()
        return PROPOSALS_VLLM if engine_name(self.backend) == "vllm" else PROPOSALS_DEFAULT

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
        candidates, written = self._programs(kind, references, round_id)
        report.proposed = len(candidates)
        self._inputs(kind, [c for c in candidates if c.alive])
        admitted = self.admission.admit(
            candidates, progress=lambda phase, d, t: self.progress(f"{phase} {kind}", d, t)
        )
        flagged = set(admitted.flagged_ids)
        report.admitted_ids = [i for i in admitted.admitted_ids if i not in flagged]
        report.flagged = len(flagged)
        report.rejected = admitted.rejected
        model = model_label(self.backend.model)
        report.proposals = []
        for index, (cand, (prompt, text)) in enumerate(zip(candidates, written, strict=True)):
            outcome = admitted.outcomes.get(cand.item, "unknown")
            task_id = admitted.task_ids.get(cand.item) if outcome == "admitted" else None
            report.proposals.append(
                Proposal(round_id, kind, index, prompt, text, outcome, task_id, model)
            )
        report.tokens = self.backend.stats.tokens - tokens0
        report.seconds = time.perf_counter() - started
        return report

    def _programs(
        self, kind: str, references: list[Task], round_id: int | None
    ) -> tuple[list[Candidate], list[tuple[list[dict[str, str]], str]]]:
        """One candidate per program written (with the assistant turn as the model wrote
        it, prefill included, for proposer training); admission screens each program."""
        c = self.config
        shown = "\n\n".join(
            f"Puzzle {i + 1}:\n{_show_reference(t, c.reference_chars)}"
            for i, t in enumerate(references)
        )
        prompt = render(f"proposer_{kind}", references=shown or "(none yet)")
        count = self.count()
        self.progress(f"propose {kind}", 0, count)
        completions = self.backend.generate([prompt], count, self._sampling(c.max_new_tokens))[0]
        self.progress(f"propose {kind}", count, count)
        written = [(list(prompt.messages), prompt.prefill + x.text) for x in completions]
        model = model_label(self.backend.model)
        candidates = []
        for i, completion in enumerate(completions):
            program = program_from(prompt.prefill, completion.text)
            cand = Candidate.proposal(
                f"{SOURCE}-r{round_id}-{kind}-{i}",
                kind,
                program,
                [],
                entry_point=ENTRY_POINT,
                source=SOURCE,
                tags=["selfplay"],
                parent_ids=[t.id for t in references],
                proposer=model,
                round_id=round_id,
                metadata={"proposal": i},
            )
            self.admission.screen(cand)  # no inputs are asked for a program turned away
            candidates.append(cand)
        return candidates, written

    def _inputs(self, kind: str, candidates: list[Candidate]) -> None:
        if not candidates:
            return
        c = self.config
        prompts = [
            render(
                "proposer_inputs", program=(cand.program or "").rstrip(), count=c.inputs_per_task
            )
            for cand in candidates
        ]
        self.progress(f"inputs {kind}", 0, len(prompts))
        results = self.backend.generate(prompts, 1, self._sampling(c.input_max_new_tokens))
        self.progress(f"inputs {kind}", len(prompts), len(prompts))
        for cand, prompt, result in zip(candidates, prompts, results, strict=True):
            cand.inputs = inputs_from(
                prompt.prefill, result[0].text, ENTRY_POINT, c.inputs_per_task
            )
