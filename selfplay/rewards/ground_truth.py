"""What grading needs, as a self-contained JSON string: the exported label of every task.

The ground truth travels inside the dataset (verl's `reward_model.ground_truth`, TRL's
`ground_truth` column, OpenRLHF's `label`), so a trainer needs neither the bank nor this
package's storage code to compute a reward, only `selfplay.rewards` and the verifier. Which
fields a kind puts there is the kind's business (`selfplay.kinds`); `reward` says how a
response is scored: `binary` (1 for a verified answer, else 0) or `fraction` (the share of
tests or examples passed), so the reward function needs no flag of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from selfplay import kinds
from selfplay.task import Task

FORMAT = "selfplay.ground_truth/1"
KINDS = kinds.NAMES
REWARDS = ("binary", "fraction")


class InvalidGroundTruth(ValueError):
    """A label that cannot be graded against; the message is one sentence."""


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
    reward: str = "binary"
    # codegen: the task's own reference returns a degenerate value (None, [], NaN...) on every
    # call admission made, so a pass that returned only such values is honest here.
    degenerate_ok: bool = False
    # codegen: how many of `tests`, at the end, were added after admission (`selfplay bank
    # strengthen`); `original()` grades on the tests the task came with.
    strengthened: int = 0

    def original(self) -> GroundTruth:
        """This label with only the tests the task came with."""
        if not self.strengthened:
            return self
        return replace(self, tests=self.tests[: len(self.tests) - self.strengthened],
                       strengthened=0)  # fmt: skip

    @classmethod
    def from_task(cls, task: Task, reward: str = "binary") -> GroundTruth:
        """Build from anything shaped like a bank task (kind, program, entry_point, tests,
        examples); the bank itself is not imported."""
        try:
            kind = kinds.get(task.kind)
            fields = kind.ground_truth(task)
        except ValueError as e:
            raise InvalidGroundTruth(str(e)) from None
        if reward not in REWARDS:
            raise InvalidGroundTruth(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        return cls(kind=task.kind, reward=reward, **fields)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "kind": self.kind}
        for name in ("entry_point", "tests", "program", "input", "expected", "examples"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.kind == "induction" or self.shown:
            out["shown"] = self.shown
        if self.timeout_s:
            out["timeout_s"] = self.timeout_s
        if self.reward != "binary":
            out["reward"] = self.reward
        if self.degenerate_ok:
            out["degenerate_ok"] = True
        if self.strengthened:
            out["strengthened"] = self.strengthened
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
        try:
            kind = kinds.get(value.get("kind"))
        except ValueError:
            raise InvalidGroundTruth(
                f"the ground truth has an unknown kind {value.get('kind')!r}"
            ) from None
        reward = value.get("reward", "binary")
        if reward not in REWARDS:
            raise InvalidGroundTruth(f"the ground truth has an unknown reward {reward!r}")
        try:
            gt = cls(
                kind=kind.name,
                entry_point=value.get("entry_point"),
                tests=list(value.get("tests") or []),
                program=value.get("program"),
                input=value.get("input"),
                expected=value.get("expected"),
                examples=list(value.get("examples") or []),
                shown=int(value.get("shown") or 0),
                timeout_s=value.get("timeout_s"),
                reward=reward,
                degenerate_ok=value.get("degenerate_ok") is True,
                strengthened=int(value.get("strengthened") or 0),
            )
        except (TypeError, ValueError):
            raise InvalidGroundTruth("the ground truth has a field of the wrong type") from None
        for name in kind.required:
            if not getattr(gt, name):
                raise InvalidGroundTruth(f"a {kind.name} ground truth needs '{name}'")
        if not 0 <= gt.strengthened < max(len(gt.tests), 1):
            raise InvalidGroundTruth("the ground truth's 'strengthened' leaves no original test")
        return gt
