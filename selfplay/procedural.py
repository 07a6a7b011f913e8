"""Procedural tasks: programs of a chosen family and level, written without a model.

A small model's solve rate depends on how much it must trace, so families whose level sets
that amount spread tasks over difficulty on purpose, where proposals from a model land
wherever the model happens to write. The families (`selfplay.families`, one module each)
draw programs and inputs from a seeded generator; `candidates` makes them
`selfplay.admission.Candidate`s, and admission runs each one twice, builds its tests from the
outputs and dedups it like any other task. Nothing here computes an output.

Each task carries its family and level where the rest of the project reads them:
`metadata` (`family`, `level`, `difficulty` through `families.difficulty`, `seed`) and the
tags `family:<name>` (the difficulty graph's skill) and `level-<n>` (the graph links a level
to the one below it, so `frontier` sees levels as prerequisites).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from selfplay import families as registry
from selfplay import kinds
from selfplay.admission.candidate import Candidate

SOURCE = "procedural"
ENTRY_POINT = registry.ENTRY_POINT


def tags(family: str, level: int) -> list[str]:
    """A procedural task's tags: its family first (the graph's skill), then its level."""
    return [f"family:{family}", f"level-{level}", SOURCE]


def candidates(
    kind: str = "deduction",
    levels: Iterable[int] = registry.LEVELS,
    per_level: int = 50,
    *,
    families: Iterable[str] | None = None,
    seed: int = 0,
    n_inputs: int = 5,
) -> list[Candidate]:
    """`per_level` candidates for each level, the families (default: all) taking turns; the
    same seed gives the same candidates, another seed other ones."""
    kinds.get(kind)  # an unknown kind is one clear error, before anything is drawn
    order = [registry.get(name) for name in (families or registry.FAMILIES)]
    levels = list(levels)
    bad = [lv for lv in levels if not 1 <= lv <= registry.MAX_LEVEL]
    if bad:
        raise ValueError(f"levels run from 1 to {registry.MAX_LEVEL}, not {bad[0]}")
    rng = random.Random(seed)
    out = []
    for level in levels:
        for n in range(per_level):
            family = order[n % len(order)]
            drawn = family.draw(level, rng, n_inputs)
            out.append(
                Candidate.proposal(
                    f"{SOURCE}-s{seed}-{kind}-{family.name}-l{level}-{n}",
                    kind,
                    drawn.program,
                    drawn.inputs,
                    entry_point=ENTRY_POINT,
                    source=SOURCE,
                    tags=tags(family.name, level),
                    metadata={
                        "family": family.name,
                        "level": level,
                        "difficulty": registry.difficulty(level),
                        "seed": seed,
                    },
                )
            )
    return out
