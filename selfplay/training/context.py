"""What a training method is given (`TrainContext`) and what it gives back (`Job`, `Trained`).

A method is a module with one function, `build(ctx: TrainContext) -> Job`, registered by name
in `selfplay.methods`. `build` reads what the method trains on; a bank with nothing for it
raises `TrainDataError` there, before the model is recorded. `train` then records the model,
calls `job.run(ctx)`, and once the result is known `job.save(ctx.out)` writes the model
directory. What surrounds them is `train`'s, the same for every method: the output
directory's checks, resuming, removing `checkpoints/` once the model is saved, the marker
that says the directory is complete, and the bank's record of the finished model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from selfplay.config import TrainConfig
    from task_bank.store import Bank


class TrainError(RuntimeError):
    """Training that cannot start or finish; the message is one sentence."""


@dataclass(slots=True)
class TrainContext:
    """One training run as a method sees it."""

    bank: Bank
    config: TrainConfig
    out: Path  # the model directory being written; TRL checkpoints go to out/checkpoints
    base: str  # the starting model's local directory
    model_id: str  # the trained model's id in the bank (its rollouts are attempts by it)
    # The TRL training arguments every method shares (steps, batch, precision, checkpoints).
    common: dict[str, Any]
    peft: Any  # peft's LoraConfig, None to train every weight
    exclude: set[str]  # task ids held out: never trained on
    proposer_gains: dict[int, float] | None  # round -> solver gain (proposer dpo's reward)
    cuda: bool  # training on a GPU
    # progress(phase, done, total, note=None): what the run is doing, for the bars.
    progress: Callable[..., None]
    resume: bool  # continuing an unfinished run in `out`
    checkpoint: Path | None = None  # the TRL checkpoint a resumed run continues from

    def verifier(self) -> Any:
        """The verifier that grades this run's rollouts or samples, as the config's
        `verifier:` section sets it (the same section as a run's): the same settings for
        every method, so that training grades as the run and the rewards do."""
        from selfplay.verifier.factory import configured_verifier

        return configured_verifier(self.config.verifier)


@dataclass(slots=True)
class Trained:
    """What a job's run did: the result's figures and the data of the model's record."""

    steps: int
    rows: int
    data: dict[str, Any] = field(default_factory=dict)  # into the bank's record, with rows
    log: list[dict[str, Any]] = field(default_factory=list)
    rollouts: int = 0  # attempts in the bank made by the trained model while it trained
    dropped_rollouts: int = 0  # rollouts of steps a resumed run does again
    resumed_from: int | None = None  # the step a resumed run continued from
    overhead: dict[str, float] = field(default_factory=dict)


class Job(Protocol):
    """A method's run, its data read: train, then write the model into a directory."""

    def run(self, ctx: TrainContext) -> Trained: ...

    def save(self, out: Path) -> None:
        """The model directory's files (weights, tokenizer), all but `train`'s marker."""
        ...
