"""What a procedural family is, and the registry of them.

A family draws programs of one skill (integer chains, strings, recursion...) at a chosen
level of its difficulty knob, with inputs that fit them; it never computes an output
(admission runs the program in the sandbox for that). The knob is a count a solver must
trace: statements in a chain, recursive calls, sorting passes. So a higher level means a
longer execution to follow, which is what makes a small model fail more often
(`benchmarks/procedural_difficulty.py` measures it on a real model; the families' tests on a
scripted tracer).

A new family is one module: a `Family` subclass with `name`, `skill`, `knob` and `draw`,
decorated with `@register`. `selfplay.families` imports the built-in ones.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ENTRY_POINT = "f"
# The levels a family is drawn at by default, and the difficulty scale of the rest of the
# project (`metadata["difficulty"]`, 1 to 5: the export's bands and a task's prior).
LEVELS = (1, 2, 3, 4, 5)
MAX_LEVEL = 50


def difficulty(level: int) -> int:
    """The one mapping from a family's level to `metadata["difficulty"]` (1 to 5): levels 1
    to 5 are themselves, deeper levels of a counted knob are the hardest band."""
    return max(1, min(5, int(level)))


@dataclass(frozen=True, slots=True)
class Drawn:
    """One program of a family and the argument lists it is called with (`f(<input>)`)."""

    program: str
    inputs: list[str]


class Family:
    """A procedural family: `draw(level, rng, n_inputs) -> Drawn`."""

    name: str = ""
    skill: str = ""  # what a solver must do, in a few words
    knob: str = ""  # what the level counts

    def draw(self, level: int, rng: random.Random, n_inputs: int) -> Drawn:
        raise NotImplementedError


FAMILIES: dict[str, Family] = {}


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: add one instance of `cls` to the registry under `cls.name`."""
    if not cls.name or cls.name in FAMILIES:
        raise ValueError(f"a procedural family needs a new name, not {cls.name!r}")
    FAMILIES[cls.name] = cls()
    return cls


def get(name: str) -> Family:
    """The family called `name`; ValueError naming the known ones otherwise."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(
            f"unknown procedural family {name!r} (known: {', '.join(FAMILIES)})"
        ) from None


# -- helpers the families share ---------------------------------------------------------

Step = Callable[[random.Random], str]


def chain(param: str, steps: Sequence[Step], level: int, rng: random.Random,
          head: Sequence[str] = (), var: str | None = None) -> str:  # fmt: skip
    """`def f(param)`: the `head` lines, `level - len(head)` drawn steps, `return var`
    (`param` unless named). Each step is one statement on `var` (indented blocks written with
    8 spaces); the head counts as steps, since a solver traces it too."""
    body = [*head, *(rng.choice(steps)(rng) for _ in range(level - len(head)))]
    lines = "\n    ".join([*body, f"return {var or param}"])
    return f"def {ENTRY_POINT}({param}):\n    {lines}\n"


def distinct(count: int, draw: Callable[[], str], tries: int = 1000) -> list[str]:
    """`count` distinct literals from `draw` (fewer only if the space is that small)."""
    seen: dict[str, None] = {}
    for _ in range(tries):
        if len(seen) == count:
            break
        seen.setdefault(draw(), None)
    return list(seen)


def int_list(rng: random.Random, lo: int, hi: int, length: tuple[int, int]) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(*length))]
