"""Recursion: a recursive function whose input sets how many calls a solver must follow.

The level is the knob on the inputs, not the program: at level L a linear recursion is
called on about 2L, a recursion by halves of the distance on about 4L, a digit recursion
on numbers of L + 1 digits and a list recursion on lists of L + 1 items."""

from __future__ import annotations

import random

from selfplay.families.base import ENTRY_POINT, Drawn, Family, distinct, register


def _linear(r: random.Random) -> str:
    step = r.choice(["n + f(n - 1)", "n - f(n - 1)", f"f(n - 1) + n % {r.randint(2, 4)}",
                     f"2 * f(n - 1) - {r.randint(1, 3)}"])  # fmt: skip
    return f"if n <= 0:\n        return {r.randint(0, 3)}\n    return {step}"


def _by_two(r: random.Random) -> str:
    return (f"if n < 2:\n        return n + {r.randint(0, 3)}\n"
            f"    return f(n - 2) + {r.choice(['1', '2', 'n % 3', 'n // 4'])}")  # fmt: skip


def _digits(r: random.Random) -> str:
    step = r.choice(["n % 10 + f(n // 10)", "f(n // 10) * 2 + n % 10", "max(n % 10, f(n // 10))"])
    return f"if n < 10:\n        return n\n    return {step}"


def _items(r: random.Random) -> str:
    step = r.choice(["xs[0] + f(xs[1:])", "xs[0] - f(xs[1:])", "max(xs[0], f(xs[1:])) + 1",
                     "f(xs[1:]) * 2 + xs[0]"])  # fmt: skip
    return f"if not xs:\n        return {r.randint(0, 2)}\n    return {step}"


@register
class Recursion(Family):
    name = "recursion"
    skill = "following recursive calls to their base case"
    knob = "recursive calls (set by the input's size)"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        shape = rng.choice(("linear", "by_two", "digits", "items"))
        width = n_inputs + 2
        if shape == "items":
            body, param = _items(rng), "xs"
            draw = lambda: repr([rng.randint(0, 9) for _ in range(level + 1)])  # noqa: E731
        elif shape == "digits":
            body, param = _digits(rng), "n"
            draw = lambda: str(rng.randint(10**level, 10 ** (level + 1) - 1))  # noqa: E731
        else:
            body, param = (_linear(rng), "n") if shape == "linear" else (_by_two(rng), "n")
            lo = (2 if shape == "linear" else 4) * level - 1
            span = width if shape == "linear" else 2 * width
            draw = lambda: str(rng.randint(lo, lo + span - 1))  # noqa: E731
        program = f"def {ENTRY_POINT}({param}):\n    {body}\n"
        return Drawn(program, distinct(n_inputs, draw))
