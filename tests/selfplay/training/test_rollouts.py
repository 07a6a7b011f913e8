"""GRPO's curriculum sampler picks among tasks the policy has a record of, never blind while
there is a choice (the warm-up gives every task a record; test_train.py runs it for real)."""

from __future__ import annotations

import pytest
from bank_samples import add_tasks, codegen_row

from curricula import make_scheduler
from selfplay.admission.schema import parse_task
from selfplay.training.rollouts import CurriculumSampler
from task_bank.store import Attempt


def _tasks(bank, n):
    rows = [codegen_row(f"def f{i}(x):\n    return x + {i}\n", f"f{i}", [f"assert f{i}(0) == {i}"])
            for i in range(n)]  # fmt: skip
    tasks = [parse_task(r, source="test") for r in rows]
    add_tasks(bank, tasks)
    return [t.id for t in tasks]


def _sampler(bank, ids, name, k):
    return CurriculumSampler(bank, ids, make_scheduler(name, seed=3), prompts_per_batch=k,
                             num_generations=2, repeat_count=1, batches=1, solvers=["me"])  # fmt: skip


@pytest.mark.parametrize("name", ["learnability", "frontier", "plr", "uniform"])
def test_a_pick_never_takes_an_untried_task_while_tried_ones_are_enough(bank, name):
    ids = _tasks(bank, 40)
    tried = ids[:10]
    # A hopeless record on the tried tasks: learnability alone would rather explore the
    # untried ones (their uncertainty wins), which is the blind pick this rule prevents.
    bank.add_attempts(
        Attempt(t, "me", "x", "wrong_answer", False, 0.0) for t in tried for _ in range(3)
    )
    bank.add_attempts(Attempt(t, "someone-else", "x", "passed", True, 1.0) for t in ids[10:])
    sampler = _sampler(bank, ids, name, k=4)
    for _ in range(20):
        assert {ids[i] for i in sampler.pick()} <= set(tried)
    # The rule is the sampler's: the scheduler by itself does pick untried tasks.
    stats = bank.solve_stats(["me"])
    if name != "uniform":
        assert set(make_scheduler(name, seed=3).select(stats, 4)) - set(tried)


def test_too_few_tried_tasks_all_go_in_and_untried_ones_fill_the_batch(bank):
    ids = _tasks(bank, 12)
    bank.add_attempts([Attempt(ids[0], "me", "x", "passed", True, 1.0),
                       Attempt(ids[1], "me", "x", "wrong_answer", False, 0.0)])  # fmt: skip
    picked = [ids[i] for i in _sampler(bank, ids, "learnability", k=5).pick()]
    assert len(set(picked)) == 5 and {ids[0], ids[1]} <= set(picked)
