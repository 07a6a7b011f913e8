"""Answers out of model responses, by kind, and strict comparison of literal values.

Code kinds (codegen, induction) take the last fenced code block: models think aloud in
earlier blocks and correct themselves later. Literal kinds (deduction, abduction) take the
last fenced block, else the text after the last `Answer:`, else the last non-empty line,
and parse it with `ast.literal_eval`, which never executes anything.
"""

from __future__ import annotations

import ast
import re
from typing import Any

# An opening fence with an optional language tag, its body, and a closing fence on its own line.
_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)^[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)
_ANSWER = re.compile(r"answer\s*(?:is)?\s*[:=]\s*(.+)", re.IGNORECASE)
# Longer answers are not literals a task asks for; literal_eval on them costs memory.
MAX_LITERAL_CHARS = 100_000
_PARSE_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def last_code_block(text: str) -> str | None:
    """The body of the last complete fenced block, or None (no block, or an empty one)."""
    blocks = _FENCE.findall(text or "")
    if not blocks:
        return None
    body = blocks[-1]
    return body if body.strip() else None


def answer_text(text: str) -> str | None:
    """Where a literal answer sits in a response (see the module docstring)."""
    block = last_code_block(text)
    if block is not None:
        return block.strip()
    text = (text or "").strip()
    if not text:
        return None
    found = _ANSWER.findall(text)
    if found:
        return found[-1].strip().strip("`").strip() or None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1].strip("`").strip() or None


def parse_literal(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is one Python literal, else (False, None)."""
    if len(text) > MAX_LITERAL_CHARS:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except _PARSE_ERRORS:
        return False, None


def parse_arguments(text: str, entry_point: str | None) -> str | None:
    """An argument list literal such as `3, [1, 2]` (also written `f(3, [1, 2])`), or None."""
    if len(text) > MAX_LITERAL_CHARS:
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except _PARSE_ERRORS:
        return None
    body = tree.body
    if (
        isinstance(body, ast.Call)
        and isinstance(body.func, ast.Name)
        and body.func.id in {entry_point, "f"}
        and not body.keywords
    ):
        parts = body.args
    elif isinstance(body, ast.Tuple) and body.elts and body.elts[0].col_offset == body.col_offset:
        # `3, [1, 2]` parses as a tuple without parentheses: the arguments themselves;
        # `(3, [1, 2])` starts before its first element: one tuple argument.
        parts = body.elts
    else:
        parts = [body]
    if not parts:
        return None
    for part in parts:
        if isinstance(part, ast.Starred):
            return None
        try:
            ast.literal_eval(part)
        except _PARSE_ERRORS:
            return None
    return ", ".join(ast.unparse(p) for p in parts)


def same_value(a: Any, b: Any) -> bool:
    """Equality that also requires equal types, so `True` does not answer `1` and `1.0`
    does not answer `1`; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def same_repr_value(answer: str, expected: str) -> bool:
    """Two reprs denote the same value (strictly, as literals), or are the same text."""
    ok_a, a = parse_literal(answer)
    ok_b, b = parse_literal(expected)
    if ok_a and ok_b:
        return same_value(a, b)
    return answer == expected
