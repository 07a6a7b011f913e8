"""What the SFT and DPO formats are made of: the solver's attempts at each task, read once."""

from __future__ import annotations

from task_bank.store import Bank


def attempts_by_task(bank: Bank, task_ids: list[str]) -> dict[str, list[tuple[str, str, bool]]]:
    """task id -> (solver, answer, passed) in the order they were made (empty answers left out)."""
    return {
        task_id: [a for a in made if a[1] and a[1].strip()]
        for task_id, made in bank.attempts_for(task_ids).items()
    }
