"""Row builders and sample programs shared by the task bank tests."""

from __future__ import annotations

import json
from pathlib import Path


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


SUM_EVENS = '''def sum_evens(nums):
    """Sum of the even numbers."""
    total = 0
    for n in nums:
        if n % 2 == 0:
            total += n
    return total
'''
CLAMP = '''def clamp(x, lo, hi):
    """Return x limited to the range lo..hi."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''
SUM_ODDS = SUM_EVENS.replace("== 0", "== 1").replace("sum_evens", "sum_odds").replace("even", "odd")


def codegen_row(program: str, entry: str, tests: list, prompt: str = "", **extra) -> dict:
    return {
        "kind": "codegen",
        "prompt": prompt or f"Write `{entry}`.",
        "program": program,
        "entry_point": entry,
        "tests": tests,
        **extra,
    }


def add_tasks(bank, tasks, **options):
    """`Bank.add_tasks` with the keys admission would compute (the bank computes none)."""
    from selfplay.admission.dedup import keys

    hashes, dedup_keys = keys(tasks)
    return bank.add_tasks(tasks, ast_hashes=hashes, dedup_keys=dedup_keys, **options)


def io_task(kind: str, program: str, inputs: list[str], outputs: list[str], **extra):
    """A bank task of `kind` whose program `f` maps each input to its output: tests and
    examples both, validated by the bank's own reader."""
    from selfplay.admission.schema import parse_task

    row = {
        "kind": kind,
        "prompt": extra.pop("prompt", f"A {kind} task."),
        "program": program,
        "entry_point": "f",
        "tests": [f"assert f({x}) == {y}" for x, y in zip(inputs, outputs, strict=True)],
        "examples": [{"input": x, "output": y} for x, y in zip(inputs, outputs, strict=True)],
        **extra,
    }
    return parse_task(row, source="test")
