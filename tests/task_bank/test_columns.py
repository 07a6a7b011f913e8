"""Every field of a stored record has a column, and a record comes back as it went in."""

from __future__ import annotations

import dataclasses

import pytest

from selfplay.task import Task
from task_bank.attempts import ATTEMPT
from task_bank.store import Attempt, Bank
from task_bank.tasks import TASK


@pytest.mark.parametrize(("record", "columns"), [(Task, TASK), (Attempt, ATTEMPT)])
def test_every_field_of_a_record_is_a_column(record, columns):
    # A field added to the record but not to its columns would be dropped on every write.
    assert {f.name for f in dataclasses.fields(record)} == set(columns.names)


def test_a_task_with_every_field_set_comes_back_equal(tmp_path):
    task = Task(
        id="t1",
        kind="deduction",
        prompt="What does f(2) return?",
        program="def f(x):\n    return x + 1\n",
        entry_point="f",
        tests=["assert f(2) == 3"],
        examples=[{"input": "2", "output": "3"}],
        tags=["arith", "level:1"],
        metadata={"difficulty": 0.25},
        source="unit",
        parent_ids=["t0"],
        proposer="m",
        round_id=None,
        created_at=12.5,
        verified_at=13.0,
        deterministic=False,
        contaminated="humaneval",
        strengthened={"tests": ["assert f(0) == 1"], "provenance": {"added": 1}},
    )
    with Bank(tmp_path / "b.db") as bank:
        bank.add_tasks([task], ast_hashes=["h"], dedup_keys=["k"])
        assert bank.get("t1") == task
