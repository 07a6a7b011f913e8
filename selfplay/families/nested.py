"""Nested data: a chain of `level` statements on a list of lists of integers (per-row
comprehensions, filters on rows, sorting rows by a key, appending summaries)."""

from __future__ import annotations

import random

from selfplay.families.base import Drawn, Family, chain, distinct, int_list, register

STEPS = (
    lambda r: f"rows = [row for row in rows if len(row) > {r.randint(1, 2)}]",
    lambda r: f"rows = [[v + {r.randint(1, 4)} for v in row] for row in rows]",
    lambda r: "rows = [sorted(row) for row in rows]",
    lambda r: "rows = [row[::-1] for row in rows]",
    lambda r: "rows = sorted(rows, key=sum)",
    lambda r: "rows = [row + [len(row)] for row in rows]",
    lambda r: f"rows = [row[:{r.randint(1, 3)}] for row in rows]",
    lambda r: f"rows = [[v for v in row if v % 2 == {r.randint(0, 1)}] for row in rows]",
    lambda r: "rows = rows + [[sum(row) for row in rows]]",
    lambda r: "rows = [row for row in rows if row]",
)


@register
class Nested(Family):
    name = "nested"
    skill = "lists of lists: per-row transforms, filters and sorting"
    knob = "statements in the chain"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        program = chain("rows", STEPS, level, rng)

        def rows() -> str:
            return repr([int_list(rng, 0, 9, (1, 4)) for _ in range(rng.randint(2, 4))])

        return Drawn(program, distinct(n_inputs, rows))
