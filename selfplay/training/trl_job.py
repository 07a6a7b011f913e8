"""`TrlJob`: a TRL trainer built on the bank's data, run the same way for every TRL method.

sft, dpo and grpo each build their trainer and hand it over; the job reports progress from
TRL's callbacks, continues from the run's last checkpoint, and saves the merged model with
its LoRA adapter beside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfplay.training.context import TrainContext, Trained
from selfplay.training.lm_head import labelled_positions_only


def dataset(rows: list[dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list(rows)


def progress_callback(progress: Any, log: list[dict[str, Any]], doing: str | None = None) -> Any:
    """Progress of a TRL run; `doing`: what a step spends its time on, said as it starts
    (a GRPO step on long programs generates for minutes, and a bare '0/2' says nothing)."""
    from transformers import TrainerCallback

    class Report(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            progress("train", state.global_step, state.max_steps)  # its clock starts here

        def on_step_begin(self, args, state, control, **kwargs):
            if doing:
                progress("train", state.global_step, state.max_steps,
                         note=f"step {state.global_step + 1}: {doing}")  # fmt: skip

        def on_step_end(self, args, state, control, **kwargs):
            # A step that logs is reported by on_log, with its loss: reported here first, the
            # last step's loss would arrive after the phase had ended, and every other one
            # a line late.
            if not control.should_log:
                progress("train", state.global_step, state.max_steps)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "train_runtime" not in logs:
                log.append({"step": state.global_step, **logs})
                # The figures TRL would print at each logging step ride on the bar instead.
                shown = [f"{k} {logs[k]:.3f}" for k in ("loss", "reward") if k in logs]
                progress("train", state.global_step, state.max_steps,
                         note=", ".join(shown) or None)  # fmt: skip

    return Report()


@dataclass(slots=True)
class TrlJob:
    trainer: Any
    rows: int
    rollouts: Any = None  # the RolloutReward of a GRPO run
    data: dict[str, Any] = field(default_factory=dict)
    resources: list[Any] = field(default_factory=list)  # closed once training ends

    def overhead(self) -> dict[str, float]:
        """Seconds selfplay added to a GRPO run: grading, bank writes, scheduler picks."""
        if self.rollouts is None:
            return {}
        sampler = getattr(self.trainer, "curriculum", None)
        pick = sampler.seconds if sampler is not None else 0.0
        return {k: round(v, 3) for k, v in (self.rollouts.seconds | {"pick": pick}).items()}

    def close(self) -> None:
        for resource in self.resources:
            resource.close()

    def run(self, ctx: TrainContext) -> Trained:
        from transformers.trainer_callback import PrinterCallback

        log: list[dict[str, Any]] = []
        checkpoint = ctx.checkpoint
        self.trainer.remove_callback(PrinterCallback)  # logs reach the result, not stdout
        doing = "generating and grading its rollouts" if self.rollouts is not None else None
        self.trainer.add_callback(progress_callback(ctx.progress, log, doing))
        dropped = 0
        if self.rollouts is not None:
            # The steps after the checkpoint (all of them, killed before the first one) run
            # again; their first rollouts must not count twice.
            since = os.path.getmtime(checkpoint / "trainer_state.json") if checkpoint else 0.0
            dropped = ctx.bank.drop_attempts_since(ctx.model_id, since)
        try:
            with labelled_positions_only():
                self.trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        finally:
            self.close()
        return Trained(
            steps=self.trainer.state.global_step,
            rows=self.rows,
            data=self.data,
            log=log,
            rollouts=ctx.bank.attempt_summary(ctx.model_id)[0] if self.rollouts is not None else 0,
            dropped_rollouts=dropped,
            resumed_from=int(checkpoint.name.rsplit("-", 1)[1]) if checkpoint else None,
            overhead=self.overhead(),
        )

    def save(self, out: Path) -> None:
        """The merged model and tokenizer, the adapter beside them."""
        model = self.trainer.model
        if hasattr(model, "merge_and_unload"):  # a peft model: keep the adapter, fold it in
            model.save_pretrained(out / "adapter")
            model = model.merge_and_unload()
        model.save_pretrained(out)
        self.trainer.processing_class.save_pretrained(out)
