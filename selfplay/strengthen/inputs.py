"""`variants`: new arguments for a task, made from the arguments its own tests use.

A synthesised argument can fall outside what a task means (a range whose low end is above its
high end), and there the reference's answer is an accident another correct solution need not
share. Arguments grown from the task's own keep their types, shapes and most of their values,
as EvalPlus's type-aware mutation does: one value changed at a time, by a small step (an
integer one more or less, doubled or negated; a float halved or doubled; a string with a
character dropped or repeated, or reversed; a list reversed, sorted, with an element dropped
or repeated). Nothing here runs: the reference answers them in the sandbox.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any


def variants(args: str, limit: int = 12) -> list[str]:
    """Up to `limit` distinct argument lists near `args` (a Python literal argument list,
    `1, [2, 3]`), one value changed in each, in a fixed order; [] if `args` is no literal."""
    try:
        values = list(ast.literal_eval(f"({args},)"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    seen, out = {_text(values)}, []
    # One step of each argument before a second step of any: the limit spreads over them.
    steps = [list(_near(v)) for v in values]
    for k in range(max((len(s) for s in steps), default=0)):
        for i, options in enumerate(steps):
            if k >= len(options):
                continue
            text = _text(values[:i] + [options[k]] + values[i + 1 :])
            if text not in seen:
                seen.add(text)
                out.append(text)
                if len(out) >= limit:
                    return out
    return out


def _text(values: list[Any]) -> str:
    return ", ".join(repr(v) for v in values)


def _near(value: Any) -> Iterator[Any]:
    """Values one small step from `value`, of its type."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int):
        yield from (value + 1, value - 1, -value, 2 * value, 0)
    elif isinstance(value, float):
        yield from (value * 2, value / 2, -value, 0.0)
    elif isinstance(value, str):
        if value:
            yield from (value[1:], value[::-1], value + value[-1], value.upper())
        else:
            yield "a"
    elif isinstance(value, list | tuple):
        kind = type(value)
        items = list(value)
        if items:
            yield kind(items[::-1])
            yield kind(items[1:])
            yield kind(items + items[-1:])
            try:
                yield kind(sorted(items))
            except TypeError:
                pass
            # The first element one step away (a list of lists keeps its rows' shape).
            near = next(_near(items[0]), None)
            if near is not None:
                yield kind([near, *items[1:]])
        else:
            yield kind()
    elif isinstance(value, dict) and value:
        first = next(iter(value))
        yield {k: v for k, v in value.items() if k != first}
