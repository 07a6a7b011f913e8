"""`Runner`: runs a list of steps for one round or one loop iteration, journaled, resumable.

A self-play round and a `selfplay loop` iteration are each a plain list of steps (as in
datatrove, where a pipeline is a list): a step has a `name` and `run(ctx) -> dict`, and the
dict it returns is its report. The runner runs the steps in order and commits each report to
the bank's step journal (`task_bank.journal`) under the step's name before the next starts;
a step already in the journal is not run again. A process killed anywhere therefore loses the
step in flight at most, and the same command run again continues with it.

A step that is long keeps checkpoints of its own in the same journal (`Context.commit`, under
names of its own, such as a round's `solve.plan`), so that redoing it after a kill redoes
only its unfinished part. The names are the bank's keys: a renamed step would be run again in
a bank begun before the rename.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from selfplay.seeds import step_seed

if TYPE_CHECKING:
    from task_bank.journal import Journal

Progress = Callable[..., None]  # (phase, done, total, note=None)
OnStep = Callable[[int, str, dict[str, Any]], None]  # (id, step, report) once committed


class Step(Protocol):
    """One step of a round or a loop iteration: its journal name and what it does."""

    name: str

    def run(self, ctx: Context) -> dict[str, Any]:
        """Do the step; the returned report is what the journal keeps under `name`."""
        ...


@dataclass(slots=True)
class Context:
    """What a step runs with: the engine running it (`owner`: a `SelfPlay` for a round, a
    `Loop` for an iteration), the round or iteration (`id`), every step of it, its journal,
    and where its progress goes."""

    owner: Any
    id: int
    steps: list[Step]
    journal: Journal
    progress: Progress
    seed_base: int
    on_step: OnStep

    def done(self, name: str) -> dict[str, Any] | None:
        """The committed report of step or checkpoint `name` of this round or iteration."""
        return self.journal.get(self.id, name)

    def commit(self, name: str, report: dict[str, Any]) -> dict[str, Any]:
        """Journal `report` under `name` (a step's report, or a checkpoint inside a step)."""
        self.journal.set(self.id, name, report)
        self.on_step(self.id, name, report)
        return report

    def seed(self, name: str, *parts: int) -> int:
        """The seed of `name` (a step, or a draw inside one) at try or wave `parts`: the same
        each time it runs, and no other step's (`selfplay.seeds`)."""
        return step_seed(self.seed_base, self.journal.scope, self.id, name, *parts)

    def within(self, stage: str) -> Progress:
        """The progress of one stage of the step: its phases are named after the stage."""
        return prefixed(self.progress, stage)


class Runner:
    """Runs step lists on one journal scope ("round" or "loop"); `label` names the bars of a
    round or iteration (`lambda i: f"it{i}"`), unlabelled when None."""

    def __init__(
        self,
        owner: Any,
        journal: Journal,
        *,
        progress: Progress,
        on_step: OnStep | None = None,
        seed: int = 0,
        label: Callable[[int], str] | None = None,
    ) -> None:
        self.owner, self.journal = owner, journal
        self.progress, self.seed, self.label = progress, seed, label
        self.on_step = on_step or (lambda id_, step, report: None)

    def context(self, id_: int, steps: Sequence[Step]) -> Context:
        progress = self.progress if self.label is None else prefixed(self.progress, self.label(id_))
        return Context(self.owner, id_, list(steps), self.journal, progress, self.seed,
                       self.on_step)  # fmt: skip

    def run(self, id_: int, steps: Sequence[Step]) -> Context:
        """Run the steps of round or iteration `id_` that the journal does not hold yet."""
        ctx = self.context(id_, steps)
        for step in ctx.steps:
            if ctx.done(step.name) is None:
                ctx.commit(step.name, step.run(ctx))
        return ctx

    def pending(self, id_: int, steps: Sequence[Step]) -> list[Step]:
        """The steps of round or iteration `id_` that a run would still do, in order."""
        committed = self.journal.all().get(id_, {})
        return [s for s in steps if s.name not in committed]


def prefixed(progress: Progress, prefix: str) -> Progress:
    """`progress` with every phase named `prefix phase`; a note is passed on only when given,
    so a callback that takes none still works."""

    def report(phase: str, done: int, total: int, note: str | None = None) -> None:
        if note is None:
            progress(f"{prefix} {phase}", done, total)
        else:
            progress(f"{prefix} {phase}", done, total, note=note)

    return report
