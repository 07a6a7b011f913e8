"""GRPO with the curriculum in the loop: the scheduler picks each batch, rollouts go to the bank.

`CurriculumSampler` stands in for TRL's `RepeatSampler`: it yields the same layout (each
prompt `num_generations` times, a generation batch repeated for its optimisation steps) but
asks the scheduler for the prompts of each generation batch only when the trainer reaches
it, over the bank's counters at that moment. `RolloutReward` grades every rollout with
`selfplay.rewards` and writes it to the bank as an attempt by the model being trained, so
the scheduler's next pick sees the policy as it is now (the data loader fetches one batch
ahead, so a pick lags the newest rollouts by one generation batch). The scheduler chooses
among the tasks the policy has a record of whenever there are enough of them (training's
warm-up, `selfplay.solver.warmup`, gives every task one), never blind among untried ones.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from selfplay.kinds.answers import strip_special_tokens
from selfplay.rewards.frameworks import completion_text, trl_rewards
from selfplay.rewards.grade import grade_responses
from task_bank.store import Attempt

MAX_STORED_RESPONSE = 8000

if TYPE_CHECKING:
    from task_bank.store import Bank


class CurriculumSampler:
    """Dataset indices for TRL's GRPO trainer, chosen batch by batch by a scheduler."""

    def __init__(
        self,
        bank: Bank,
        task_ids: list[str],
        scheduler: Any,
        *,
        prompts_per_batch: int,
        num_generations: int,
        repeat_count: int,
        batches: int,
        graph: Any = None,
        solvers: list[str] | None = None,
    ) -> None:
        self.bank = bank
        self.solvers = solvers  # whose attempts describe the policy (its line of models)
        self.task_ids = task_ids
        self.position = {task_id: i for i, task_id in enumerate(task_ids)}
        self.scheduler = scheduler
        self.k = prompts_per_batch
        self.num_generations = num_generations
        self.repeat_count = repeat_count
        self.batches = batches
        self.graph = graph
        self.picks: list[list[str]] = []  # what was picked, batch by batch (for reports)
        self.seconds = 0.0  # spent reading the counters and asking the scheduler

    def pick(self) -> list[int]:
        """The scheduler's k tasks among the training tasks, on the bank's counters now."""
        started = time.perf_counter()
        stats = self.bank.solve_stats(self.solvers)
        stats = stats[stats.index.isin(self.position)]
        # Never blind while there is a choice: tasks the policy has a record of (every one,
        # after the warm-up) are the candidates; untried ones only fill a short batch.
        k = min(self.k, len(stats))
        tried = stats["attempts"].to_numpy() > 0
        if tried.sum() >= k or not tried.any():
            ids = self.scheduler.select(stats[tried] if tried.any() else stats, k, graph=self.graph)
        else:
            rest = self.scheduler.select(stats[~tried], k - int(tried.sum()), graph=self.graph)
            ids = [*stats.index[tried], *rest]
        self.picks.append(list(ids))
        self.seconds += time.perf_counter() - started
        return [self.position[i] for i in ids]

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.batches):
            chunk = self.pick()
            for _ in range(self.repeat_count):
                for index in chunk:
                    yield from [index] * self.num_generations

    def __len__(self) -> int:
        return self.batches * self.k * self.num_generations * self.repeat_count


class RolloutReward:
    """TRL's reward signature; grades with `selfplay.rewards` and records every rollout.

    A label that cannot be graded gives None (TRL's "not applicable"). Reasons and hack
    signals go to TRL's completions table and metrics through `trl_rewards`, as for
    `trl_reward`.
    """

    def __init__(self, bank: Bank, solver: str, verifier: Any, step: int = 0) -> None:
        self.bank = bank
        self.solver = solver
        self.verifier = verifier
        self.step = step  # the bank's step (round) the rollouts belong to
        self.__name__ = "selfplay_reward"  # TRL names the reward's log columns by this
        self.recorded = 0
        self.seconds = {"grade": 0.0, "record": 0.0}  # where the reward's time goes

    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list:
        texts = [strip_special_tokens(completion_text(c)) for c in completions]
        labels, task_ids = list(kwargs["ground_truth"]), list(kwargs["task_id"])
        started = time.perf_counter()
        scores = grade_responses(texts, labels, self.verifier)
        graded = time.perf_counter()
        self.seconds["grade"] += graded - started
        now = time.time()
        self.bank.add_attempts(
            Attempt(
                task_id=task_id,
                solver=self.solver,
                answer=text[:MAX_STORED_RESPONSE],
                status=score.reason,
                passed=score.passed,
                reward=score.score,
                step=self.step,
                created_at=now,
                signals=list(score.signals),
                isolation=score.isolation,
            )
            for task_id, text, score in zip(task_ids, texts, scores, strict=True)
            if score.gradable
        )
        self.recorded += sum(s.gradable for s in scores)
        self.seconds["record"] += time.perf_counter() - graded
        return trl_rewards(scores, kwargs)
