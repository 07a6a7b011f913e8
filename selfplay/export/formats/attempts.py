"""What the SFT and DPO formats share: rows made of answers to each task (the solver's
attempts, read from the bank once for all tasks, and references), each row the task's prompt
and one or more assistant messages."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from selfplay import kinds
from selfplay.export.exporter import Exporter
from selfplay.export.select import Item
from task_bank.store import Bank

# An attempt as the bank gives it: the solver's name, its answer and whether it passed.
Attempt = tuple[str, str, bool]


def attempts_by_task(bank: Bank, task_ids: list[str]) -> dict[str, list[Attempt]]:
    """task id -> (solver, answer, passed) in the order they were made (empty answers left out)."""
    return {
        task_id: [a for a in made if a[1] and a[1].strip()]
        for task_id, made in bank.attempts_for(task_ids).items()
    }


def answer_row(item: Item, answers: dict[str, str], **more: Any) -> dict[str, Any]:
    """A row of the task's prompt, then each answer (column -> response) as a list of one
    assistant message, the task's id and kind, then `more`: the prompt/completion form, not
    one `messages` list, so TRL's trainers keep the prompt out of the loss by default."""
    return {
        "prompt": kinds.chat(item.task),
        **{column: [{"role": "assistant", "content": text}] for column, text in answers.items()},
        "task_id": item.task.id,
        "kind": item.task.kind,
        **more,
    }


class AttemptExporter(Exporter):
    """A format whose rows are answers to each task; `task_rows` makes a task's rows from the
    solver's attempts at it."""

    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]:
        attempts = attempts_by_task(bank, [item.task.id for item in items])
        return [
            row for item in items for row in self.task_rows(item, attempts.get(item.task.id, []))
        ]

    @abstractmethod
    def task_rows(self, item: Item, made: list[Attempt]) -> list[dict[str, Any]]: ...
