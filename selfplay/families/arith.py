"""Integer arithmetic: a chain of `level` statements on one integer (operators, `//` and `%`,
`abs`, `max`/`min`, a branch, a small loop)."""

from __future__ import annotations

import random

from selfplay.families.base import Drawn, Family, chain, distinct, register

STEPS = (
    lambda r: f"x = x + {r.randint(1, 9)}",
    lambda r: f"x = x - {r.randint(1, 9)}",
    lambda r: f"x = x * {r.randint(2, 3)}",
    lambda r: f"x = x // {r.randint(2, 4)}",
    lambda r: f"x = x % {r.randint(5, 13)}",
    lambda r: f"x = abs(x - {r.randint(1, 15)})",
    lambda r: f"x = max(x, {r.randint(-5, 10)})",
    lambda r: f"x = min(x, {r.randint(5, 30)})",
    lambda r: f"if x % 2 == 0:\n        x = x // 2\n    else:\n        x = x + {r.randint(1, 5)}",
    lambda r: f"if x > {r.randint(0, 10)}:\n        x = x - {r.randint(2, 7)}",
    lambda r: f"for i in range({r.randint(2, 4)}):\n        x = x + i",
)


@register
class Arith(Family):
    name = "arith"
    skill = "integer arithmetic, branches and small loops"
    knob = "statements in the chain"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        program = chain("x", STEPS, level, rng)
        return Drawn(program, distinct(n_inputs, lambda: str(rng.randint(-9, 25))))
