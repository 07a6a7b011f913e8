"""Procedural tasks: programs of a chosen depth, written without a model.

A small model's solve rate depends on how many steps it must trace, so a family whose
programs are `depth` statements long spreads tasks over difficulty on purpose, where
proposals from a model land wherever the model happens to write. Each program is a chain
of simple statements on one integer (`int` family) or one list of integers (`list`
family), drawn from a seeded generator; the inputs are drawn too. The programs are
proposals without a model: `candidates` makes `selfplay.admission.Candidate`s, and
admission runs each one twice, builds its tests from the outputs and dedups it like any
other task. Nothing here computes an output.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from selfplay import kinds
from selfplay.admission.candidate import Candidate

SOURCE = "procedural"
FAMILIES = ("int", "list")
ENTRY_POINT = "f"

# One statement each; `{k}` is a small constant, `{j}` a second one.
_INT_STEPS: tuple[Callable[[random.Random], str], ...] = (
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
_LIST_STEPS: tuple[Callable[[random.Random], str], ...] = (
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


def program(family: str, depth: int, rng: random.Random) -> str:
    """`def f(...)` with `depth` statements of `family`, then the return."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family '{family}' (known: {', '.join(FAMILIES)})")
    if depth < 1:
        raise ValueError("depth must be at least 1")
    steps, var = (_INT_STEPS, "x") if family == "int" else (_LIST_STEPS, "xs")
    body = [rng.choice(steps)(rng) for _ in range(depth)]
    tail = f"return {var}" if family == "int" else "return xs"
    lines = "\n    ".join([*body, tail])
    return f"def {ENTRY_POINT}({var}):\n    {lines}\n"


def inputs(family: str, count: int, rng: random.Random) -> list[str]:
    """`count` distinct argument literals for the family's one parameter."""
    seen: dict[str, None] = {}
    while len(seen) < count:
        if family == "int":
            value = str(rng.randint(-9, 25))
        else:
            value = repr([rng.randint(-5, 12) for _ in range(rng.randint(3, 6))])
        seen.setdefault(value, None)
    return list(seen)


def candidates(
    kind: str = "deduction",
    depths: Iterable[int] = (1, 2, 3, 4, 5, 6),
    per_depth: int = 50,
    *,
    families: Iterable[str] = FAMILIES,
    seed: int = 0,
    n_inputs: int = 5,
) -> list[Candidate]:
    """`per_depth` candidates for each depth, the families taking turns; the same seed gives
    the same candidates. Each carries its depth in its tags and metadata, so a curriculum and
    an evaluation can read the difficulty it was made with."""
    kinds.get(kind)  # an unknown kind is one clear error, before anything is drawn
    rng = random.Random(seed)
    order = list(families)
    out = []
    for depth in depths:
        for n in range(per_depth):
            family = order[n % len(order)]
            out.append(
                Candidate.proposal(
                    f"{SOURCE}-s{seed}-{kind}-d{depth}-{n}",
                    kind,
                    program(family, depth, rng),
                    inputs(family, n_inputs, rng),
                    entry_point=ENTRY_POINT,
                    source=SOURCE,
                    tags=[SOURCE, f"depth-{depth}", family],
                    metadata={"depth": depth, "family": family, "seed": seed},
                )
            )
    return out
