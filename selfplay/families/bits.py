"""Bit and modular arithmetic: a chain of `level` statements on one non-negative integer
(xor, and, or, shifts, popcount, products and powers modulo a small number)."""

from __future__ import annotations

import random

from selfplay.families.base import Drawn, Family, chain, distinct, register

STEPS = (
    lambda r: f"x = x ^ {r.randint(1, 15)}",
    lambda r: f"x = x & {r.randint(7, 63)}",
    lambda r: f"x = x | {r.randint(1, 12)}",
    lambda r: f"x = x << {r.randint(1, 2)}",
    lambda r: f"x = x >> {r.randint(1, 2)}",
    lambda r: f"x = (x * {r.randint(2, 7)}) % {r.randint(7, 31)}",
    lambda r: f"x = pow(x, 2, {r.randint(7, 31)})",
    lambda r: "x = bin(x).count('1')",
    lambda r: f"x = (x + {r.randint(1, 9)}) % {r.randint(5, 17)}",
)


@register
class Bits(Family):
    name = "bits"
    skill = "bitwise operators, popcount and modular arithmetic"
    knob = "statements in the chain"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        program = chain("x", STEPS, level, rng)
        return Drawn(program, distinct(n_inputs, lambda: str(rng.randint(0, 63))))
