"""One TRL trainer per method, built on the bank's data: `build(...) -> Job`."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from selfplay.config import TrainConfig
from selfplay.training import data


@dataclass(slots=True)
class Job:
    trainer: Any
    rows: int
    rollouts: Any = None  # the RolloutReward of a GRPO run
    data: dict[str, Any] = field(default_factory=dict)
    resources: list[Any] = field(default_factory=list)

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


def _dataset(rows: list[dict[str, Any]]) -> Any:
    from datasets import Dataset

    return Dataset.from_list(rows)


def _use_vllm(config: TrainConfig, cuda: bool) -> bool:
    choice = config.grpo.use_vllm
    if choice == "auto":
        return cuda and importlib.util.find_spec("vllm") is not None
    return choice == "yes"


def completion_budget(config: TrainConfig, items: list[Any]) -> int:
    """GRPO's completion length: the config's, else the longest answer budget among the
    training tasks' kinds (a literal needs a few dozen tokens, a program hundreds)."""
    from selfplay import kinds

    if config.grpo.max_completion_length is not None:
        return config.grpo.max_completion_length
    return max(kinds.get(k).answer_tokens for k in {i.task.kind for i in items})


# The warm-up attempts this many times the tasks GRPO can pick in `max_steps` (at least
# WARMUP_FLOOR): enough for the scheduler to choose among, not the whole bank (a warm-up of
# every task of a 400-task bank took 11 minutes before a one-step run).
WARMUP_CHOICE = 4
WARMUP_FLOOR = 16


