"""Answers out of solver text, and the verifier rows that grade them.

Extraction per kind: the last fenced code block is the program (codegen, induction);
the predicted output (deduction) is a Python literal; the predicted input (abduction) is
the literal arguments of a call. Literals are read with `ast.literal_eval`, never `eval`,
and grading tests are rebuilt from the parsed values with `repr`: model text is never
pasted into test code. Only a solver's *program* runs, and only inside the verifier.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from selfplay.proposer.parse import call_arguments, last_code_block, parse_literal
from task_bank.schema import Task

MAX_ANSWER_CHARS = 10_000


@dataclass(slots=True)
class Answer:
    """An extracted answer: `text` is what is stored, `value` what is graded."""

    text: str
    value: Any


def shown_examples(task: Task) -> tuple[list[dict], list[dict]]:
    """Induction: (examples shown to the solver, held-out examples it is graded on)."""
    examples = [e for e in task.examples if e.get("output") is not None]
    shown = max(1, min(len(examples) - 1, (len(examples) + 1) // 2))
    return examples[:shown], examples[shown:]


def _literal_of_statement(code: str, entry_point: str | None) -> Any:
    """The value a one-line answer states: `x`, `f(..) == x`, `assert f(..) == x`, `y = x`."""
    try:
        return parse_literal(code, max_chars=MAX_ANSWER_CHARS)
    except ValueError:
        pass
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise ValueError("not a Python literal") from None
    if not tree.body:
        raise ValueError("empty answer")
    stmt = tree.body[-1]
    node = getattr(stmt, "test", None) or getattr(stmt, "value", None)
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        node = node.comparators[0]
    if node is None:
        raise ValueError("not a Python literal")
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not a Python literal") from None


def extract(task: Task, prefill: str, completion: str) -> Answer | None:
    """The answer in the assistant turn (prefill + completion), or None if there is none."""
    turn = prefill + completion
    block = last_code_block(turn)
    if block is None or len(block) > MAX_ANSWER_CHARS:
        return None
    if task.kind in ("codegen", "induction"):
        return Answer(block.strip("\n") + "\n", None)
    lines = [ln for ln in block.strip().splitlines() if ln.strip()]
    if task.kind == "abduction":
        for line in reversed(lines):
            args = call_arguments(line, task.entry_point or "f", max_chars=MAX_ANSWER_CHARS)
            if args is not None:
                values = ast.literal_eval(f"({args},)")
                return Answer(args, values)
        try:  # a bare literal: the single argument
            return Answer(block.strip(), (parse_literal(block),))
        except ValueError:
            return None
    try:  # deduction: the whole block, else its last line (after some working)
        value = _literal_of_statement(block.strip(), task.entry_point)
    except ValueError:
        try:
            value = _literal_of_statement(lines[-1], task.entry_point)
        except (ValueError, IndexError):
            return None
    return Answer(repr(value), value)


def _clean(literal: str) -> str:
    """A stored literal, rebuilt from its value (the bank admitted only literals)."""
    return repr(ast.literal_eval(literal))


def _clean_args(literal: str) -> str:
    return ", ".join(repr(v) for v in ast.literal_eval(f"({literal},)"))


def grading_row(task: Task, answer: Answer, row_id: str) -> dict[str, Any]:
    """The verifier row that passes exactly when `answer` solves `task`."""
    ep = task.entry_point
    if task.kind == "deduction":
        shown = task.examples[0]
        test = f"assert {ep}({_clean_args(shown['input'])}) == {answer.value!r}"
        return {"id": row_id, "program": task.program, "tests": [test]}
    if task.kind == "abduction":
        args = ", ".join(repr(v) for v in answer.value)
        test = f"assert {ep}({args}) == {_clean(task.examples[0]['output'])}"
        return {"id": row_id, "program": task.program, "tests": [test]}
    if task.kind == "induction":
        _, held_out = shown_examples(task)
        tests = [
            f"assert {ep}({_clean_args(e['input'])}) == {_clean(e['output'])}" for e in held_out
        ]
        return {"id": row_id, "program": answer.text, "tests": tests}
    return {"id": row_id, "program": answer.text, "tests": task.tests}
