"""`HeldOut` and `Evaluate`: what a loop measures its models on, and the measuring.

The held-out split is drawn once, when the loop starts (iteration 0's `held_out` step), and
never trained on. Every iteration, and the starting model as iteration 0, is evaluated with
pass@1 and its 95% interval on that split and on HumanEval (`humaneval_limit` problems; all
of them on a GPU by default). Killed mid-evaluation, the step starts over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from selfplay.engine.steps.train import trained_model

if TYPE_CHECKING:
    from selfplay.engine.runner import Context


@dataclass(slots=True)
class HeldOut:
    """Draw the tasks the loop evaluates on and never trains on."""

    name: ClassVar[str] = "held_out"

    def run(self, ctx: Context) -> dict[str, Any]:
        from selfplay.export.select import ExportOptions, select

        e = ctx.owner.config.eval
        options = ExportOptions(split="random", test_fraction=e.held_out_fraction, seed=e.seed,
                                split_by=e.held_out_by)  # fmt: skip
        ids = [i.task.id for i in select(ctx.owner.bank, options).items if i.split == "test"]
        return {"tasks": ids}


@dataclass(slots=True)
class Evaluate:
    """pass@1 of the iteration's model on the held-out split and on HumanEval."""

    name: ClassVar[str] = "eval"

    def run(self, ctx: Context) -> dict[str, Any]:
        from selfplay.backends import Sampling
        from selfplay.backends.models import model_label
        from selfplay.evaluate import STOP, evaluate_bank, evaluate_humaneval
        from selfplay.export.select import ExportOptions, select

        loop = ctx.owner
        model = trained_model(ctx)
        e = loop.config.eval
        run = loop.config.run.model_copy(deep=True)
        run.model.spec = model
        backend = loop.make_backend(run)
        report: dict[str, Any] = {"model": model, "bank_tasks": loop.bank.count()}
        progress = ctx.within("eval")
        try:
            held_out = set(loop.held_out())
            items = [i for i in select(loop.bank, ExportOptions(split="none")).items
                     if i.task.id in held_out]  # fmt: skip
            sampling = Sampling(temperature=0.0, max_new_tokens=e.max_new_tokens)
            if items:
                bank_eval = evaluate_bank(backend, loop.verifier, items, sampling=sampling,
                                          benchmark="held_out",
                                          progress=lambda d, t: progress("held-out", d, t))  # fmt: skip
                report["held_out"] = _with_solved(bank_eval)
            limit = e.humaneval_limit if e.humaneval_limit is not None else _humaneval_default()
            if limit:
                he = evaluate_humaneval(
                    backend, loop.verifier, limit=limit,
                    progress=lambda d, t: progress("humaneval", d, t),
                    sampling=Sampling(temperature=0.0, max_new_tokens=e.max_new_tokens, stop=STOP),
                )  # fmt: skip
                report["humaneval"] = _with_solved(he)
        finally:
            backend.close()
        label = model_label(model)
        if loop.bank.model(label) is not None:
            loop.bank.set_evaluation(label, {k: v for k, v in report.items() if k != "model"})
        return report


def _with_solved(report: Any) -> dict[str, Any]:
    """The report with the problems solved by name, so two iterations compare paired."""
    solved = sorted({r["task_id"] for r in report.rows if r["passed"]})
    return report.to_dict() | {"solved": solved}


def _humaneval_default() -> int:
    """All 164 problems on a GPU; 16 on a CPU, where each takes seconds to answer."""
    import torch

    return 164 if torch.cuda.is_available() else 16
