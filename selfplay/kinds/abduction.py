"""abduction: shown a program and an output, give arguments that produce it (run by the
verifier through the reference program)."""

from __future__ import annotations

from typing import Any

from selfplay.kinds.answers import answer_text, call_arguments, same_repr
from selfplay.kinds.base import (
    NO_ANSWER,
    NOT_LITERAL,
    PASSED,
    WRONG_ANSWER,
    Kind,
    Score,
    examples_with_outputs,
    fail,
)
from selfplay.kinds.fences import fence
from selfplay.task import Task
from selfplay.verifier.records import Verdict


class Abduction(Kind):
    name = "abduction"
    min_examples = 1
    answer = "value"
    answer_tokens = 48
    required = ("program", "entry_point", "expected")
    proposed_statement = "Find an input for which `f` returns the output shown."

    def fields(self, task: Task) -> dict[str, str]:
        shown = examples_with_outputs(task)
        target = shown[0]["output"]
        # Another example's call and output show the form of an answer in this program's own
        # arguments: given a form to fill in (`f(3, [1, 2])`), a small model copies it, and
        # its arguments rarely fit the program. An example with the target output would be
        # the answer, so only one with another output is shown.
        other = next((e for e in shown[1:] if not same_repr(e["output"], target)), None)
        ep = task.entry_point
        if other is not None:
            example = f"For example, `{ep}({other['input']})` returns `{other['output']}`."
        else:
            example = f"Write it as a call, such as `{ep}(3, [1, 2])`."
        return {
            "program": task.program.rstrip("\n"),
            "entry_point": ep,
            "output": target,
            "example": example,
        }

    def reference_answer(self, task: Task) -> str:
        shown = examples_with_outputs(task)[0]
        return fence(f"{task.entry_point}({shown['input']})")

    def ground_truth(self, task: Task) -> dict[str, Any]:
        shown = examples_with_outputs(task)
        if not shown:
            raise ValueError("an abduction task needs an example with its output")
        return {
            "entry_point": task.entry_point,
            "program": task.program,
            "expected": shown[0]["output"],
        }

    def plan(self, response: str, gt: dict[str, Any], row_id: str) -> Score | dict[str, Any]:
        text = answer_text(response)
        if text is None:
            return fail(NO_ANSWER, "the response is empty", answered=False)
        args = call_arguments(text, gt.entry_point)
        if args is None:
            return fail(NOT_LITERAL, f"not a call with literal arguments: {text[:200]}")
        return {
            "id": row_id,
            "program": gt.program,
            "tests": [],
            "calls": [f"{gt.entry_point}({args})"],
        }

    def decide(self, gt: dict[str, Any], verdict: Verdict) -> Score:
        outputs = verdict.outputs or [None]
        if verdict.status != PASSED:  # the program did not load, or ran out of time
            return Score(0.0, verdict.status, True, 0, 1, verdict.detail)
        if outputs[0] is not None and same_repr(outputs[0], gt.expected):
            return Score(1.0, PASSED, True, 1, 1)
        detail = f"the program returned {outputs[0]}" if outputs[0] else verdict.detail
        return Score(0.0, WRONG_ANSWER, True, 0, 1, (detail or "")[:500])

    def shown(self, task: Task) -> str | None:
        return task.examples[0]["output"] if task.examples else None
