"""Dict and counter aggregation: count the items of a list into a dict, then `level - 1`
statements on the dict (filters, rescaling, renaming keys, re-ordering)."""

from __future__ import annotations

import random

from selfplay.families.base import Drawn, Family, chain, distinct, register

LETTERS = "abcd"
COUNT = "d = {}\n    for x in xs:\n        d[x] = d.get(x, 0) + 1"


def _c(r: random.Random) -> str:
    return r.choice(LETTERS)


def _bump(key: str, by: int) -> str:
    return f"d[{key!r}] = d.get({key!r}, 0) + {by}"


STEPS = (
    lambda r: f"d = {{k: v for k, v in d.items() if v > {r.randint(1, 2)}}}",
    lambda r: f"d = {{k: v * {r.randint(2, 3)} for k, v in d.items()}}",
    lambda r: _bump(_c(r), r.randint(1, 4)),
    lambda r: "d = dict(sorted(d.items()))",
    lambda r: f"d = {{k: v for k, v in d.items() if k != {_c(r)!r}}}",
    lambda r: "d = {k: v - 1 for k, v in d.items()}",
    lambda r: "d = dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))",
    lambda r: "d = {k.upper(): v for k, v in d.items()}",
    lambda r: f"d = {{k: v % {r.randint(2, 3)} for k, v in d.items()}}",
)


@register
class Counting(Family):
    name = "counting"
    skill = "counting into a dict and transforming it"
    knob = "statements, the counting loop included"

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        program = chain("xs", STEPS, level, rng, head=[COUNT], var="d")

        def items() -> str:
            return repr([rng.choice(LETTERS) for _ in range(rng.randint(4, 8))])

        return Drawn(program, distinct(n_inputs, items))
