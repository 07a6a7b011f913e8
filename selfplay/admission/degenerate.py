"""The degenerate-response probe: tests that an empty array or a None satisfies are weak.

A policy learns whatever a task's tests allow. Some tests allow an answer that computes
nothing: `np.allclose(f(x), 3.14)` is true of an empty array (true over zero elements), a
test that only checks `f(x) is not None` passes any value. Each codegen task, once it has
passed its own tests twice, runs those tests again against programs whose entry point
returns one degenerate value whatever it is given (`PROBES`). A probe that passes shows that
the tests accept an answer that does no work:
- where the task's reference itself returns that very value on every call admission made
  (a task whose answer is honestly `[]`), the task is kept and flagged
  (`metadata["degenerate_passes"]`: the probes that passed);
- otherwise it is turned away as `weak_tests`, the probes named in the detail.

Deduction, abduction and induction need no probe: their grading compares the answer with
the reference's own outputs, and a proposal whose outputs are all one value is already
turned away (`constant_output`).
"""

from __future__ import annotations

import ast
from typing import Any

from selfplay.admission.candidate import Candidate, Reason

# name -> the expression the probe's entry point returns. numpy's are what float-tolerance
# tests accept (an empty array, a zero-size 2-D one, a fully masked one).
PROBES: dict[str, str] = {
    "none": "None",
    "empty_list": "[]",
    "empty_tuple": "()",
    "empty_str": "''",
    "empty_dict": "{}",
    "empty_set": "set()",
    "zero": "0",
    "false": "False",
    "nan": "float('nan')",
    "empty_array": "np.array([])",
    "zero_size_2d": "np.empty((0, 1))",
    "masked": "np.ma.masked_all((1,))",
    "equals_everything": "_Any()",
}
# What each plain probe returns, as a value: a passing probe is honest where every output of
# the reference equals it as the tests compare (`0 == False`, `0.0 == 0`); NaN by its repr.
_VALUES = {"none": None, "empty_list": [], "empty_tuple": (), "empty_str": "", "empty_dict": {},
           "empty_set": set(), "zero": 0, "false": False}  # fmt: skip
_ANY = (
    "class _Any:\n"
    "    def __eq__(self, other):\n        return True\n"
    "    def __ne__(self, other):\n        return False\n"
    "    __hash__ = object.__hash__\n"
)
KINDS = ("codegen",)
NUMPY_HEAD = "import numpy as np\n\n"


def probes_for(c: Candidate) -> bool:
    return c.task is not None and c.task.kind in KINDS and bool(c.task.entry_point)


def program(name: str, entry_point: str) -> str:
    expr = PROBES[name]
    head = NUMPY_HEAD if expr.startswith("np.") else ""
    helper = _ANY + "\n\n" if name == "equals_everything" else ""
    return f"{head}{helper}def {entry_point}(*args, **kwargs):\n    return {expr}\n"


def rows(c: Candidate, tag: str, timeout_s: float | None) -> list[dict[str, Any]]:
    """One verifier row per probe: the probe's program on the task's own tests."""
    assert c.task is not None and c.task.entry_point
    out = []
    for name in PROBES:
        row: dict[str, Any] = {"id": f"{tag}:{name}", "program": program(name, c.task.entry_point),
                               "tests": c.task.all_tests, "calls": []}  # fmt: skip
        if timeout_s:
            row["timeout_s"] = timeout_s
        out.append(row)
    return out


def grade(verifier: Any, rows: list[dict[str, Any]]) -> list[Any]:
    """The probes' verdicts, in order. The numpy probes go to a pool whose zygotes imported
    numpy already (`Verifier.with_preload`), where the verifier can make one: otherwise
    each would import it in both of its processes, ten times the cost of the rest of the
    row. Their programs are constants, so numpy's state shared across rows changes nothing."""
    preloaded = getattr(verifier, "with_preload", None)
    heavy = [n for n, r in enumerate(rows) if r["program"].startswith(NUMPY_HEAD)]
    if preloaded is None or not heavy:
        return verifier.grade(rows)
    light = sorted(set(range(len(rows))) - set(heavy))
    verdicts: list[Any] = [None] * len(rows)
    for order, pool in ((heavy, preloaded(["numpy"])), (light, verifier)):
        for n, verdict in zip(order, pool.grade([rows[n] for n in order]), strict=True):
            verdicts[n] = verdict
    return verdicts


def _same(output: str, probe: str) -> bool:
    """The reference's output (a repr) is the probe's own value."""
    if probe == "nan":
        return output == "nan"
    if probe not in _VALUES:
        return False
    try:
        value = ast.literal_eval(output)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return type(value) in (type(None), bool, int, float, str, list, tuple, dict, set) and bool(
        value == _VALUES[probe]
    )


def judge(c: Candidate, passed: list[str]) -> Reason | None:
    """`weak_tests` where a probe passed that the reference's own outputs do not explain;
    a flag on the task where they do."""
    if not passed:
        return None
    outputs = [o for o in c.outputs if o is not None]
    honest = [p for p in passed if outputs and all(_same(o, p) for o in outputs)]
    if len(honest) == len(passed):
        assert c.task is not None
        c.task.metadata = {**(c.task.metadata or {}), "degenerate_passes": honest}
        return None
    weak = [p for p in passed if p not in honest]
    return Reason("weak_tests", f"its tests pass a program returning {', '.join(weak)}")
