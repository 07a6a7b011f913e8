"""What grading needs, as a self-contained JSON string: the exported label of every task.

The ground truth travels inside the dataset (verl's `reward_model.ground_truth`, TRL's
`ground_truth` column, OpenRLHF's `label`), so a trainer needs neither the bank nor this
package's storage code to compute a reward, only `selfplay.rewards` and the verifier.

Per kind:
- codegen: `tests` (and `entry_point`); the response's program must pass them.
- deduction: `input` shown with `program`; `expected` is the output literal.
- abduction: `program`, `entry_point` and `expected` (the output to reach); the response
  gives arguments, which are run through the program in the verifier.
- induction: `examples` (inputs with output literals), the first `shown` of them in the
  prompt; the response's program must reproduce all of them, so hard-coding the shown
  ones fails on the held-out rest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

FORMAT = "selfplay.ground_truth/1"
KINDS = ("codegen", "deduction", "abduction", "induction")


class InvalidGroundTruth(ValueError):
    """A label that cannot be graded against; the message is one sentence."""


def shown_count(n_examples: int) -> int:
    """How many induction examples the prompt shows: half, rounded up, never all of them."""
    if n_examples < 2:
        return n_examples
    return min((n_examples + 1) // 2, n_examples - 1)


@dataclass(slots=True)
class GroundTruth:
    kind: str
    entry_point: str | None = None
    tests: list[Any] = field(default_factory=list)
    program: str | None = None
    input: str | None = None
    expected: str | None = None
    examples: list[dict[str, str]] = field(default_factory=list)
    shown: int = 0
    timeout_s: float | None = None

    @classmethod
    def from_task(cls, task: Any) -> GroundTruth:
        """Build from anything shaped like a bank task (kind, program, entry_point, tests,
        examples); the bank itself is not imported."""
        kind = task.kind
        examples = [dict(e) for e in (task.examples or []) if e.get("output") is not None]
        gt = cls(kind=kind, entry_point=task.entry_point)
        if kind == "codegen":
            gt.tests = list(task.tests)
        elif kind in ("deduction", "abduction"):
            if not examples:
                raise InvalidGroundTruth(f"a {kind} task needs an example with its output")
            gt.program = task.program
            gt.input = examples[0]["input"] if kind == "deduction" else None
            gt.expected = examples[0]["output"]
        elif kind == "induction":
            if len(examples) < 2:
                raise InvalidGroundTruth("an induction task needs at least two examples")
            gt.examples = [{"input": e["input"], "output": e["output"]} for e in examples]
            gt.shown = shown_count(len(examples))
        else:
            raise InvalidGroundTruth(f"unknown kind {kind!r}")
        return gt

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "kind": self.kind}
        for name in ("entry_point", "tests", "program", "input", "expected", "examples"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.kind == "induction":
            out["shown"] = self.shown
        if self.timeout_s:
            out["timeout_s"] = self.timeout_s
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def parse(cls, value: str | dict[str, Any] | GroundTruth) -> GroundTruth:
        """Read a label (JSON string or decoded dict); raises InvalidGroundTruth."""
        if isinstance(value, GroundTruth):
            return value
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise InvalidGroundTruth("the ground truth is not valid JSON") from None
        if not isinstance(value, dict):
            raise InvalidGroundTruth("the ground truth must be a JSON object")
        if value.get("format") != FORMAT:
            raise InvalidGroundTruth(f"the ground truth is not in the {FORMAT} format")
        kind = value.get("kind")
        if kind not in KINDS:
            raise InvalidGroundTruth(f"the ground truth has an unknown kind {kind!r}")
        gt = cls(
            kind=kind,
            entry_point=value.get("entry_point"),
            tests=list(value.get("tests") or []),
            program=value.get("program"),
            input=value.get("input"),
            expected=value.get("expected"),
            examples=list(value.get("examples") or []),
            shown=int(value.get("shown") or 0),
            timeout_s=value.get("timeout_s"),
        )
        missing = {
            "codegen": ("tests",),
            "deduction": ("expected",),
            "abduction": ("program", "entry_point", "expected"),
            "induction": ("examples", "entry_point"),
        }[kind]
        for name in missing:
            if not getattr(gt, name):
                raise InvalidGroundTruth(f"a {kind} ground truth needs '{name}'")
        return gt
