"""Rows in, verdicts out: the records of `selfplay verify` and of `Verifier.grade`.

A row is untrusted input. `parse_row` turns a JSON object into a `Row` or raises
`InvalidRow` with one sentence naming the problem; the verifier turns that into a
verdict with status "invalid" instead of stopping the batch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("passed", "failed", "error", "timeout", "memory", "invalid")

# Bounds on what one row may ask for, so a row cannot switch the limits off. Memory is also
# capped by the machine's memory and the caller's own cgroup limit (see `Verifier`).
MAX_TIMEOUT_S = 600.0
MAX_MEMORY_MB = 64 * 1024
MAX_RESULT_ITEMS = 1_000_000_000


class InvalidRow(ValueError):
    """A row that cannot be graded; the message is one sentence."""


@dataclass(slots=True)
class IOTest:
    """A stdin/stdout test: feed `input`, compare stdout to `output`."""

    input: str
    output: str


@dataclass(slots=True)
class Row:
    """One program and its tests, as the verifier grades it.

    `calls` are Python expressions evaluated after the tests (for example
    `f(3, [1, 2])`); their values come back as `repr` strings in `Verdict.outputs`,
    which is how reference outputs are computed by execution, never trusted.
    `result_items` bounds the size (in values) of anything one call returns to the tests.
    """

    id: str
    program: str
    tests: list[str | IOTest]
    timeout_s: float | None = None
    memory_mb: int | None = None
    calls: list[str] = field(default_factory=list)
    result_items: int | None = None


@dataclass(slots=True)
class Verdict:
    """The verifier's answer for one row.

    `signals` are the reward-hacking attempts the sandbox observed in the row (names from
    `selfplay.verifier.SIGNALS`); they explain a verdict and never change one. `phases` are
    seconds per phase of the row's run (for profiling; not part of `to_dict`). `isolation`
    says whether the row ran in the sandbox ("sandbox") or without one ("none", only where
    that was explicitly asked for).
    """

    id: str
    passed: bool
    status: str
    tests_passed: int
    tests_total: int
    duration_s: float
    detail: str = ""
    outputs: list[str | None] | None = None
    signals: list[str] = field(default_factory=list)
    phases: dict[str, float] | None = None
    # How the row ran: "sandbox", or "none" where running without one was asked for.
    isolation: str = "sandbox"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["outputs"] is None:
            del d["outputs"]
        del d["phases"]
        d["duration_s"] = round(d["duration_s"], 6)
        return d


def invalid(row_id: str, detail: str, tests_total: int = 0) -> Verdict:
    return Verdict(row_id, False, "invalid", 0, tests_total, 0.0, detail)


def _positive_number(value: Any, name: str, upper: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRow(f"field '{name}' must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise InvalidRow(f"field '{name}' must be a positive number, got {value!r}")
    if value > upper:
        raise InvalidRow(f"field '{name}' must be at most {upper:g}, got {value!r}")
    return value


def parse_tests(raw_tests: Any) -> list[str | IOTest]:
    """Validate a `tests` field: Python snippets or stdin/stdout objects."""
    if not isinstance(raw_tests, list):
        raise InvalidRow("field 'tests' is missing or not a list")
    tests: list[str | IOTest] = []
    for i, t in enumerate(raw_tests):
        if isinstance(t, str):
            tests.append(t)
        elif (
            isinstance(t, dict)
            and isinstance(t.get("input"), str)
            and isinstance(t.get("output"), str)
        ):
            tests.append(IOTest(t["input"], t["output"]))
        else:
            raise InvalidRow(
                f"test {i} must be a string of Python or an object with string 'input' and 'output'"
            )
    return tests


def parse_row(obj: Any) -> Row:
    """Validate one decoded JSON object; unknown fields are ignored."""
    if not isinstance(obj, dict):
        raise InvalidRow(f"row must be a JSON object, got {type(obj).__name__}")
    row_id = obj.get("id")
    if not isinstance(row_id, str):
        raise InvalidRow("field 'id' is missing or not a string")
    program = obj.get("program")
    if not isinstance(program, str):
        raise InvalidRow("field 'program' is missing or not a string")
    tests = parse_tests(obj.get("tests"))
    calls = obj.get("calls", [])
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        raise InvalidRow("field 'calls' must be a list of strings")
    timeout_s = obj.get("timeout_s")
    if timeout_s is not None:
        timeout_s = float(_positive_number(timeout_s, "timeout_s", MAX_TIMEOUT_S))
    memory_mb = obj.get("memory_mb")
    if memory_mb is not None:
        memory_mb = int(_positive_number(memory_mb, "memory_mb", MAX_MEMORY_MB))
    result_items = obj.get("result_items")
    if result_items is not None:
        result_items = int(_positive_number(result_items, "result_items", MAX_RESULT_ITEMS))
    return Row(row_id, program, tests, timeout_s, memory_mb, calls, result_items)
