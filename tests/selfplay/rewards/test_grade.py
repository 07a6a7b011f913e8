"""Grading responses with the real verifier: right answers score 1, everything else 0 with
a reason, one verifier batch per call, and reward hacks fail."""

from __future__ import annotations

import pytest

from selfplay.rewards import GroundTruth, grade_responses


def fence(body: str) -> str:
    return f"Here is my answer.\n```python\n{body.rstrip()}\n```\n"


def right(task) -> str:
    if task.kind in ("codegen", "induction"):
        return fence(task.program)
    if task.kind == "deduction":
        return fence(task.examples[0]["output"])
    return f"Answer: {task.entry_point}({task.examples[0]['input']})"


class CountingVerifier:
    """The real verifier, counting how often it is called."""

    def __init__(self, verifier):
        self.verifier, self.calls, self.rows = verifier, 0, 0

    def grade(self, rows):
        self.calls += 1
        self.rows += len(rows)
        return self.verifier.grade(rows)


@pytest.mark.slow
def test_every_reference_answer_scores_one_in_a_single_batch(seed_tasks, verifier):
    counting = CountingVerifier(verifier)
    labels = [GroundTruth.from_task(t).to_json() for t in seed_tasks]
    scores = grade_responses([right(t) for t in seed_tasks], labels, counting)
    failed = [
        (t.id, s.reason, s.detail)
        for t, s in zip(seed_tasks, scores, strict=True)
        if s.score != 1.0
    ]
    assert failed == []
    assert counting.calls == 1
    # Deduction is decided on the host: its expected value was computed at admission.
    assert counting.rows == sum(t.kind != "deduction" for t in seed_tasks)


def test_broken_answers_score_zero_with_the_reason(by_kind, verifier):
    code, ded, abd, ind = (by_kind[k] for k in ("codegen", "deduction", "abduction", "induction"))
    cases = [
        (code, fence(f"def {code.entry_point}(*args):\n    return None"), "failed"),
        (code, fence("def broken(:\n"), "error"),
        (ded, fence("'certainly not this'"), "wrong_answer"),
        (abd, fence("'zzz-no-such-input'" if "str" in abd.prompt else "10**6"), "wrong_answer"),
        (ind, fence(f"def {ind.entry_point}(*args):\n    return 0"), "wrong_answer"),
    ]
    labels = [GroundTruth.from_task(t).to_json() for t, _, _ in cases]
    scores = grade_responses([r for _, r, _ in cases], labels, verifier)
    assert [s.score for s in scores] == [0.0] * len(cases)
    assert [s.reason for s in scores] == [reason for _, _, reason in cases]
    assert all(s.answered and s.detail for s in scores)


def test_no_answer_scores_zero_without_running_anything(by_kind):
    class NoVerifier:
        def grade(self, rows):
            raise AssertionError("nothing should run")

    tasks = [by_kind[k] for k in ("codegen", "deduction", "abduction", "induction")]
    labels = [GroundTruth.from_task(t).to_json() for t in tasks]
    scores = grade_responses(["I don't know"] * 2 + ["", "```python\n\n```"], labels, NoVerifier())
    assert [s.score for s in scores] == [0.0] * 4
    assert [s.reason for s in scores] == ["no_answer", "not_literal", "no_answer", "no_answer"]
    assert [s.answered for s in scores] == [False, True, False, False]


def test_a_bad_label_scores_zero_and_the_rest_of_the_batch_still_counts(by_kind, verifier):
    ded = by_kind["deduction"]
    scores = grade_responses(
        [right(ded), right(ded)], ["{}", GroundTruth.from_task(ded).to_json()], verifier
    )
    assert (scores[0].score, scores[0].reason) == (0.0, "bad_ground_truth")
    assert scores[1].score == 1.0


def test_hack_exit_early_before_the_tests_run(by_kind, verifier):
    code = by_kind["codegen"]
    hack = fence("import sys\nsys.exit(0)\n" + code.program)
    [score] = grade_responses([hack], [GroundTruth.from_task(code).to_json()], verifier)
    assert score.score == 0.0 and score.reason == "error"


def test_hack_an_object_that_equals_everything(by_kind, verifier):
    ind = by_kind["induction"]
    hack = fence(
        "class Any:\n    def __eq__(self, other):\n        return True\n"
        "    def __repr__(self):\n        return " + repr(ind.examples[0]["output"]) + "\n"
        f"def {ind.entry_point}(*args):\n    return Any()\n"
    )
    [score] = grade_responses([hack], [GroundTruth.from_task(ind).to_json()], verifier)
    assert score.score == 0.0


def test_hack_hard_coding_the_shown_examples_fails_on_the_held_out_ones(by_kind, verifier):
    ind = by_kind["induction"]
    gt = GroundTruth.from_task(ind)
    table = {e["input"]: e["output"] for e in gt.examples[: gt.shown]}
    entries = ", ".join(f"({k},): {v}" for k, v in table.items())
    lines = [
        f"def {ind.entry_point}(*args):",
        f"    table = {{{entries}}}",
        "    return table.get(args)",
    ]
    [score] = grade_responses([fence("\n".join(lines))], [gt.to_json()], verifier)
    assert score.score == 0.0 and score.reason == "wrong_answer"
    assert score.tests_passed >= gt.shown  # the shown examples did pass


def test_hack_code_in_place_of_a_literal_is_never_run(by_kind, verifier):
    abd, ded = by_kind["abduction"], by_kind["deduction"]
    attack = "__import__('os').system('touch /tmp/pwned')"
    labels = [GroundTruth.from_task(t).to_json() for t in (abd, ded)]
    scores = grade_responses([fence(attack), fence(attack)], labels, verifier)
    assert [s.reason for s in scores] == ["not_literal", "not_literal"]


def test_hack_the_prompt_output_echoed_as_the_abduction_answer(by_kind, verifier):
    abd = by_kind["abduction"]
    [score] = grade_responses(
        [fence(abd.examples[0]["output"])], [GroundTruth.from_task(abd).to_json()], verifier
    )
    assert score.score == 0.0
