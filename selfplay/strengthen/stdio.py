"""Strengthening a stdin/stdout task: new input/output pairs, kept where they fail a wrong
program its own pairs let through.

The same steps as a function's (`strengthen`), on text:

1. Inputs: the task's own stdin texts, then near variants of them: one number token a small
   step away (one more or less, doubled, 0), every other character and the layout kept, and
   a token never negative where no given text has it negative.
2. Expected outputs: the reference runs on every input in the sandbox, twice, through a small
   runner (`RUNNER`: the program's source executed as `__main__` with that stdin, its stdout
   returned), and a pair is kept where both runs printed the same text.
3. Known-wrong programs: the reference's mutants (the whole module's) and three degenerate
   ones (printing nothing, an empty line, 0), each run on the task's own pairs and, through
   the runner, on every kept input. Outputs compare as the verifier compares stdout:
   trailing whitespace on each line and at the end ignored.
4. A greedy set cover keeps the fewest new pairs that fail the most wrong programs the task's
   own pairs let through, and the reference must pass them (checked, not assumed).
"""

from __future__ import annotations

import ast
import re
from itertools import zip_longest
from typing import Any

from selfplay.strengthen.inputs import spread
from selfplay.strengthen.mutants import mutants

RUNNER = """import contextlib, io, sys

_SOURCE = {source!r}


def _run(text):
    out = io.StringIO()
    sys.stdin = io.StringIO(text)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(_SOURCE, "<program>", "exec"), {{"__name__": "__main__"}})
    except SystemExit:
        pass
    finally:
        sys.stdin = sys.__stdin__
    return out.getvalue()
"""
DEGENERATE = ("pass\n", "print()\n", "print(0)\n")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")


def stdin_variants(text: str, limit: int = 24, non_negative: bool = False) -> list[str]:
    """Texts one number token away from `text` (`1 2\\n` -> `2 2\\n`, `1 3\\n`, ...), one
    token changed in each, steps of every token before a second step of any."""
    steps = []
    for m in _NUMBER.finditer(text):
        start, end = m.span()
        v = int(m.group())
        options = [v + 1, v - 1, 2 * v, 0, 2 * v + 1]
        steps.append([f"{text[:start]}{o}{text[end:]}" for o in options
                      if o != v and (o >= 0 or not non_negative)])  # fmt: skip
    return spread(steps, {text}, limit)


def same_stdout(a: str, b: str) -> bool:
    """As the verifier compares a program's stdout with a test's output."""
    return _norm(a) == _norm(b)


def strengthen_stdio(task: Any, verifier: Any, out: Any, *, per_task: int = 8,
                     synthesized: int = 20, mutant_limit: int = 48) -> Any:  # fmt: skip
    """Fill `out` (a `Strengthened`) for a stdin/stdout task."""
    from selfplay.strengthen.strengthen import keep, mutant_timeout, reference_outputs, tally

    given = [t["input"] for t in task.tests if isinstance(t, dict)]
    negative = any(int(m.group()) < 0 for g in given for m in _NUMBER.finditer(g))
    near = [v for group in zip_longest(*(stdin_variants(g, non_negative=not negative)
                                         for g in given)) for v in group if v is not None]  # fmt: skip
    inputs = list(dict.fromkeys([*given, *near]))[: len(given) + synthesized]
    calls = [f"_run({x!r})" for x in inputs]
    runner = RUNNER.format(source=task.program)
    first, second, expected = reference_outputs(
        verifier, runner, inputs, calls, _texts, lambda text: True
    )
    out.inputs = len(expected)
    if not expected:
        out.reason = "no_outputs"
        return out
    kept = list(expected)
    wrong = [m.program for m in mutants(task.program, None, mutant_limit)] + list(DEGENERATE)
    limit = mutant_timeout(first, second)
    own = verifier.grade([{"id": f"o{i}", "program": p, "tests": task.tests, "timeout_s": limit}
                          for i, p in enumerate(wrong)])  # fmt: skip
    ran = verifier.grade([{"id": f"r{i}", "program": RUNNER.format(source=p), "tests": [],
                           "calls": [f"_run({x!r})" for x in kept], "timeout_s": limit}
                          for i, p in enumerate(wrong)])  # fmt: skip
    outcomes = []
    for o, r in zip(own, ran, strict=True):
        differs = [t is None or not same_stdout(t, expected[x])
                   for x, t in zip(kept, _texts(r, kept), strict=True)]  # fmt: skip
        # Its own pairs pass and some new input never returned: undecided.
        outcomes.append((o.status != "passed", o.passed and r.status == "timeout", differs))
    killers, survivors = tally(out, outcomes, len(kept))
    return keep(out, verifier, task.program, killers, survivors, per_task,
                lambda j: {"input": kept[j], "output": expected[kept[j]]})  # fmt: skip


def _texts(verdict: Any, calls: list[Any]) -> list[str | None]:
    got = list(verdict.outputs or []) + [None] * len(calls)
    texts = []
    for raw in got[: len(calls)]:
        try:
            value = ast.literal_eval(raw) if raw is not None else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        texts.append(value if isinstance(value, str) else None)
    return texts


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().split("\n"))
