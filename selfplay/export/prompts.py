"""The chat prompt a trainer shows for a task, from one template file per kind.

The wording asks for exactly what `selfplay.rewards` extracts: a fenced program for code
kinds, a fenced literal for deduction and abduction. Induction prompts show the first
`shown_count(n)` examples; the rest stay hidden for grading.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from selfplay.rewards.ground_truth import shown_count

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def _template(kind: str) -> Template:
    return Template((TEMPLATES / f"{kind}.txt").read_text(encoding="utf-8"))


def render(task: Any) -> str:
    """The user message for a task (anything shaped like a bank task)."""
    kind = task.kind
    fields: dict[str, str] = {
        "prompt": task.prompt.strip(),
        "program": task.program.rstrip("\n"),
        "entry_point": task.entry_point or "",
    }
    examples = [e for e in task.examples if e.get("output") is not None]
    if kind == "codegen":
        fields["signature"] = (
            f" that defines `{task.entry_point}`"
            if task.entry_point
            else " that reads standard input and writes standard output"
        )
    elif kind == "deduction":
        fields["call"] = f"{task.entry_point}({examples[0]['input']})"
    elif kind == "abduction":
        fields["output"] = examples[0]["output"]
    elif kind == "induction":
        shown = examples[: shown_count(len(examples))]
        fields["examples"] = "\n".join(
            f"{task.entry_point}({e['input']}) == {e['output']}" for e in shown
        )
    return _template(kind).substitute(fields).strip() + "\n"


def chat(task: Any) -> list[dict[str, str]]:
    """The prompt as a chat message list (what verl, TRL and OpenRLHF template)."""
    return [{"role": "user", "content": render(task)}]


def reference_answer(task: Any) -> str:
    """The reference solution written the way a response should be: what SFT trains on."""
    examples = [e for e in task.examples if e.get("output") is not None]
    if task.kind in ("codegen", "induction"):
        body = task.program.rstrip("\n")
    elif task.kind == "deduction":
        body = examples[0]["output"]
    else:
        body = examples[0]["input"]
    return f"```python\n{body}\n```"


def as_response(answer: str) -> str:
    """A stored attempt answer as a response: kept if it already has a fence, else fenced."""
    return answer if "```" in answer else f"```python\n{answer.rstrip()}\n```"
