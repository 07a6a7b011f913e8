"""`edge_cases`: argument lists a model writes for a task, as more inputs for `strengthen`.

The model sees the task's statement (its prompt, not the reference) and writes calls of the
entry point with edge-case arguments, EvalPlus's and CURE's source of inputs besides
mutation. Only the arguments are taken: the expected values are always the reference's,
computed in the sandbox, and a call whose arguments are no literal is dropped. The inputs then
go through the same checks as every other (inside the task's domain, answered the same way
twice, and kept only where they fail a wrong solution).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from selfplay.prompts import render
from selfplay.proposer.parse import inputs_from

EDGE_CASES = 8  # calls asked of the model per task


def edge_cases(tasks: list[Any], backend: Any, *, count: int = EDGE_CASES,
               max_new_tokens: int = 256,
               progress: Callable[[int, int], None] | None = None) -> dict[str, list[str]]:  # fmt: skip
    """Task id -> the literal argument lists the model wrote for it (greedy, one sample)."""
    from selfplay.backends import Sampling

    asked = [t for t in tasks if t.kind == "codegen" and t.entry_point]
    prompts = [render("strengthen_edge_cases", prompt=t.prompt.strip(), entry=t.entry_point,
                      count=count) for t in asked]  # fmt: skip
    if progress is not None:
        progress(0, len(prompts))
    results = backend.generate(prompts, 1, Sampling(temperature=0.0, max_new_tokens=max_new_tokens))
    if progress is not None:
        progress(len(prompts), len(prompts))
    return {t.id: inputs_from(p.prefill, r[0].text, t.entry_point, count)
            for t, p, r in zip(asked, prompts, results, strict=True)}  # fmt: skip
