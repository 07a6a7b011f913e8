"""String manipulation: a chain of `level` statements on one string (slicing, case,
replace, split and join, sorting characters)."""

from __future__ import annotations

import random

from selfplay.families.base import Drawn, Family, chain, distinct, register

LETTERS = "abcde"


def _c(r: random.Random) -> str:
    return r.choice(LETTERS)


STEPS = (
    lambda r: "s = s[::-1]",
    lambda r: "s = s.upper()",
    lambda r: "s = s.lower()",
    lambda r: "s = s.swapcase()",
    lambda r: f"s = s.replace({_c(r)!r}, {_c(r) * r.randint(1, 2)!r})",
    lambda r: f"s = s[{r.randint(1, 2)}:]",
    lambda r: f"s = s + s[:{r.randint(1, 3)}]",
    lambda r: "s = ''.join(sorted(s))",
    lambda r: "s = s[::2]",
    lambda r: f"s = s.strip({_c(r)!r})",
    lambda r: f"s = {r.choice('-.x')!r}.join(s.split({_c(r)!r}))",
    lambda r: f"s = s * 2 if len(s) < {r.randint(3, 6)} else s",
)


@register
class Strings(Family):
    name = "strings"
    skill = "string slicing, case, replace, split and join"
    knob = "statements in the chain"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        program = chain("s", STEPS, level, rng)
        word = lambda: repr("".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 7))))  # noqa: E731
        return Drawn(program, distinct(n_inputs, word))
