"""`Proposer.propose`: the proposer model writes new tasks of one kind; admission judges them.

One proposal takes two generations, both with a prefilled code fence: first a program
`f` (shown K reference tasks from the bank), then, in a separate prompt that shows only
that program, a few calls of `f` with literal arguments. A small model writes a program
readily but rarely adds the input block in the same answer; asked separately, it does.
`write` makes each generation one call for every kind of the round (a batch engine's step
costs about the same for 3 sequences as for 48); `judge` admits one kind's draft.
The proposer only generates and parses: every check, both runs of the program and the
write are admission's (`selfplay.admission`), and outputs and tests are always computed
by the verifier, never taken from the model.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from selfplay import kinds
from selfplay.admission import Admission, Candidate
from selfplay.backends.base import Backend, Completion, Prompt, Sampling, engine_name
from selfplay.backends.models import model_label
from selfplay.config import ProposerConfig
from selfplay.prompts import propose, render
from selfplay.proposer.parse import inputs_from, program_from
from selfplay.proposer.repair import (
    DOCSTRING_END,
    docstring_from,
    signature,
    trim,
    with_docstring,
)
from selfplay.proposer.synthesis import synthesize
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
    repaired: Counter = field(default_factory=Counter)  # programs mended once, by mend
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
            "repaired": dict(self.repaired),
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class Turn:
    """One generation as the engine made it: the prompt and the completion (with its
    token ids where the engine gives them), for an on-policy learner."""

    prompt: Prompt
    completion: Completion


@dataclass(slots=True)
class Draft:
    """One prompt's programs as written, before admission: the candidates, each with the
    prompt and assistant turn that produced it, and its share of the generation's cost."""

    kind: str
    round_id: int | None
    first: int = 0  # the number of its first proposal
    candidates: list[Candidate] = field(default_factory=list)
    written: list[tuple[list[dict[str, str]], str]] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    references: list[Task] = field(default_factory=list)
    # Each candidate's program generation, and its inputs generation where one was asked
    # (by candidate index): what the proposer's RL scores (`selfplay.training.proposer_rl`).
    turns: list[Turn] = field(default_factory=list)
    input_turns: dict[int, Turn] = field(default_factory=dict)


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
        """Sample `count()` tasks of `kind` and admit the ones that pass every check."""
        return self.judge(self.write({kind: references}, round_id)[kind])

    def write(
        self,
        requests: dict[str, list[Task]],
        round_id: int | None,
        *,
        first: dict[str, int] | None = None,
    ) -> dict[str, Draft]:
        """Every kind's programs in one generation call, then every surviving program's
        inputs in a second: a batch engine's step costs about the same for 3 sequences as
        for 48 (docs/models.md), so four kinds asked one after another cost four times the
        steps of four asked together. Nothing is admitted here; `judge` does that per kind.
        `first` numbers each kind's proposals on from an earlier wave's."""
        first = first or {}
        drafts = self.write_groups(
            list(requests.items()), round_id, first=[first.get(k, 0) for k in requests]
        )
        return {d.kind: d for d in drafts}

    def write_groups(
        self,
        groups: list[tuple[str, list[Task]]],
        round_id: int | None,
        *,
        first: list[int] | None = None,
    ) -> list[Draft]:
        """`write` for any number of prompts, several of one kind among them (a group of
        `count()` programs each, as group-relative RL compares them): one draft a prompt,
        all generated in the same two calls. A kind's groups are numbered on from each
        other unless `first` gives each group's first number."""
        started, tokens0 = time.perf_counter(), self.backend.stats.tokens
        count = self.count()
        if first is None:
            seen: Counter = Counter()
            first = []
            for kind, _ in groups:
                first.append(count * seen[kind])
                seen[kind] += 1
        drafts = self._programs(groups, round_id, first, count)
        self._inputs(drafts)
        # A shared generation's time and tokens are charged to each draft by its share of
        # the sequences, so the per-kind step reports still add up to the round's.
        total = sum(len(d.candidates) for d in drafts) or 1
        seconds = time.perf_counter() - started
        tokens = self.backend.stats.tokens - tokens0
        for d in drafts:
            d.seconds = seconds * len(d.candidates) / total
            d.tokens = round(tokens * len(d.candidates) / total)
        return drafts

    def judge(self, draft: Draft) -> ProposalReport:
        """Admission's verdict on one kind's draft: admitted, flagged or rejected by reason,
        each program kept with its prompt and outcome as the proposer's training data."""
        kind, candidates = draft.kind, draft.candidates
        report = ProposalReport(kind, proposed=len(candidates), tokens=draft.tokens)
        started = time.perf_counter()
        admitted = self.admission.admit(
            candidates, progress=lambda phase, d, t: self.progress(f"{phase} {kind}", d, t)
        )
        flagged = set(admitted.flagged_ids)
        report.admitted_ids = [i for i in admitted.admitted_ids if i not in flagged]
        report.flagged = len(flagged)
        report.rejected = admitted.rejected
        report.repaired = Counter(
            m for c in candidates if (m := c.draft.get("metadata", {}).get("repaired"))
        )
        model = model_label(self.backend.model)
        pairs = zip(candidates, draft.written, strict=True)
        for index, (cand, (prompt, text)) in enumerate(pairs, start=draft.first):
            outcome = admitted.outcomes.get(cand.item, "unknown")
            task_id = admitted.task_ids.get(cand.item) if outcome == "admitted" else None
            report.proposals.append(
                Proposal(draft.round_id, kind, index, prompt, text, outcome, task_id, model)
            )
        report.seconds = draft.seconds + time.perf_counter() - started
        return report

    def _prompt(self, kind: str, references: list[Task]) -> Prompt:
        shown = "\n\n".join(
            f"Puzzle {i + 1}:\n{_show_reference(t, self.config.reference_chars)}"
            for i, t in enumerate(references)
        )
        return propose(kind, references=shown or "(none yet)", max_lines=self.config.max_lines)

    def _programs(
        self,
        groups: list[tuple[str, list[Task]]],
        round_id: int | None,
        first: list[int],
        count: int,
    ) -> list[Draft]:
        """One candidate per program written (with the assistant turn as the model wrote
        it, prefill included, for proposer training); admission screens each program."""
        prompts = [self._prompt(kind, refs) for kind, refs in groups]
        total = count * len(prompts)
        phase = "propose " + ", ".join(dict.fromkeys(kind for kind, _ in groups))
        self.progress(phase, 0, total)
        results = self.backend.generate(prompts, count, self._sampling(self.config.max_new_tokens))
        self.progress(phase, total, total)
        model = model_label(self.backend.model)
        drafts = []
        for (kind, refs), prompt, start, completions in zip(
            groups, prompts, first, results, strict=True
        ):
            draft = Draft(kind, round_id, start, references=list(refs))
            drafts.append(draft)
            for i, completion in enumerate(completions, start=draft.first):
                draft.written.append((list(prompt.messages), prompt.prefill + completion.text))
                draft.turns.append(Turn(prompt, completion))
                cand = Candidate.proposal(
                    f"{SOURCE}-r{round_id}-{kind}-{i}",
                    kind,
                    program_from(prompt.prefill, completion.text),
                    [],
                    entry_point=ENTRY_POINT,
                    source=SOURCE,
                    tags=["selfplay"],
                    parent_ids=[t.id for t in refs],
                    proposer=model,
                    round_id=round_id,
                    metadata={"proposal": i},
                )
                self.admission.screen(cand)  # no inputs are asked for a program turned away
                if cand.reason is not None and cand.reason.name == "unparseable":
                    self._mend(cand, trim(cand.program, ENTRY_POINT), "trimmed")
                draft.candidates.append(cand)
        return drafts

    def _mend(self, cand: Candidate, program: str | None, how: str) -> None:
        """Screen `cand` again with its program mended; the mend is kept only if it helps."""
        if program is None:
            return
        before = cand.reason.name if cand.reason else None
        cand.program, cand.reason, cand.screened = program, None, False
        after = self.admission.screen(cand)
        if after is None or after.name != before:
            cand.draft.setdefault("metadata", {})["repaired"] = how

    def _inputs(self, drafts: list[Draft]) -> None:
        """The model's calls of each program, then calls built from the program itself
        (`synthesis`): admission keeps those that return (`runs.proposal_outputs`). A
        codegen program without a docstring gets one written in the same call."""
        c = self.config
        owners = {id(x): (d, i) for d in drafts for i, x in enumerate(d.candidates)}
        candidates = [x for d in drafts for x in d.candidates]
        heads = {
            id(x): head
            for x in candidates
            if x.reason is not None
            and x.reason.name == "no_description"
            and (head := signature(x.program, ENTRY_POINT))
        }
        undocumented = [x for x in candidates if id(x) in heads]
        asked = [x for x in candidates if x.alive] + undocumented
        if not asked:
            return
        prompts = [
            render("proposer_inputs", program=(x.program or "").rstrip(), count=c.inputs_per_task)
            for x in asked
        ] + [
            render("proposer_docstring", program=(x.program or "").rstrip(), signature=heads[id(x)])
            for x in undocumented
        ]
        self.progress("inputs", 0, len(prompts))
        sampling = self._sampling(c.input_max_new_tokens)
        sampling = replace(sampling, stop=(*sampling.stop, DOCSTRING_END))
        results = self.backend.generate(prompts, 1, sampling)
        self.progress("inputs", len(prompts), len(prompts))
        for x, result in zip(undocumented, results[len(asked) :], strict=True):
            doc = docstring_from(result[0].text, result[0].finish_reason == "stop")
            if doc is not None:
                self._mend(x, with_docstring(x.program or "", ENTRY_POINT, doc), "docstring")
        for x, prompt, result in zip(asked, prompts, results, strict=False):
            draft, index = owners[id(x)]
            draft.input_turns[index] = Turn(prompt, result[0])
            written = inputs_from(prompt.prefill, result[0].text, ENTRY_POINT, c.inputs_per_task)
            own = synthesize(None, ENTRY_POINT, written)  # the model's, each value once
            x.draft["written_inputs"] = len(own)
            shown = [e["input"] for t in draft.references for e in t.examples]
            x.inputs = synthesize(x.program, ENTRY_POINT, own, shown, c.synthesized_inputs)
