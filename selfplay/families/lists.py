"""List transforms: a chain of `level` statements on one list of integers (comprehensions,
filters, sorting, slicing, rotation)."""

from __future__ import annotations

import random

from selfplay.families.base import Drawn, Family, chain, distinct, int_list, register

STEPS = (
    lambda r: f"xs = [v + {r.randint(1, 5)} for v in xs]",
    lambda r: f"xs = [v * {r.randint(2, 3)} for v in xs]",
    lambda r: f"xs = [v for v in xs if v % {r.randint(2, 3)} != 0]",
    lambda r: f"xs = [v for v in xs if v > {r.randint(-2, 6)}]",
    lambda r: "xs = sorted(xs)",
    lambda r: "xs = xs[::-1]",
    lambda r: f"xs = xs[:{r.randint(2, 4)}]",
    lambda r: "xs = xs[1:] + xs[:1]",
    lambda r: f"xs = xs + [len(xs) * {r.randint(1, 3)}]",
    lambda r: f"xs = [v % {r.randint(4, 9)} for v in xs]",
)


@register
class Lists(Family):
    name = "lists"
    skill = "list comprehensions, filters, slices and sorting"
    knob = "statements in the chain"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        program = chain("xs", STEPS, level, rng)
        return Drawn(program, distinct(n_inputs, lambda: repr(int_list(rng, -5, 12, (3, 6)))))
