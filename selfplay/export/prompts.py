"""The prompt a trainer shows for a task and the answer SFT trains on: the task kind's own
(`selfplay.kinds`), so an export shows exactly what the bank's solve rates were measured under."""

from __future__ import annotations

from selfplay import kinds
from selfplay.task import Task


def chat(task: Task) -> list[dict[str, str]]:
    """The prompt as a chat message list (what verl, TRL and OpenRLHF template)."""
    return kinds.get(task.kind).chat(task)


def reference_answer(task: Task) -> str:
    """The reference solution written the way a response should be: what SFT trains on."""
    return kinds.get(task.kind).reference_answer(task)


def as_response(answer: str) -> str:
    """A stored attempt answer as a response: kept if it already has a fence, else fenced."""
    return answer if "```" in answer else f"```python\n{answer.rstrip()}\n```"
