"""A round step of one's own, written outside the package, is one class and one list entry.

It is added to the default round through `SelfPlay(steps=...)` and goes the whole way on a
real bank, with the real sandbox and the scripted backend: it runs after the built-in steps
with their results in the bank, its report is journaled under its name, its progress and
its commit are reported, and a round cut off after it resumes without running it again.
"""

from __future__ import annotations

from collections import Counter

import pytest
from small_bank import small_bank

from selfplay.backends.base import Prompt
from selfplay.backends.scripted import ScriptedBackend
from selfplay.config import RunConfig
from selfplay.engine import Context, SelfPlay, round_steps
from task_bank.store import Bank


def reply(prompt: Prompt, index: int) -> str:
    if prompt.prefill.endswith("def f("):
        return f'x):\n    """Return x times {41 + index} plus one."""\n    return x * {41 + index} + 1\n```'
    if prompt.prefill.endswith("f("):
        return "1)\nf(2)\nf(5)\nf(-3)\n```"
    return "7\n```"


class CountNewTasks:
    """The new step: the round's admitted tasks by kind, with their mean pass rate."""

    name = "count.new"

    def __init__(self) -> None:
        self.runs = 0

    def run(self, ctx: Context) -> dict:
        self.runs += 1
        engine = ctx.owner
        new = engine.new_task_ids(ctx.id)
        ctx.progress("count new tasks", 0, len(new))
        rates = ctx.done("rewards")["solver"]  # the steps before it are committed
        report = {
            "by_kind": dict(Counter(engine.bank.get(i).kind for i in new)),
            "mean_pass_rate": sum(rates[i]["pass_rate"] for i in new) / len(new),
        }
        ctx.progress("count new tasks", len(new), len(new))
        return report


class CutOff(Exception):
    pass


class CutOffOnce:
    """A step after it that fails the first time, as a killed process would stop there."""

    name = "cut.off"

    def __init__(self) -> None:
        self.runs = 0

    def run(self, ctx: Context) -> dict:
        self.runs += 1
        if self.runs == 1:
            raise CutOff
        return {"runs": self.runs}


def config() -> RunConfig:
    return RunConfig.model_validate(
        {
            "kinds": ["deduction", "abduction"],
            "proposer": {"proposals_per_kind": 2, "references": 1, "probe_tasks": 0},
            "solver": {"tasks": 1, "samples": 2},
        }
    )


def test_a_step_of_ones_own_runs_in_a_round_is_journaled_reported_and_not_rerun(
    tmp_path, verifier_3s
):
    small_bank(tmp_path / "b.db")
    cfg = config()
    count, cut = CountNewTasks(), CutOffOnce()
    steps = [*round_steps(cfg.kinds), count, cut]
    phases, committed = [], []

    def engine(bank: Bank) -> SelfPlay:
        return SelfPlay(bank, ScriptedBackend("scripted", script=reply), verifier_3s, cfg,
                        steps=steps, progress=lambda *call: phases.append(call),
                        on_step=lambda *call: committed.append(call))  # fmt: skip

    with Bank(tmp_path / "b.db") as bank:
        with pytest.raises(CutOff):
            engine(bank).run()
        report = bank.journal("round").get(1, "count.new")
        new = bank.new_task_ids(1, "selfplay")
        proposals = len(bank.proposals(1))
        # It ran once, after the built-in steps, and its report is in the journal.
        assert count.runs == 1 and len(new) == 4 and proposals == 4
        assert report["by_kind"] == {"deduction": 2, "abduction": 2}
        assert report["mean_pass_rate"] == 0.0  # "7" is no program's output
        names = [name for _, name, _ in committed]
        assert names.index("rewards") < names.index("count.new") and "cut.off" not in names
        assert committed[names.index("count.new")] == (1, "count.new", report)
        assert ("count new tasks", 4, 4) in phases
        assert engine(bank).resume_point() == (
            "round 1 at cut.off (kept: 2 deduction, 2 abduction proposals admitted)"
        )

        # The same run again: the round ends with the step that was cut off, nothing redone.
        committed.clear()
        (summary,) = engine(bank).run()
        assert summary.round == 1 and [r["id"] for r in bank.rounds()] == [1]
        assert count.runs == 1 and cut.runs == 2
        assert [name for _, name, _ in committed] == ["cut.off"]
        assert len(bank.proposals(1)) == proposals
        assert bank.journal("round").get(1, "count.new") == report
