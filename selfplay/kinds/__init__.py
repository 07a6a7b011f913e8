"""Task kinds: one module per kind, each owning its prompts, answer, ground truth and grading.

`get(name)` is the kind of a task; `NAMES` lists them in their canonical order (the built-in
ones, then those registered later). `chat(task)` and `reference_answer(task)` are what a
task's kind shows and answers. To add a kind, write `<name>.py` (a `Kind` subclass) with
`<name>.solve.tmpl` and `<name>.propose.tmpl` beside it and call `register_dir` on their
directory (`selfplay.kinds.registry`); nothing else in selfplay branches on the kind's name.
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
from selfplay.kinds.registry import (
    KINDS,
    NAMES,
    KindError,
    chat,
    get,
    reference_answer,
    register,
    register_dir,
    unregister,
)

for _kind in (Codegen(), Deduction(), Abduction(), Induction()):
    register(_kind)
del _kind

__all__ = [
    "BAD_GROUND_TRUTH",
    "KINDS",
    "NAMES",
    "NOT_LITERAL",
    "NO_ANSWER",
    "PASSED",
    "WRONG_ANSWER",
    "Kind",
    "KindError",
    "Score",
    "chat",
    "get",
    "reference_answer",
    "register",
    "register_dir",
    "shown_count",
    "unregister",
]
