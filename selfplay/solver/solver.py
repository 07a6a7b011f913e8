"""`Solver.attempt`: n sampled attempts per task, extracted per kind, graded by the verifier.

Each attempt becomes a `task_bank.store.Attempt` with the solver reward; each task gets
its pass rate over the n attempts and the proposer's learnability reward from it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from selfplay.backends.base import Backend, Prompt, Sampling
from selfplay.prompts import render
from selfplay.solver.extract import Answer, extract, grading_row, shown_examples
from selfplay.solver.rewards import Learnability, learnability, solver_reward
from task_bank.schema import Task
from task_bank.store import Attempt

Progress = Callable[[str, int, int], None]


class SolverConfig(BaseModel):
    """How the solver samples and how its results become rewards."""

    model_config = ConfigDict(extra="forbid")

    tasks: int = Field(
        1, ge=0, description="bank tasks the curriculum picks per round, besides the new ones"
    )
    samples: int = Field(3, ge=1, description="attempts per task (n); the pass rate is over these")
    temperature: float = Field(0.8, ge=0.0, description="sampling temperature")
    top_p: float = Field(0.95, gt=0.0, le=1.0, description="nucleus sampling threshold")
    max_new_tokens: int = Field(256, ge=8, description="token budget for a program answer")
    literal_max_new_tokens: int = Field(
        48, ge=4, description="token budget for an input/output answer"
    )
    learnability: Learnability = Field(
        "variance",
        description="proposer reward: 'variance' = p(1-p), 'absolute_zero' = 1-p on 0<p<1",
    )


@dataclass(slots=True)
class TaskResult:
    task_id: str
    attempts: int
    successes: int
    pass_rate: float
    learnability: float


@dataclass(slots=True)
class SolveReport:
    attempts: list[Attempt] = field(default_factory=list)
    results: list[TaskResult] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    tokens: int = 0
    seconds: float = 0.0


def solver_prompt(task: Task) -> Prompt:
    """The prompt of `task` for its kind (templates in selfplay/prompts)."""
    ep = task.entry_point or "solution"
    if task.kind == "deduction":
        shown = task.examples[0]
        return render(
            "solver_deduction", program=task.program.rstrip(), call=f"{ep}({shown['input']})"
        )
    if task.kind == "abduction":
        return render(
            "solver_abduction",
            program=task.program.rstrip(),
            entry_point=ep,
            output=task.examples[0]["output"],
        )
    if task.kind == "induction":
        shown, _ = shown_examples(task)
        lines = "\n".join(f"{ep}({e['input']}) == {e['output']}" for e in shown)
        return render(
            "solver_induction", description=task.prompt.strip(), examples=lines, entry_point=ep
        )
    return render("solver_codegen", description=task.prompt.strip(), entry_point=ep)


class Solver:
    """Attempts tasks with a backend and grades the attempts with the verifier."""

    def __init__(
        self,
        backend: Backend,
        verifier: Any,
        config: SolverConfig | None = None,
        *,
        name: str | None = None,
        seed: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.backend = backend
        self.verifier = verifier
        self.config = config or SolverConfig()
        self.name = name or backend.model
        self.seed = seed
        self.progress = progress or (lambda phase, done, total: None)

    def _sampling(self, kind: str) -> Sampling:
        c = self.config
        literal = kind in ("deduction", "abduction")
        return Sampling(
            temperature=c.temperature,
            top_p=c.top_p,
            max_new_tokens=c.literal_max_new_tokens if literal else c.max_new_tokens,
            stop=("```",),
            seed=self.seed,
        )

    def attempt(self, tasks: list[Task], round_id: int | None = None, step: int = 0) -> SolveReport:
        """`samples` attempts at each task, graded; attempts are returned, not stored."""
        report = SolveReport()
        started, tokens0 = time.perf_counter(), self.backend.stats.tokens
        n = self.config.samples
        answers: dict[tuple[int, int], tuple[str, Answer | None]] = {}
        prompts = {i: solver_prompt(t) for i, t in enumerate(tasks)}
        done = 0
        self.progress("solve", 0, len(tasks))
        for kind in dict.fromkeys(t.kind for t in tasks):  # one sampling setting per call
            idx = [i for i, t in enumerate(tasks) if t.kind == kind]
            results = self.backend.generate([prompts[i] for i in idx], n, self._sampling(kind))
            for i, completions in zip(idx, results, strict=True):
                for j, c in enumerate(completions):
                    answer = extract(tasks[i], prompts[i].prefill, c.text)
                    answers[i, j] = (c.text, answer)
            done += len(idx)
            self.progress("solve", done, len(tasks))
        rows, keys = [], []
        for (i, j), (_, answer) in answers.items():
            if answer is None:
                continue
            try:
                rows.append(grading_row(tasks[i], answer, f"{i}.{j}"))
            except (ValueError, SyntaxError, KeyError, IndexError, TypeError):
                continue  # a task whose stored literals do not parse cannot grade anything
            keys.append((i, j))
        self.progress("grade", 0, len(rows))
        verdicts = dict(zip(keys, self.verifier.grade(rows), strict=True)) if rows else {}
        self.progress("grade", len(rows), len(rows))
        for i, task in enumerate(tasks):
            successes = 0
            for j in range(n):
                text, answer = answers[i, j]
                verdict = verdicts.get((i, j))
                status = verdict.status if verdict is not None else "no_answer"
                passed = bool(verdict is not None and verdict.passed)
                successes += passed
                report.statuses[status] += 1
                report.attempts.append(
                    Attempt(
                        task_id=task.id,
                        solver=self.name,
                        answer=answer.text if answer is not None else text[:2000],
                        status=status,
                        passed=passed,
                        reward=solver_reward(passed),
                        round_id=round_id,
                        step=step,
                        signals=list(verdict.signals) if verdict is not None else [],
                    )
                )
            rate = successes / n
            report.results.append(
                TaskResult(
                    task.id, n, successes, rate, learnability(rate, self.config.learnability)
                )
            )
        report.tokens = self.backend.stats.tokens - tokens0
        report.seconds = time.perf_counter() - started
        return report
