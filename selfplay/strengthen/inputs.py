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
from collections.abc import Callable, Iterator
from itertools import zip_longest
from typing import Any


def variants(args: str, limit: int = 24) -> list[str]:
    """Up to `limit` distinct argument lists near `args` (a Python literal argument list,
    `1, [2, 3]`), one value changed in each, in a fixed order; [] if `args` is no literal."""
    values = _values(args)
    if values is None:
        return []
    # One step of each argument before a second step of any: the limit spreads over them.
    steps = [[_text(values[:i] + [v] + values[i + 1 :]) for v in _near(value)]
             for i, value in enumerate(values)]  # fmt: skip
    return spread(steps, {_text(values)}, limit)


def spread(steps: list[list[str]], seen: set[str], limit: int) -> list[str]:
    """Each slot's options in turn (every slot's first before any slot's second), each text
    once and none of `seen`, at most `limit`."""
    out = []
    for group in zip_longest(*steps):
        for text in group:
            if text is not None and text not in seen:
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
        yield from (value + 1, value - 1, -value, 2 * value, 0, 2 * value + 1)
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


def domain(given: list[str]) -> Callable[[str], bool]:
    """What the task's own arguments always are, as a test on new ones: per argument, a sign
    (never negative, never zero), never empty, sorted, elements never negative, a string's
    characters (from those its given values use; no space at either end; its first and last
    character of the same class, digit, letter or other); between two arguments, equal
    lengths; and, with two or more given argument lists, an order between two numeric
    arguments (`lo <= hi`). Only what holds for every given list counts (as Daikon infers
    invariants from runs): a variant outside them may be outside what the task means
    (`string_xor` of strings of two lengths, a malformed sentence), where the reference's
    answer is an accident another correct solution need not share."""
    rows = [r for r in map(_values, given) if r is not None]
    if not rows or len({len(r) for r in rows}) != 1:
        return lambda args: True
    width = len(rows[0])
    facts = [(i, name) for i in range(width) for name, fact in _FACTS.items()
             if all(fact(r[i]) is True for r in rows)]  # fmt: skip
    chars = {i: set().union(*(r[i] for r in rows)) for i in range(width)
             if all(isinstance(r[i], str) for r in rows)}  # fmt: skip
    # Over the non-empty given values (an empty one has no ends; `non_empty` covers it).
    ends = {}
    for i in chars:
        full = [r[i] for r in rows if r[i]]
        for end in (0, -1):
            if full and len({_class(v[end]) for v in full}) == 1:
                ends[(i, end)] = _class(full[0][end])
    same_length = [(i, j) for i in range(width) for j in range(i + 1, width)
                   if all(_sized(r[i]) and _sized(r[j]) and len(r[i]) == len(r[j]) for r in rows)]  # fmt: skip
    pairs = []
    if len(rows) >= 2:
        for i in range(width):
            for j in range(width):
                if i != j and all(_number(r[i]) and _number(r[j]) and r[i] <= r[j] for r in rows):
                    pairs.append((i, j))

    def inside(args: str) -> bool:
        values = _values(args)
        if values is None or len(values) != width:
            return False
        if any(_FACTS[name](values[i]) is False for i, name in facts):
            return False
        if any(not isinstance(values[i], str) or not set(values[i]) <= c for i, c in chars.items()):
            return False
        if any(values[i] and _class(values[i][end]) != cls for (i, end), cls in ends.items()):
            return False
        if any(not (_sized(values[i]) and _sized(values[j]) and len(values[i]) == len(values[j]))
               for i, j in same_length):  # fmt: skip
            return False
        return all(values[i] <= values[j] for i, j in pairs)

    return inside


def _sized(v: Any) -> bool:
    return isinstance(v, str | list | tuple)


def _class(ch: str) -> str:
    return (
        "digit"
        if ch.isdigit()
        else "letter"
        if ch.isalpha()
        else "space"
        if ch.isspace()
        else "other"
    )


def _values(args: str) -> list[Any] | None:
    try:
        return list(ast.literal_eval(f"({args},)"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _sorted(v: Any) -> bool | None:
    if not isinstance(v, list | tuple | str) or len(v) < 2:
        return None
    try:
        return all(a <= b for a, b in zip(v, v[1:], strict=False))
    except TypeError:
        return None


# Each fact says True or False of a value, or None where it does not apply (a sign of a
# string): a fact counts where every given value says True, and a variant breaks it by
# saying False.
_FACTS: dict[str, Callable[[Any], bool | None]] = {
    "non_negative": lambda v: v >= 0 if _number(v) else None,
    "positive": lambda v: v > 0 if _number(v) else None,
    "non_empty": lambda v: len(v) > 0 if isinstance(v, str | list | tuple | dict) else None,
    "sorted": _sorted,
    "elements_non_negative": lambda v: (
        all(x >= 0 for x in v)
        if isinstance(v, list | tuple) and v and all(map(_number, v))
        else None
    ),
}
