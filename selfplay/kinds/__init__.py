"""Task kinds: one module per kind, each owning its prompt, answer, ground truth and grading.

`get(name)` is the kind of a task; `NAMES` lists them in their canonical order. To add a kind,
write one module with a `Kind` subclass and register it here: nothing else in selfplay
branches on the kind's name.
"""

from selfplay.kinds.abduction import Abduction
from selfplay.kinds.base import (
    BAD_GROUND_TRUTH,
    NO_ANSWER,
    NOT_LITERAL,
    PASSED,
    WRONG_ANSWER,
    Kind,
    Score,
)
from selfplay.kinds.codegen import Codegen
from selfplay.kinds.deduction import Deduction
from selfplay.kinds.induction import Induction, shown_count

KINDS: dict[str, Kind] = {k.name: k for k in (Codegen(), Deduction(), Abduction(), Induction())}
NAMES = tuple(KINDS)


def get(name: str) -> Kind:
    """The kind called `name`; ValueError naming the known ones otherwise."""
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown task kind {name!r} (known: {', '.join(NAMES)})") from None


__all__ = [
    "BAD_GROUND_TRUTH",
    "KINDS",
    "NAMES",
    "NOT_LITERAL",
    "NO_ANSWER",
    "PASSED",
    "WRONG_ANSWER",
    "Kind",
    "Score",
    "get",
    "shown_count",
]
