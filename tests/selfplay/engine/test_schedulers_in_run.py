"""Every built-in scheduler, and a user's own, drives a real round of `SelfPlay`.

A real bank file (seeded once, copied per scheduler), the real sandbox, and the scripted
backend standing in for the model.
"""

import shutil

import pytest

from curricula import register_scheduler, scheduler_names
from curricula.schedulers import Uniform
from selfplay.backends.base import Prompt
from selfplay.backends.scripted import ScriptedBackend
from selfplay.config import RunConfig
from selfplay.engine import SelfPlay
from task_bank.store import Bank

BUILT_IN = ["uniform", "easy_to_hard", "dapo_filter", "learnability", "plr", "frontier"]
EXTRA_TASKS = 3


def reply(prompt: Prompt, index: int) -> str:
    if prompt.prefill.endswith("def f("):
        return 'x):\n    """Return x times 41 plus one."""\n    return x * 41 + 1\n```'
    if prompt.prefill.endswith("f("):
        return "1)\nf(2)\nf(5)\nf(-3)\n```"
    return "7\n```" if index % 2 else "def f(x):\n    return x\n```"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory, verifier_3s):
    """A bank with the seeds and one finished round, so schedulers see real statistics."""
    path = tmp_path_factory.mktemp("seeded") / "bank.db"
    with Bank(path) as bank:
        SelfPlay(
            bank, ScriptedBackend("scripted", script=reply), verifier_3s, _config("uniform")
        ).run()
    return path


def _config(scheduler: str) -> RunConfig:
    return RunConfig.model_validate(
        {
            "rounds": 1,
            "kinds": ["deduction"],
            "scheduler": scheduler,
            "proposer": {"proposals_per_kind": 1},
            "solver": {"tasks": EXTRA_TASKS, "samples": 1},
        }
    )


def _round_two(seeded, tmp_path, verifier_3s, scheduler: str) -> tuple[list[str], set[str]]:
    path = tmp_path / "bank.db"
    shutil.copy(seeded, path)
    with Bank(path) as bank:
        summaries = SelfPlay(
            bank, ScriptedBackend("scripted", script=reply), verifier_3s, _config(scheduler)
        ).run()
        assert [s.round for s in summaries] == [2]
        plan = bank.journal("round").get(2, "solve.plan")
        new = {r[0] for r in bank.conn.execute("SELECT id FROM tasks WHERE source = 'selfplay'")}
        all_ids = {r[0] for r in bank.conn.execute("SELECT id FROM tasks")}
    picked = [t for t in plan["tasks"] if t not in new]
    assert set(picked) <= all_ids
    return picked, new


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILT_IN)
def test_each_built_in_scheduler_picks_the_solver_tasks_of_a_round(
    seeded, tmp_path, verifier_3s, name
):
    assert name in scheduler_names()
    picked, _ = _round_two(seeded, tmp_path, verifier_3s, name)
    assert len(picked) == EXTRA_TASKS and len(set(picked)) == EXTRA_TASKS


@pytest.mark.slow
def test_a_scheduler_of_the_users_own_is_called_by_the_round(seeded, tmp_path, verifier_3s):
    calls = []

    @register_scheduler("recording")
    class Recording(Uniform):
        def select(self, stats, k, graph=None):
            ids = super().select(stats, k, graph=graph)
            calls.append((len(stats), k, graph is not None, list(ids)))
            return ids

    picked, _ = _round_two(seeded, tmp_path, verifier_3s, "recording")
    assert calls, "the round never asked the scheduler"
    assert any(k == EXTRA_TASKS and ids == picked for _, k, _, ids in calls)
    assert all(has_graph for _, _, has_graph, _ in calls)  # non-uniform names get the graph
