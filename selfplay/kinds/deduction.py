"""deduction: shown a program and an input, predict the output (a value, no execution)."""

from __future__ import annotations

from typing import Any

from selfplay.kinds.answers import NotAValue, answer_text, parse_value, same_repr
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


class Deduction(Kind):
    name = "deduction"
    min_examples = 1
    answer = "value"
    answer_tokens = 48
    required = ("expected",)
    proposed_statement = "Predict the value that `f` returns for the input shown."

    def fields(self, task: Task) -> dict[str, str]:
        shown = examples_with_outputs(task)[0]
        return {
            "program": task.program.rstrip("\n"),
            "call": f"{task.entry_point}({shown['input']})",
        }

    def reference_answer(self, task: Task) -> str:
        return fence(examples_with_outputs(task)[0]["output"])

    def ground_truth(self, task: Task) -> dict[str, Any]:
        shown = examples_with_outputs(task)
        if not shown:
            raise ValueError("a deduction task needs an example with its output")
        return {
            "entry_point": task.entry_point,
            "input": shown[0]["input"],
            "expected": shown[0]["output"],
        }

    def plan(self, response: str, gt: dict[str, Any], row_id: str) -> Score:
        text = answer_text(response)
        if text is None:
            return fail(NO_ANSWER, "the response is empty", answered=False)
        try:
            parse_value(text)
        except NotAValue:
            return fail(NOT_LITERAL, f"not a Python value: {text[:200]}")
        if same_repr(text, gt.expected or ""):
            return Score(1.0, PASSED, True, 1, 1)
        return Score(0.0, WRONG_ANSWER, True, 0, 1, f"answered {text[:200]}")

    def shown(self, task: Task) -> str | None:
        return task.examples[0]["input"] if task.examples else None

    def check(self, task: Task) -> tuple[str, str] | None:
        problem = super().check(task)
        if problem:
            return problem
        try:
            parse_value(task.examples[0]["output"])
        except NotAValue:
            return "output_not_literal", "a deduction output must be a value an answer can write"
        return None
