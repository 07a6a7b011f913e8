"""`method: grpo`: TRL's GRPO with the curriculum in the loop (the solver); the proposer's
RL is `selfplay.training.proposer_rl`.

A scheduler picks each batch's tasks from the bank as training reaches it
(`CurriculumGRPOTrainer`), and every rollout is graded in the sandbox and written to the bank
as an attempt by the model being trained (`selfplay.training.rollouts`). Before the first
step the starting model warms up on tasks its line never tried (`selfplay.training.warmup`).
TRL is imported here, at the top: `selfplay.methods` loads this module only when the method
is chosen.
"""

from __future__ import annotations

from typing import Any

from trl import GRPOConfig, GRPOTrainer

from curricula import make_scheduler
from selfplay.backends.models import model_label
from selfplay.training import data
from selfplay.training.context import TrainContext
from selfplay.training.rollouts import CurriculumSampler, RolloutReward
from selfplay.training.trl_job import TrlJob, dataset
from selfplay.training.warmup import completion_budget, use_vllm, warm_up


class CurriculumGRPOTrainer(GRPOTrainer):
    """TRL's GRPO trainer whose prompts a curriculum scheduler picks, batch by batch, from
    the bank's counters at that moment (`CurriculumSampler`) instead of a shuffled dataset.

    `task_ids` are the training dataset's task ids in row order; `solvers` is the line of
    models whose attempts describe the policy; `graph` is the difficulty graph a scheduler
    other than uniform reads."""

    def __init__(self, *args: Any, bank: Any, task_ids: list[str], scheduler: Any,
                 graph: Any = None, solvers: list[str] | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        self.picking = {"bank": bank, "task_ids": task_ids, "scheduler": scheduler,
                        "graph": graph, "solvers": solvers}  # fmt: skip
        self.curriculum: CurriculumSampler | None = None  # made when training starts
        super().__init__(*args, **kwargs)

    def _get_train_sampler(self, dataset=None):
        a = self.args
        self.curriculum = CurriculumSampler(
            **self.picking,
            prompts_per_batch=a.generation_batch_size // self.num_generations,
            num_generations=self.num_generations,
            repeat_count=self.num_iterations * a.steps_per_generation,
            batches=a.max_steps,
        )
        return self.curriculum


def build(ctx: TrainContext) -> Any:
    if ctx.config.role == "proposer":  # on-policy through selfplay's engine, not TRL's
        from selfplay.training import proposer_rl

        return proposer_rl.build(ctx)
    bank, config = ctx.bank, ctx.config
    items = data.solver_items(bank, config, ctx.exclude)
    rows = data.grpo_rows(bank, items)
    # Whose attempts describe the policy: itself and the line of models it starts from.
    line = [ctx.model_id, *bank.lineage(model_label(config.model))]
    g = config.grpo
    scheduler = make_scheduler(g.scheduler, seed=config.seed, **g.scheduler_options)
    verifier = ctx.verifier()
    warm = warm_up(ctx, items, line, verifier)
    graph = None
    if g.scheduler != "uniform":
        from curricula.inspect import bank_graph

        graph = bank_graph(bank, solver=line)[1].graph
    rounds = [r["id"] for r in bank.rounds()]
    reward = RolloutReward(bank, ctx.model_id, verifier, step=max(rounds, default=0))
    args = GRPOConfig(
        **ctx.common,
        num_generations=g.num_generations,
        max_completion_length=completion_budget(config, items),
        temperature=g.temperature,
        beta=g.beta,
        use_vllm=use_vllm(config, ctx.cuda),
        vllm_mode="colocate",
        # A resumed run draws new batches from the scheduler instead of replaying the
        # sampler up to the checkpoint (which would ask the scheduler for every batch again).
        ignore_data_skip=True,
        log_completions=False,
    )
    trainer = CurriculumGRPOTrainer(
        model=ctx.base,
        reward_funcs=[reward],
        args=args,
        train_dataset=dataset(rows),
        peft_config=ctx.peft,
        bank=bank,
        task_ids=[row["task_id"] for row in rows],
        scheduler=scheduler,
        graph=graph,
        solvers=line,
    )
    return TrlJob(
        trainer,
        len(rows),
        rollouts=reward,
        data={"tasks": len(rows), "scheduler": g.scheduler, "warmup": warm},
        resources=[verifier],
    )
