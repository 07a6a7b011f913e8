"""Example inputs found in a task's tests.

A test such as `assert add(2, 3) == 5` calls the entry point with literal arguments;
those argument lists become example inputs, whose outputs admission then computes by
running the reference program (the `5` in the test is never trusted). HumanEval's
`check(candidate)` functions call `candidate(...)`, which counts as the entry point.
"""

from __future__ import annotations

import ast

from selfplay.kinds.answers import NotAValue, parse_value, same_repr

CALLEE_ALIASES = ("candidate",)


def literal_args(call: ast.Call) -> str | None:
    """The call's positional arguments as source text, if every one is a literal; else None."""
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
        return None
    parts = []
    for arg in call.args:
        try:
            ast.literal_eval(arg)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        parts.append(ast.unparse(arg))
    return ", ".join(parts)


def inputs_from_tests(tests: list, entry_point: str | None, limit: int = 10) -> list[str]:
    """Distinct literal argument lists of calls to the entry point in Python tests."""
    if not entry_point:
        return []
    names = {entry_point, *CALLEE_ALIASES}
    found: dict[str, None] = {}
    for test in tests:
        if not isinstance(test, str):
            continue
        try:
            tree = ast.parse(test)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in names
            ):
                args = literal_args(node)
                if args is not None and len(args) <= 2000:
                    found.setdefault(args, None)
                    if len(found) >= limit:
                        return list(found)
    return list(found)


def same_value(a: str, b: str) -> bool:
    """Two reprs denote the same value, types included (the rewards' own comparison)."""
    return same_repr(a, b)


def is_literal(text: str) -> bool:
    """A value an answer can write (a literal, or `inf`, `nan`, `frozenset()`, ...)."""
    try:
        parse_value(text)
    except NotAValue:
        return False
    return True
