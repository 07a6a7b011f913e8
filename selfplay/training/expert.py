"""Expert iteration (ReST-EM, RAFT): the model learns from its own verified attempts.

Each of `ei.iterations` iterations:
1. the scheduler (`ei.scheduler`) picks `ei.tasks` of the training tasks from the bank's
   record of the policy (its own attempts and its line of models');
2. the current model samples `ei.samples` answers to each (the generation budget of an
   iteration is `tasks x samples` answers, whatever the scheduler);
3. the sandbox grades them, as every attempt is graded (`Solver.attempt`: an answer its token
   budget cut off is a failure), and the attempts go to the bank under the run's model id, so
   the next pick knows them;
4. SFT (TRL) on the passing ones, one row per task and distinct answer, continuing from the
   current model; the result is the next iteration's model.

Only the model's own attempts become rows: a sandbox-computed answer (a task's reference) is
never one. Training on those is the `sft` method with `data.references: true`, a separate arm.
An iteration in which nothing passed trains nothing and the model stays as it was.

Each finished iteration's model waits in `<out>/checkpoints/iter-<i>` with its record, so
`--resume` continues after the last finished iteration; the last one becomes `<out>`.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfplay import kinds
from selfplay.kinds.fences import as_response
from selfplay.training.context import TrainContext, Trained, TrainError
from selfplay.training.data import solver_items
from selfplay.training.trl_job import progress_callback

if TYPE_CHECKING:
    from selfplay.config import TrainConfig
    from task_bank.store import Attempt

DONE = "iteration.json"


@dataclass(slots=True)
class Iteration:
    """What one iteration did: picked, sampled, passed, trained on."""

    iteration: int
    picked: list[str] = field(default_factory=list)
    sampled: int = 0
    passed: int = 0
    truncated: int = 0
    rows: int = 0
    steps: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    loss: list[float] = field(default_factory=list)

    @property
    def passing_per_1000(self) -> float:
        """Passing answers per 1,000 sampled: what the scheduler's picks bought."""
        return round(1000 * self.passed / self.sampled, 1) if self.sampled else 0.0


def attempt_rows(tasks: dict[str, Any], attempts: list[Attempt]) -> list[dict[str, Any]]:
    """SFT rows from passing attempts: one per task and distinct answer, the prompt the
    solver saw and the answer as the model wrote it (the loss falls on the answer only)."""
    rows, seen = [], set()
    for a in attempts:
        if not a.passed:
            continue
        response = as_response(a.answer)
        if (a.task_id, response) in seen:
            continue
        seen.add((a.task_id, response))
        task = tasks[a.task_id]
        rows.append(
            {
                "prompt": kinds.chat(task),
                "completion": [{"role": "assistant", "content": response}],
                "task_id": a.task_id,
                "origin": "attempt",
            }
        )
    return rows


def _pick(bank, scheduler, ids: list[str], k: int, line: list[str], graph) -> list[str]:
    stats = bank.solve_stats(line)
    stats = stats[stats.index.isin(set(ids))]
    return list(scheduler.select(stats, min(k, len(stats)), graph=graph))


def _sample(bank, config: TrainConfig, model: str, tasks: list[Any], model_id: str, verifier,
            step: int, progress) -> tuple[list[Attempt], str]:  # fmt: skip
    from selfplay.backends import make_backend
    from selfplay.backends.base import engine_name
    from selfplay.config import SolverConfig
    from selfplay.solver import Solver

    e = config.ei
    budget = e.max_new_tokens
    solver_config = SolverConfig(
        samples=e.samples,
        temperature=e.temperature,
        **({"max_new_tokens": budget, "literal_max_new_tokens": budget} if budget else {}),
    )
    with make_backend(config.generation_backend, model) as backend:
        solver = Solver(backend, verifier, solver_config, name=model_id,
                        seed=config.seed + step, progress=progress)  # fmt: skip
        report = solver.attempt(tasks, step=step)
        engine = engine_name(backend)
    bank.add_attempts(report.attempts)
    return report.attempts, engine


@dataclass(slots=True)
class ExpertJob:
    """Expert iteration's run: its iterations, then the last trained model moved to `out`;
    no `adapter/` (each iteration's adapter is folded into the model the next one starts
    from)."""

    model: str | None = None  # the last trained model's directory, once run

    def run(self, ctx: TrainContext) -> Trained:
        model, iterations, info = iterate(ctx)
        if model == ctx.base:
            raise TrainError(
                f"no answer passed in {len(iterations)} iteration(s) of expert iteration, so "
                "there was nothing to train on; pick easier tasks (data filter) or sample more "
                "(ei.samples)"
            )
        self.model = model
        return Trained(
            steps=sum(it.steps for it in iterations),
            rows=sum(it.rows for it in iterations),
            data=info,
            log=info["iterations"],
            rollouts=sum(it.sampled for it in iterations),
        )

    def save(self, out: Path) -> None:
        for path in Path(self.model).iterdir():
            if path.name != DONE:
                shutil.move(str(path), out / path.name)


