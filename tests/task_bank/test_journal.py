"""The step journal: each scope's steps by run id, committed one at a time."""

from __future__ import annotations

from task_bank.store import Bank


def test_loop_steps_are_kept_per_iteration(tmp_path):
    with Bank(tmp_path / "b.db") as bank:
        loop = bank.journal("loop")
        loop.set(1, "round", {"round": 3})
        loop.set(1, "train", {"model": "m1"})
        loop.set(2, "round", {"round": 4})
        assert loop.get(1, "train") == {"model": "m1"} and loop.get(2, "eval") is None
        assert loop.all() == {
            1: {"round": {"round": 3}, "train": {"model": "m1"}},
            2: {"round": {"round": 4}},
        }
        # A step committed again replaces its report; round steps stay apart.
        loop.set(1, "train", {"model": "m2"})
        assert loop.get(1, "train") == {"model": "m2"}
        assert bank.journal("round").all() == {}
