"""codegen: the prompt states a task; the response is a program; its tests grade it."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from selfplay.kinds.base import DEGENERATE, NO_ANSWER, PASSED, Kind, Score, fail
from selfplay.kinds.fences import fence, last_code_block
from selfplay.task import Task
from selfplay.verifier.records import Verdict

# A proposed task shows up to SHOWN_EXAMPLES of its tests as examples, keeping HIDDEN_TESTS unseen.
SHOWN_EXAMPLES = 2
HIDDEN_TESTS = 2


class Codegen(Kind):
    name = "codegen"
    required = ("tests",)
    needs_docstring = True

    def fields(self, task: Task) -> dict[str, str]:
        signature = (
            f" that defines `{task.entry_point}`"
            if task.entry_point
            else " that reads standard input and writes standard output"
        )
        return {"signature": signature}

    def reference_answer(self, task: Task) -> str:
        return fence(task.program)

    def ground_truth(self, task: Task) -> dict[str, Any]:
        if not task.tests:
            raise ValueError("a codegen task needs tests")
        fields = {"entry_point": task.entry_point, "tests": list(task.all_tests)}
        if added := len(task.all_tests) - len(task.tests):
            fields["strengthened"] = added  # `selfplay bank strengthen`'s, after the task's own
        if (task.metadata or {}).get("degenerate_passes"):
            fields["degenerate_ok"] = True  # admission's probe: the answer is honestly []
        return fields

    def plan(self, response: str, gt: dict[str, Any], row_id: str) -> Score | dict[str, Any]:
        code = last_code_block(response)
        if code is None:
            return fail(NO_ANSWER, "no fenced code block in the response", answered=False)
        return {"id": row_id, "program": code, "tests": gt.tests}

    def decide(self, gt: dict[str, Any], verdict: Verdict) -> Score:
        passed, total = verdict.tests_passed, verdict.tests_total
        if verdict.passed and "degenerate_pass" in verdict.signals and not gt.degenerate_ok:
            # Every call returned None, an empty value, NaN or an empty array: tests that
            # such an answer satisfies are weak, and the task's reference does work here.
            return Score(0.0, DEGENERATE, True, passed, total,
                         "passed by returning only degenerate values (None, empty, NaN)")  # fmt: skip
        if verdict.passed:
            return Score(1.0, PASSED, True, passed, total)
        partial = passed / total if gt.reward == "fraction" and total else 0.0
        return Score(partial, verdict.status, True, passed, total, verdict.detail)

    def statement(
        self, program: str, entry_point: str, examples: Sequence[tuple[str, str]] = ()
    ) -> str:
        """A proposed task's statement: its signature, its docstring and, as HumanEval's
        docstrings do, calls with their results. A model's docstring rarely pins down what a
        function returns (`an appropriate message`), and a task whose exact outputs no reader
        could know is graded on guessing, never at anyone's frontier. At least
        `HIDDEN_TESTS` of the tests are never shown: a program that only recalls the
        examples fails those."""
        fn = next(
            n
            for n in ast.parse(program).body
            if isinstance(n, ast.FunctionDef) and n.name == entry_point
        )
        signature = f"{entry_point}({ast.unparse(fn.args)})"
        if fn.returns is not None:
            signature += f" -> {ast.unparse(fn.returns)}"
        text = f"Write `{signature}`.\n\n{ast.get_docstring(fn)}"
        shown = list(examples)[: max(0, min(SHOWN_EXAMPLES, len(examples) - HIDDEN_TESTS))]
        if shown:
            calls = "\n".join(f">>> {entry_point}({x})\n{y}" for x, y in shown)
            text += f"\n\nFor example:\n{calls}"
        return text

    def describe(self, task: Task, shown: list[dict], block: str) -> str:
        return f"Exercise: {task.prompt.strip()}\nSolution:\n{block}"