def build(ctx: TrainContext) -> ExpertJob:
    solver_items(ctx.bank, ctx.config, ctx.exclude)  # nothing to train on: one sentence, no record
    return ExpertJob()


def iterate(ctx: TrainContext) -> tuple[Any, list[Iteration], dict[str, Any]]:
    """Run the iterations; returns (the last trained model's directory, `ctx.base` when none
    trained; the iterations; data for the model record)."""
    from curricula import make_scheduler

    bank, config, progress, model_id = ctx.bank, ctx.config, ctx.progress, ctx.model_id
    e = config.ei
    items = solver_items(bank, config, ctx.exclude)
    tasks = {i.task.id: i.task for i in items}
    ids = list(tasks)
    # Whose attempts describe the policy: itself and the line of models it starts from.
    line = list(dict.fromkeys([model_id, *bank.lineage(_label(config.model))]))
    scheduler = make_scheduler(e.scheduler, seed=config.seed, **e.scheduler_options)
    work = ctx.out / "checkpoints"
    if not ctx.resume:  # the iterations of an earlier run, never the run's recorded config
        for old in work.glob("iter-*"):
            shutil.rmtree(old, ignore_errors=True)
    done: list[Iteration] = []
    model, engine = ctx.base, None
    with ctx.verifier() as verifier:
        for i in range(1, e.iterations + 1):
            here = work / f"iter-{i}"
            record = _finished(here)
            if record is not None:  # resumed: this iteration is done
                done.append(Iteration(**record))
                model = str(here) if record["rows"] else model
                continue
            it = Iteration(i)
            started = time.perf_counter()
            graph = None
            if e.scheduler != "uniform":
                from curricula.inspect import bank_graph

                graph = bank_graph(bank, solver=line)[1].graph
            it.picked = _pick(bank, scheduler, ids, e.tasks, line, graph)
            picked = [tasks[t] for t in it.picked]
            it.seconds["pick"] = round(time.perf_counter() - started, 2)
            started = time.perf_counter()
            attempts, engine = _sample(bank, config, model, picked, model_id, verifier, i,
                                       lambda phase, d, t: progress(phase, d, t))  # fmt: skip
            it.seconds["sample"] = round(time.perf_counter() - started, 2)
            it.sampled = len(attempts)
            it.passed = sum(a.passed for a in attempts)
            it.truncated = sum(a.status == "truncated" for a in attempts)
            rows = attempt_rows(tasks, attempts)
            it.rows = len(rows)
            if rows:
                started = time.perf_counter()
                log: list[dict[str, Any]] = []
                trainer = _sft(config, model, rows,
                               ctx.common | {"output_dir": str(here / "run")},
                               ctx.peft)  # fmt: skip
                trainer.add_callback(progress_callback(progress, log))
                trainer.train()
                it.steps = trainer.state.global_step
                it.loss = [round(x["loss"], 4) for x in log if "loss" in x]
                _save_iteration(trainer, here)
                model = str(here)
                it.seconds["train"] = round(time.perf_counter() - started, 2)
            else:
                here.mkdir(parents=True, exist_ok=True)
            (here / DONE).write_text(json.dumps(_as_record(it)), encoding="utf-8")
            done.append(it)
    data = {
        "iterations": [_as_record(it) | {"passing_per_1000": it.passing_per_1000} for it in done],
        "scheduler": e.scheduler,
        "engine": engine,
    }
    return model, done, data


def _label(spec: str) -> str:
    from selfplay.backends.models import model_label

    return model_label(spec)


def _sft(config: TrainConfig, model: str, rows: list[dict[str, Any]], common: dict[str, Any],
         peft: Any) -> Any:  # fmt: skip
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(**common, max_length=config.max_length)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows),
                         peft_config=peft)  # fmt: skip
    trainer.remove_callback(PrinterCallback)
    return trainer


def _save_iteration(trainer: Any, here: Path) -> None:
    """The merged model and tokenizer of one iteration: the next one starts from them."""
    model = trainer.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(here)
    trainer.processing_class.save_pretrained(here)
    shutil.rmtree(here / "run", ignore_errors=True)


def _finished(here: Path) -> dict[str, Any] | None:
    try:
        return json.loads((here / DONE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _as_record(it: Iteration) -> dict[str, Any]:
    return asdict(it)
