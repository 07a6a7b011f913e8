"""The runner: a list of steps run in order, each committed before the next, none run twice.

A real bank's journal and plain steps; the engine's own steps are run by the round and loop
tests.
"""

from __future__ import annotations

import pytest

from selfplay.engine.runner import Runner
from selfplay.seeds import step_seed
from task_bank.store import Bank


class Note:
    """A step that records that it ran and reports its seed."""

    def __init__(self, name: str, ran: list[str], fail: bool = False) -> None:
        self.name, self.ran, self.fail = name, ran, fail

    def run(self, ctx):
        self.ran.append(self.name)
        if self.fail:
            raise RuntimeError(f"{self.name} failed")
        return {"seed": ctx.seed(self.name)}


def test_steps_run_in_order_and_each_is_committed_as_it_ends(tmp_path):
    ran, seen = [], []
    with Bank(tmp_path / "b.db") as bank:
        runner = Runner(None, bank.journal("round"), progress=print,
                        on_step=lambda i, step, report: seen.append((i, step)), seed=7)  # fmt: skip
        steps = [Note("first", ran), Note("second", ran)]
        runner.run(3, steps)
        assert ran == ["first", "second"] and seen == [(3, "first"), (3, "second")]
        assert bank.journal("round").get(3, "second") == {
            "seed": step_seed(7, "round", 3, "second")
        }
        assert runner.pending(3, steps) == [] and runner.pending(4, steps) == steps


def test_a_run_cut_off_by_a_failing_step_continues_with_that_step(tmp_path):
    ran = []
    with Bank(tmp_path / "b.db") as bank:
        runner = Runner(None, bank.journal("loop"), progress=print)
        broken = [Note("first", ran), Note("second", ran, fail=True), Note("third", ran)]
        with pytest.raises(RuntimeError, match="second failed"):
            runner.run(1, broken)
        assert [s.name for s in runner.pending(1, broken)] == ["second", "third"]
        runner.run(1, [Note("first", ran), Note("second", ran), Note("third", ran)])
    assert ran == ["first", "second", "second", "third"]  # the committed step is not redone


def test_a_steps_checkpoints_are_journaled_beside_it_and_read_back(tmp_path):
    class Chunked:
        name = "chunked"

        def run(self, ctx):
            done = ctx.done("chunked.part") or ctx.commit("chunked.part", {"parts": 1})
            return {"parts": done["parts"] + 1}

    with Bank(tmp_path / "b.db") as bank:
        Runner(None, bank.journal("round"), progress=print).run(1, [Chunked()])
        assert bank.journal("round").all()[1] == {"chunked.part": {"parts": 1},
                                                  "chunked": {"parts": 2}}  # fmt: skip


def test_progress_is_named_after_the_run_and_the_stage_and_keeps_its_note(tmp_path):
    calls = []

    def progress(phase, done, total, **note):
        calls.append((phase, done, total, note))

    class Training:
        name = "train"

        def run(self, ctx):
            ctx.progress("held-out", 0, 2)
            ctx.within("solver")("train", 1, 4, note="loss 0.5")
            return {}

    with Bank(tmp_path / "b.db") as bank:
        runner = Runner(None, bank.journal("loop"), progress=progress, label=lambda i: f"it{i}")
        runner.run(2, [Training()])
    assert calls == [("it2 held-out", 0, 2, {}), ("it2 solver train", 1, 4, {"note": "loss 0.5"})]


def test_seeds_differ_between_steps_runs_and_scopes_and_repeat_exactly(tmp_path):
    with Bank(tmp_path / "b.db") as bank:
        round_ctx = Runner(None, bank.journal("round"), progress=print, seed=0).context(1, [])
        loop_ctx = Runner(None, bank.journal("loop"), progress=print, seed=0).context(1, [])
        # The old sums gave the sixth try of round 1's first wave the solver's seed.
        assert round_ctx.seed("propose", 5, 0) != round_ctx.seed("solve")
        assert round_ctx.seed("solve") != loop_ctx.seed("solve")
        assert round_ctx.seed("solve") == step_seed(0, "round", 1, "solve")
