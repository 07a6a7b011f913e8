"""`TrainSolver` and `TrainProposer`: a loop iteration's training steps.

The solver is trained on the bank (GRPO with the curriculum, SFT or DPO), never on the tasks
the loop holds out for evaluation; the proposer role is then trained, starting from the
solver's checkpoint (one model plays both roles, as in Absolute Zero): with DPO on its own
proposals (skipped, saying why, while the bank holds no pair), or with `proposer.method:
grpo`, on-policy RL whose solver is that checkpoint. Both resume from their last checkpoint
after a kill.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from selfplay.engine.runner import Context


@dataclass(slots=True)
class TrainSolver:
    """Train the iteration's model as the solver."""

    name: ClassVar[str] = "train.solver"

    def run(self, ctx: Context) -> dict[str, Any]:
        from selfplay.training import train

        loop = ctx.owner
        # The loop's own held-out split (frozen at its start) is what training skips.
        data = loop.config.solver.data.model_copy(update={"held_out_fraction": 0.0})
        config = loop.config.solver.model_copy(
            update={"model": loop.model_at(ctx.id), "data": data}
        )
        out = loop.models_dir / f"iter-{ctx.id}-solver"
        result = train(loop.bank, config, out, resume=True, exclude=set(loop.held_out()),
                       progress=ctx.within("solver"))  # fmt: skip
        return result.to_dict()


@dataclass(slots=True)
class TrainProposer:
    """Train the solver's checkpoint as the proposer (DPO on its own proposals, or RL on
    the learnability of what it writes, against that checkpoint as the solver)."""

    name: ClassVar[str] = "train.proposer"

    def run(self, ctx: Context) -> dict[str, Any]:
        from selfplay.training import TrainDataError, train

        loop = ctx.owner
        p = loop.config.proposer
        update = {"model": ctx.done(TrainSolver.name)["path"], "method": p.method,
                  "role": "proposer", "max_steps": p.max_steps, "proposer_reward": p.reward,
                  "proposer_grpo": p.grpo}  # fmt: skip
        if p.learning_rate is not None:
            update["learning_rate"] = p.learning_rate
        config = loop.config.solver.model_copy(update=update)
        try:
            # The held-out tasks are never shown to the proposer as references either.
            result = train(loop.bank, config, loop.models_dir / f"iter-{ctx.id}", resume=True,
                           exclude=set(loop.held_out()), proposer_gains=loop.gains(),
                           progress=ctx.within("proposer"))  # fmt: skip
        except TrainDataError as e:
            return {"skipped": str(e)}
        return result.to_dict()


def trained_model(ctx: Context) -> str:
    """The model an iteration ends with: the proposer's training, else the solver's, else
    (nothing trained, as in iteration 0) the one it started from."""
    for name in (TrainProposer.name, TrainSolver.name):
        report = ctx.done(name)
        if report and "path" in report:
            return report["path"]
    return ctx.owner.model_at(ctx.id)
