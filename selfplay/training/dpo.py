"""`method: dpo`: TRL's DPO on pairs of a passing and a failing attempt at one task (solver)
or of the proposer's own programs for one prompt, the better one chosen (proposer)."""

from __future__ import annotations

from trl import DPOConfig, DPOTrainer

from selfplay.training import data
from selfplay.training.context import TrainContext
from selfplay.training.trl_job import TrlJob, dataset


def build(ctx: TrainContext) -> TrlJob:
    config = ctx.config
    if config.role == "proposer":
        rows = data.proposer_rows(
            ctx.bank, config.dpo.max_pairs_per_task, config.proposer_reward, ctx.proposer_gains
        )
    else:
        items = data.solver_items(ctx.bank, config, ctx.exclude)
        rows = data.dpo_rows(ctx.bank, items, config.dpo.max_pairs_per_task)
    args = DPOConfig(**ctx.common, max_length=config.max_length, beta=config.dpo.beta)
    trainer = DPOTrainer(model=ctx.base, args=args, train_dataset=dataset(rows),
                         peft_config=ctx.peft)  # fmt: skip
    return TrlJob(trainer, len(rows), data={"pairs": len(rows), "role": config.role})
