"""induction: shown some examples, write the program; graded on every example, shown and
held out, so hard-coding the shown ones fails."""

from __future__ import annotations

from typing import Any

from selfplay.kinds.answers import same_repr
from selfplay.kinds.base import (
    NO_ANSWER,
    PASSED,
    WRONG_ANSWER,
    Kind,
    Score,
    examples_with_outputs,
    fail,
)
from selfplay.kinds.fences import fence, last_code_block
from selfplay.task import Task
from selfplay.verifier.records import Verdict


def shown_count(n_examples: int) -> int:
    """How many examples the prompt shows: half, rounded up, never all of them."""
    if n_examples < 2:
        return n_examples
    return min((n_examples + 1) // 2, n_examples - 1)


class Induction(Kind):
    name = "induction"
    min_examples = 2
    proposal_inputs = 3
    required = ("examples", "entry_point")
    proposed_statement = "Write `f`. Infer what it computes from the examples."

    def fields(self, task: Task) -> dict[str, str]:
        examples = examples_with_outputs(task)
        shown = examples[: shown_count(len(examples))]
        lines = "\n".join(f"{task.entry_point}({e['input']}) == {e['output']}" for e in shown)
        return {"examples": lines, "entry_point": task.entry_point}

    def reference_answer(self, task: Task) -> str:
        return fence(task.program)

    def ground_truth(self, task: Task) -> dict[str, Any]:
        examples = examples_with_outputs(task)
        if len(examples) < self.min_examples:
            raise ValueError("an induction task needs at least two examples")
        return {
            "entry_point": task.entry_point,
            "examples": [{"input": e["input"], "output": e["output"]} for e in examples],
            "shown": shown_count(len(examples)),
        }

    def plan(self, response: str, gt: dict[str, Any], row_id: str) -> Score | dict[str, Any]:
        code = last_code_block(response)
        if code is None:
            return fail(NO_ANSWER, "no fenced code block in the response", answered=False)
        calls = [f"{gt.entry_point}({e['input']})" for e in gt.examples]
        return {"id": row_id, "program": code, "tests": [], "calls": calls}

    def decide(self, gt: dict[str, Any], verdict: Verdict) -> Score:
        expected = [e["output"] for e in gt.examples]
        outputs = verdict.outputs or [None] * len(expected)
        right = [
            out is not None and same_repr(out, exp)
            for out, exp in zip(outputs, expected, strict=True)
        ]
        n, total = sum(right), len(expected)
        partial = n / total if gt.reward == "fraction" and total else 0.0
        if verdict.status != PASSED:  # the program did not load, or ran out of time
            return Score(0.0, verdict.status, True, n, total, verdict.detail)
        if n == total:
            return Score(1.0, PASSED, True, n, total)
        wrong = right.index(False)
        got = outputs[wrong] if outputs[wrong] is not None else f"an error ({verdict.detail[:300]})"
        detail = f"{gt.entry_point}({gt.examples[wrong]['input']}) gave {got}"
        return Score(partial, WRONG_ANSWER, True, n, total, detail[:500])

    def describe(self, task: Task, shown: list[dict], block: str) -> str:
        lines = "\n".join(f"{task.entry_point}({e['input']}) == {e['output']}" for e in shown)
        return f"{block}\nExamples:\n{lines}"