def warmup_size(config: TrainConfig) -> int:
    """How many untried tasks GRPO's warm-up attempts: `WARMUP_CHOICE` times the prompts
    `max_steps` steps can pick. The scheduler chooses among tasks with a record; the rest
    get theirs from rollouts if they are ever picked."""
    g = config.grpo
    prompts = max(1, config.batch_size * config.gradient_accumulation_steps // g.num_generations)
    return max(WARMUP_FLOOR, WARMUP_CHOICE * prompts * config.max_steps)


def _warm_up(bank, config, items, line, verifier, cuda, progress) -> dict[str, Any]:
    """Attempts at a sample of the training tasks the policy's line never tried
    (`selfplay.solver.warmup`, `warmup_size` of them, drawn with the run's seed), made by the
    starting model before the trainer loads it, so the first pick is informed."""
    from selfplay.backends import make_backend
    from selfplay.backends.base import engine_name
    from selfplay.backends.models import model_label
    from selfplay.config import SolverConfig
    from selfplay.solver import Solver
    from selfplay.solver.warmup import blind, warm_up

    g = config.grpo
    tasks = [i.task for i in items]
    untried = blind(bank, (t.id for t in tasks), line) if g.warmup_samples else []
    if not untried:
        return {"warmed": 0}
    size = warmup_size(config)
    skipped = max(0, len(untried) - size)
    if skipped:
        import random

        untried = random.Random(config.seed).sample(untried, size)
    budget = completion_budget(config, items)
    solver_config = SolverConfig(
        samples=g.warmup_samples,
        temperature=g.temperature,
        max_new_tokens=max(budget, 8),
        literal_max_new_tokens=max(budget, 4),
    )
    # The warm-up is plain generation: vLLM where it runs (its CPU build too), else
    # transformers, whatever GRPO's own rollouts use.
    backend_name = "vllm" if _use_vllm(config, cuda) else config.generation_backend
    with make_backend(backend_name, config.model) as backend:
        solver = Solver(backend, verifier, solver_config, name=model_label(config.model),
                        seed=config.seed,
                        progress=lambda phase, done, total: progress(f"warm-up {phase}", done,
                                                                     total))  # fmt: skip
        report = warm_up(bank, solver, tasks, solvers=line, untried=untried)
        engine = engine_name(backend)
    return {k: getattr(report, k) for k in ("warmed", "attempts", "solved_some", "seconds")} | {
        "engine": engine,
        "not_warmed": skipped,
    }


def _grpo(bank, config, base, model_id, common, peft, exclude, cuda, progress) -> Job:
    from trl import GRPOConfig, GRPOTrainer

    from curricula import make_scheduler
    from selfplay.backends.models import model_label
    from selfplay.training.rollouts import CurriculumSampler, RolloutReward
    from selfplay.verifier.factory import make_verifier

    items = data.solver_items(bank, config, exclude)
    rows = data.grpo_rows(bank, items)
    task_ids = [row["task_id"] for row in rows]
    # Whose attempts describe the policy: itself and the line of models it starts from.
    line = [model_id, *bank.lineage(model_label(config.model))]
    scheduler = make_scheduler(
        config.grpo.scheduler, seed=config.seed, **config.grpo.scheduler_options
    )
    verifier = make_verifier(config.verifier_workers, config.verifier_timeout_s)
    warm = _warm_up(bank, config, items, line, verifier, cuda, progress)
    graph = None
    if config.grpo.scheduler != "uniform":
        from curricula.inspect import bank_graph

        graph = bank_graph(bank, solver=line)[1].graph
    rounds = [r["id"] for r in bank.rounds()]
    reward = RolloutReward(bank, model_id, verifier, step=max(rounds, default=0))
    g = config.grpo
    args = GRPOConfig(
        **common,
        num_generations=g.num_generations,
        max_completion_length=completion_budget(config, items),
        temperature=g.temperature,
        beta=g.beta,
        use_vllm=_use_vllm(config, cuda),
        vllm_mode="colocate",
        # A resumed run draws new batches from the scheduler instead of replaying the
        # sampler up to the checkpoint (which would ask the scheduler for every batch again).
        ignore_data_skip=True,
        log_completions=False,
    )

    class CurriculumGRPOTrainer(GRPOTrainer):
        def _get_train_sampler(self, dataset=None):
            a = self.args
            self.curriculum = CurriculumSampler(
                bank,
                task_ids,
                scheduler,
                prompts_per_batch=a.generation_batch_size // self.num_generations,
                num_generations=self.num_generations,
                repeat_count=self.num_iterations * a.steps_per_generation,
                batches=a.max_steps,
                graph=graph,
                solvers=line,
            )
            return self.curriculum

    trainer = CurriculumGRPOTrainer(
        model=base,
        reward_funcs=[reward],
        args=args,
        train_dataset=_dataset(rows),
        peft_config=peft,
    )
    return Job(
        trainer,
        len(rows),
        rollouts=reward,
        data={"tasks": len(rows), "scheduler": g.scheduler, "warmup": warm},
        resources=[verifier],
    )


def _sft(bank, config, base, model_id, common, peft, exclude) -> Job:
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(**common, max_length=config.max_length)
    if config.role == "proposer":
        rows = data.proposer_sft_rows(bank)
        trainer = SFTTrainer(model=base, args=args, train_dataset=_dataset(rows), peft_config=peft)
        tasks = len({r["task_id"] for r in rows})
        return Job(trainer, len(rows), data={"tasks": tasks, "role": "proposer"})
    items = data.solver_items(bank, config, exclude)
    rows = data.sft_rows(bank, items, references=config.data.references)
    trainer = SFTTrainer(model=base, args=args, train_dataset=_dataset(rows), peft_config=peft)
    origins = {o: sum(r["origin"] == o for r in rows) for o in ("reference", "attempt")}
    return Job(trainer, len(rows), data={"tasks": len(items), **origins})


def _dpo(bank, config, base, model_id, common, peft, exclude, gains) -> Job:
    from trl import DPOConfig, DPOTrainer

    if config.role == "proposer":
        rows = data.proposer_rows(
            bank, config.dpo.max_pairs_per_task, config.proposer_reward, gains
        )
    else:
        items = data.solver_items(bank, config, exclude)
        rows = data.dpo_rows(bank, items, config.dpo.max_pairs_per_task)
    args = DPOConfig(**common, max_length=config.max_length, beta=config.dpo.beta)
    trainer = DPOTrainer(model=base, args=args, train_dataset=_dataset(rows), peft_config=peft)
    return Job(trainer, len(rows), data={"pairs": len(rows), "role": config.role})


def build(bank, config, base, model_id, common, peft, exclude, gains, cuda, progress) -> Job:
    if config.method == "grpo":
        return _grpo(bank, config, base, model_id, common, peft, exclude, cuda, progress)
    if config.method == "sft":
        return _sft(bank, config, base, model_id, common, peft, exclude)
    return _dpo(bank, config, base, model_id, common, peft, exclude, gains)
