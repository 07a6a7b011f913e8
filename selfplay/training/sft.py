"""`method: sft`: TRL's SFT on the bank's verified solutions (solver) or on the proposer's
admitted, learnable programs (proposer)."""

from __future__ import annotations

from trl import SFTConfig, SFTTrainer

from selfplay.training import data
from selfplay.training.context import TrainContext
from selfplay.training.trl_job import TrlJob, dataset


def build(ctx: TrainContext) -> TrlJob:
    config = ctx.config
    args = SFTConfig(**ctx.common, max_length=config.max_length)
    if config.role == "proposer":
        rows = data.proposer_sft_rows(ctx.bank)
        trainer = SFTTrainer(model=ctx.base, args=args, train_dataset=dataset(rows),
                             peft_config=ctx.peft)  # fmt: skip
        tasks = len({r["task_id"] for r in rows})
        return TrlJob(trainer, len(rows), data={"tasks": tasks, "role": "proposer"})
    items = data.solver_items(ctx.bank, config, ctx.exclude)
    rows = data.sft_rows(ctx.bank, items, references=config.data.references)
    trainer = SFTTrainer(model=ctx.base, args=args, train_dataset=dataset(rows),
                         peft_config=ctx.peft)  # fmt: skip
    origins = {o: sum(r["origin"] == o for r in rows) for o in ("reference", "attempt")}
    return TrlJob(trainer, len(rows), data={"tasks": len(items), **origins})
