"""Grade model responses against exported ground truth: one score per response.

All responses that need execution in one call go to the verifier as one batch. Deduction
needs no execution (its expected value was computed by running the reference when the
task was admitted), abduction runs the reference program on the proposed arguments, and
code kinds run the response's program against the tests or the examples. Model-written
code only ever runs inside the verifier.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from selfplay.rewards.extract import (
    answer_text,
    last_code_block,
    parse_arguments,
    parse_literal,
    same_repr_value,
)
from selfplay.rewards.ground_truth import GroundTruth, InvalidGroundTruth

# Reasons a response scores 0, besides a verifier status (failed, error, timeout, memory).
NO_ANSWER = "no_answer"
NOT_LITERAL = "not_literal"
WRONG_ANSWER = "wrong_answer"
BAD_GROUND_TRUTH = "bad_ground_truth"
PASSED = "passed"


@dataclass(slots=True)
class Score:
    """A response's reward and why: `reason` is "passed" or why it scored 0."""

    score: float
    reason: str
    answered: bool
    tests_passed: int = 0
    tests_total: int = 0
    detail: str = ""
    # Reward-hacking attempts the sandbox observed while grading (never change the score).
    signals: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fail(reason: str, detail: str = "", answered: bool = True) -> Score:
    return Score(0.0, reason, answered, detail=detail)


def _plan(response: str, gt: GroundTruth, row_id: str) -> Score | dict[str, Any]:
    """A final score, or the verifier row whose verdict decides it."""
    row: dict[str, Any]
    if gt.kind in ("codegen", "induction"):
        code = last_code_block(response)
        if code is None:
            return _fail(NO_ANSWER, "no fenced code block in the response", answered=False)
        if gt.kind == "codegen":
            row = {"id": row_id, "program": code, "tests": gt.tests}
        else:
            calls = [f"{gt.entry_point}({e['input']})" for e in gt.examples]
            row = {"id": row_id, "program": code, "tests": [], "calls": calls}
    else:
        text = answer_text(response)
        if text is None:
            return _fail(NO_ANSWER, "the response is empty", answered=False)
        if gt.kind == "deduction":
            ok, _ = parse_literal(text)
            if not ok:
                return _fail(NOT_LITERAL, f"not a Python literal: {text[:200]}")
            if same_repr_value(text, gt.expected or ""):
                return Score(1.0, PASSED, True, 1, 1)
            return Score(0.0, WRONG_ANSWER, True, 0, 1, f"answered {text[:200]}")
        args = parse_arguments(text, gt.entry_point)
        if args is None:
            return _fail(NOT_LITERAL, f"not a literal argument list: {text[:200]}")
        row = {
            "id": row_id,
            "program": gt.program,
            "tests": [],
            "calls": [f"{gt.entry_point}({args})"],
        }
    if gt.timeout_s:
        row["timeout_s"] = gt.timeout_s
    return row


def _decide(gt: GroundTruth, verdict: Any) -> Score:
    if gt.kind == "codegen":
        if verdict.passed:
            return Score(1.0, PASSED, True, verdict.tests_passed, verdict.tests_total)
        return Score(
            0.0, verdict.status, True, verdict.tests_passed, verdict.tests_total, verdict.detail
        )
    expected = [e["output"] for e in gt.examples] if gt.kind == "induction" else [gt.expected]
    outputs = verdict.outputs or [None] * len(expected)
    right = sum(
        out is not None and same_repr_value(out, exp)
        for out, exp in zip(outputs, expected, strict=True)
    )
    if verdict.status != "passed":  # the program did not load, or ran out of time
        return Score(0.0, verdict.status, True, right, len(expected), verdict.detail)
    if right == len(expected):
        return Score(1.0, PASSED, True, right, len(expected))
    if gt.kind == "abduction":
        detail = f"the program returned {outputs[0]}" if outputs[0] else verdict.detail
        return Score(0.0, WRONG_ANSWER, True, 0, 1, (detail or "")[:500])
    wrong = next(
        i
        for i, (out, exp) in enumerate(zip(outputs, expected, strict=True))
        if out is None or not same_repr_value(out, exp)
    )
    got = outputs[wrong] if outputs[wrong] is not None else f"an error ({verdict.detail[:300]})"
    detail = f"{gt.entry_point}({gt.examples[wrong]['input']}) gave {got}"
    return Score(0.0, WRONG_ANSWER, True, right, len(expected), detail[:500])


def grade_responses(
    responses: list[str],
    ground_truths: list[str | dict[str, Any] | GroundTruth],
    verifier: Any = None,
) -> list[Score]:
    """Score each response against its ground truth; one verifier batch for the lot.

    `verifier` is anything with `grade(rows)`; by default the process-wide shared pool.
    """
    if len(responses) != len(ground_truths):
        raise ValueError(f"got {len(responses)} responses but {len(ground_truths)} ground truths")
    scores: list[Score | None] = [None] * len(responses)
    pending: list[tuple[int, GroundTruth, dict[str, Any]]] = []
    for i, (response, label) in enumerate(zip(responses, ground_truths, strict=True)):
        try:
            gt = GroundTruth.parse(label)
        except InvalidGroundTruth as e:
            scores[i] = _fail(BAD_GROUND_TRUTH, str(e), answered=False)
            continue
        planned = _plan(response if isinstance(response, str) else "", gt, str(i))
        if isinstance(planned, Score):
            scores[i] = planned
        else:
            pending.append((i, gt, planned))
    if pending:
        if verifier is None:
            from selfplay.rewards.pool import shared_verifier

            verifier = shared_verifier()
        verdicts = verifier.grade([row for _, _, row in pending])
        for (i, gt, _), verdict in zip(pending, verdicts, strict=True):
            scores[i] = _decide(gt, verdict)
            scores[i].signals = list(getattr(verdict, "signals", []))
    return [s for s in scores if s is not None]
