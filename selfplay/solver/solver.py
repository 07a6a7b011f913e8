"""`Solver.attempt`: n sampled attempts per task, graded the way the exported rewards grade.

A task's prompt is its kind's (`selfplay.kinds`), exactly what `selfplay export` ships, and
each response is scored by `selfplay.rewards.grade_responses`, exactly what the trainers' reward
functions call: a pass rate in the bank is the reward a trainer would have computed. Each
attempt becomes a `task_bank.store.Attempt` with its score; each task gets its pass counts over
the n attempts (the round turns a new task's into the proposer's reward, `learnability`).
One difference from a trainer's reward: an attempt its token budget cut off before it closed
an answer block is a failure here (`truncated`), never graded, so a pass rate and the passing
attempts training learns from never rest on an unfinished answer.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from selfplay import kinds
from selfplay.backends.base import Backend, Completion, Prompt, Sampling
from selfplay.config import SolverConfig
from selfplay.kinds.base import BAD_GROUND_TRUTH
from selfplay.kinds.fences import blocks
from selfplay.rewards import GroundTruth, InvalidGroundTruth, grade_responses
from selfplay.task import Task
from task_bank.store import Attempt

Progress = Callable[[str, int, int], None]
MAX_STORED_RESPONSE = 20_000
# An attempt its token budget cut off before it closed an answer block: a failure whatever
# its open block holds (the first lines of a value or a program are not what the model would
# have finished), so it is never a pass to train on.
TRUNCATED = "truncated"


def cut_short(completion: Completion) -> bool:
    """The budget ended `completion` with no closed, non-empty answer block in it."""
    if completion.finish_reason != "length":
        return False
    return not any(b.closed and b.body.strip() for b in blocks(completion.text))


@dataclass(slots=True)
class TaskResult:
    task_id: str
    attempts: int
    successes: int
    pass_rate: float


@dataclass(slots=True)
class SolveReport:
    attempts: list[Attempt] = field(default_factory=list)
    results: list[TaskResult] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    tokens: int = 0
    seconds: float = 0.0


def solver_prompt(task: Task) -> Prompt:
    """The prompt of `task`: its kind's chat messages, the ones `selfplay export` ships."""
    return Prompt(messages=kinds.get(task.kind).chat(task))


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
        value = kinds.get(kind).answer == "value"
        # No stop strings: the response must be what a trainer would grade, closing fence
        # included; the model's end of turn ends it.
        return Sampling(
            temperature=c.temperature,
            top_p=c.top_p,
            max_new_tokens=c.literal_max_new_tokens if value else c.max_new_tokens,
            seed=self.seed,
        )

    def attempt(self, tasks: list[Task], round_id: int | None = None, step: int = 0) -> SolveReport:
        """`samples` attempts at each task, graded; attempts are returned, not stored."""
        report = SolveReport()
        started, tokens0 = time.perf_counter(), self.backend.stats.tokens
        n = self.config.samples
        responses: dict[tuple[int, int], str] = {}
        cut: set[tuple[int, int]] = set()
        done = 0
        self.progress("solve", 0, len(tasks))
        for kind in dict.fromkeys(t.kind for t in tasks):  # one sampling setting per call
            idx = [i for i, t in enumerate(tasks) if t.kind == kind]
            prompts = [solver_prompt(tasks[i]) for i in idx]
            results = self.backend.generate(prompts, n, self._sampling(kind))
            for i, completions in zip(idx, results, strict=True):
                for j, c in enumerate(completions):
                    responses[i, j] = c.text
                    if cut_short(c):
                        cut.add((i, j))
            done += len(idx)
            self.progress("solve", done, len(tasks))
        keys, texts, labels = [], [], []
        scores: dict[tuple[int, int], Any] = {}
        for i, task in enumerate(tasks):
            try:
                label = GroundTruth.from_task(task)
            except InvalidGroundTruth:
                label = None  # a task whose stored examples cannot make a label grades nothing
            for j in range(n):
                if label is None or (i, j) in cut:
                    scores[i, j] = None
                    continue
                keys.append((i, j))
                texts.append(responses[i, j])
                labels.append(label)
        self.progress("grade", 0, len(keys))
        if keys:
            scores.update(zip(keys, grade_responses(texts, labels, self.verifier), strict=True))
        self.progress("grade", len(keys), len(keys))
        for i, task in enumerate(tasks):
            successes = 0
            for j in range(n):
                score = scores[i, j]
                passed = score is not None and score.passed
                successes += passed
                status = (
                    TRUNCATED if (i, j) in cut
                    else score.reason if score is not None else BAD_GROUND_TRUTH
                )  # fmt: skip
                report.statuses[status] += 1
                report.attempts.append(
                    Attempt(
                        task_id=task.id,
                        solver=self.name,
                        answer=responses[i, j][:MAX_STORED_RESPONSE],
                        status=status,
                        passed=passed,
                        reward=score.score if score is not None else 0.0,
                        round_id=round_id,
                        step=step,
                        signals=list(score.signals) if score is not None else [],
                        isolation=score.isolation if score is not None else "sandbox",
                    )
                )
            report.results.append(TaskResult(task.id, n, successes, successes / n))
        report.tokens = self.backend.stats.tokens - tokens0
        report.seconds = time.perf_counter() - started
        return report
