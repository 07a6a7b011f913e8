"""What SFT trains on: with references off, the solver's own passing attempts, every one of
them, also those that give the reference's very answer."""

from __future__ import annotations

import pytest
from bank_builder import CODEGEN, DEDUCTION

from selfplay.config import TrainConfig
from selfplay.kinds import reference_answer
from selfplay.training.data import TrainDataError, sft_rows, solver_items
from task_bank.store import Bank


def _rows(bank: Bank, task_id: str, references: bool) -> list[dict]:
    config = TrainConfig(method="sft", data={"tasks": [task_id], "held_out_fraction": 0.0})
    return sft_rows(bank, solver_items(bank, config), references=references)


@pytest.mark.parametrize("task_id", [DEDUCTION, CODEGEN])
def test_without_references_a_passing_attempt_equal_to_the_reference_is_kept(built_bank, task_id):
    with Bank(built_bank) as bank:
        task = bank.get(task_id)
        with_refs = _rows(bank, task_id, references=True)
        own = _rows(bank, task_id, references=False)
    # The bank's passing attempt at this task gives the reference's answer: with references
    # on it is one row (deduplicated), with them off it is that attempt's row.
    [ref] = [r for r in with_refs if r["origin"] == "reference"]
    assert ref["completion"][0]["content"] == reference_answer(task)
    assert own and all(r["origin"] == "attempt" for r in own)
    assert ref["completion"] in [r["completion"] for r in own]


def test_without_references_a_task_nobody_solved_has_nothing_to_train_on(built_bank):
    with Bank(built_bank) as bank:
        unsolved = next(t.id for t in bank.tasks() if t.id not in (CODEGEN, DEDUCTION)
                        and t.source == "seeds")  # fmt: skip
        assert _rows(bank, unsolved, references=True)
        with pytest.raises(TrainDataError, match="no verified solution"):
            _rows(bank, unsolved, references=False)
