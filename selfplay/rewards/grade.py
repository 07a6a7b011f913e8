"""Grade model responses against exported ground truth: one score per response.

The one grading path of selfplay: the solver's attempts, the exported rewards (verl, TRL,
OpenRLHF) and `selfplay eval` all call `grade_responses`. Each response is planned by its
task's kind (`selfplay.kinds`): some are decided at once (no answer; a deduction needs no
execution, its expected value was computed by running the reference when the task was
admitted), the rest become verifier rows, sent as one batch, and the kind decides each from its
verdict. Model-written code only ever runs inside the verifier.
"""

from __future__ import annotations

from typing import Any

from selfplay import kinds
from selfplay.kinds.base import BAD_GROUND_TRUTH, Score
from selfplay.rewards.ground_truth import GroundTruth, InvalidGroundTruth

__all__ = ["Score", "grade_responses"]


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
            scores[i] = Score(0.0, BAD_GROUND_TRUTH, False, detail=str(e), gradable=False)
            continue
        planned = kinds.get(gt.kind).plan(response if isinstance(response, str) else "", gt, str(i))
        if isinstance(planned, Score):
            scores[i] = planned
            continue
        if gt.timeout_s:
            planned["timeout_s"] = gt.timeout_s
        pending.append((i, gt, planned))
    if pending:
        if verifier is None:
            from selfplay.rewards.pool import shared_verifier

            verifier = shared_verifier()
        verdicts = verifier.grade([row for _, _, row in pending])
        for (i, gt, _), verdict in zip(pending, verdicts, strict=True):
            score = kinds.get(gt.kind).decide(gt, verdict)
            score.signals = list(getattr(verdict, "signals", []))
            score.isolation = getattr(verdict, "isolation", "sandbox")
            scores[i] = score
    return [s for s in scores if s is not None]
