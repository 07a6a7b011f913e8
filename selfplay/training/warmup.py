"""GRPO's warm-up: pass-rate estimates before the first step, so the first pick is informed.

The starting model attempts a sample of the training tasks its line of models never tried
(`selfplay.solver.warmup`), before the trainer loads it. It generates as GRPO's rollouts
will: the same completion budget (`completion_budget`) and temperature, on vLLM where the
rollouts use it (`use_vllm`) or where the configured engine runs it.
"""

from __future__ import annotations

import importlib.util
import random
from typing import Any

from selfplay.config import TrainConfig
from selfplay.training.context import TrainContext

# The warm-up attempts this many times the tasks GRPO can pick in `max_steps` (at least
# WARMUP_FLOOR): enough for the scheduler to choose among, not the whole bank (a warm-up of
# every task of a 400-task bank took 11 minutes before a one-step run).
WARMUP_CHOICE = 4
WARMUP_FLOOR = 16


def use_vllm(config: TrainConfig, cuda: bool) -> bool:
    """Whether GRPO generates its rollouts with vLLM (TRL's `use_vllm`)."""
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


def warmup_size(config: TrainConfig) -> int:
    """How many untried tasks GRPO's warm-up attempts: `WARMUP_CHOICE` times the prompts
    `max_steps` steps can pick. The scheduler chooses among tasks with a record; the rest
    get theirs from rollouts if they are ever picked."""
    g = config.grpo
    prompts = max(1, config.batch_size * config.gradient_accumulation_steps // g.num_generations)
    return max(WARMUP_FLOOR, WARMUP_CHOICE * prompts * config.max_steps)


def warm_up(ctx: TrainContext, items: list[Any], line: list[str], verifier: Any) -> dict[str, Any]:
    """Attempts at a sample of the training tasks `items` the policy's `line` never tried
    (`warmup_size` of them, drawn with the run's seed), made by the starting model and graded
    by `verifier`; what it did, for the model's record."""
    from selfplay.backends import make_backend
    from selfplay.backends.base import engine_name
    from selfplay.backends.models import model_label
    from selfplay.config import SolverConfig
    from selfplay.solver import Solver
    from selfplay.solver.warmup import blind, warm_up

    bank, config, progress = ctx.bank, ctx.config, ctx.progress
    g = config.grpo
    tasks = [i.task for i in items]
    untried = blind(bank, (t.id for t in tasks), line) if g.warmup_samples else []
    if not untried:
        return {"warmed": 0}
    size = warmup_size(config)
    skipped = max(0, len(untried) - size)
    if skipped:
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
    backend_name = "vllm" if use_vllm(config, ctx.cuda) else config.generation_backend
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
