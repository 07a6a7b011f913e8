"""pass@k on HumanEval and on bank items, with a scripted model and the real verifier."""

from __future__ import annotations

import pytest

from selfplay.backends.scripted import ScriptedBackend
from selfplay.evaluate import (
    evaluate_bank,
    evaluate_humaneval,
    humaneval_problems,
    pass_at_k,
)
from selfplay.rewards import GroundTruth


def test_pass_at_k_is_the_unbiased_estimator():
    # 5 samples, 1 correct: pass@1 = 1/5, pass@2 = 1 - C(4,2)/C(5,2) = 0.4.
    assert pass_at_k([[True, False, False, False, False]], (1, 2)) == {"pass@1": 0.2, "pass@2": 0.4}
    assert pass_at_k([[True, True], [False, False]]) == {"pass@1": 0.5, "pass@2": 0.5}
    assert pass_at_k([[True]], (1, 10)) == {"pass@1": 1.0}  # no pass@10 from one sample


def test_humaneval_canonical_body_passes_and_a_stub_fails(verifier):
    problems = humaneval_problems(limit=3)

    def script(prompt, i):
        p = next(p for p in problems if p["prompt"].rstrip(" ") in prompt.prefill)
        return (p["canonical_solution"] if i == 0 else "    return None\n") + "```\nDone."

    backend = ScriptedBackend(script=script)
    report = evaluate_humaneval(backend, verifier, samples=2, limit=3)
    assert report.pass_at_k == {"pass@1": 0.5, "pass@2": 1.0}
    assert [r["passed"] for r in report.rows] == [True, False] * 3
    assert all("```" not in r["completion"] for r in report.rows)  # cut at the stop string
    prompt, _ = backend.seen[0]
    assert prompt.prefill.startswith("```python\nfrom typing import List")


def test_progress_is_reported_per_chunk_and_answers_keep_problem_order(verifier):
    problems = humaneval_problems(limit=20)
    backend = ScriptedBackend(
        script=lambda prompt, i: (
            next(
                p["canonical_solution"]
                for p in problems
                if p["prompt"].rstrip(" ") in prompt.prefill
            )
            + "```"
        )
    )
    calls = []
    report = evaluate_humaneval(backend, verifier, limit=20, progress=lambda *a: calls.append(a))
    assert calls == [(0, 20), (16, 20), (20, 20)]  # the phase starts, then one call per chunk
    assert [r["task_id"] for r in report.rows] == [p["task_id"] for p in problems]
    assert report.pass_at_k == {"pass@1": 1.0}


def test_bank_items_are_graded_with_the_reward(seed_tasks, verifier):
    from selfplay.export.select import Item
    from selfplay.kinds import chat, reference_answer

    tasks = [t for t in seed_tasks if t.kind == "codegen"][:2]
    tasks += [t for t in seed_tasks if t.kind == "deduction"][:2]
    items = [Item(t, "test", GroundTruth.from_task(t).to_json(), 0, 0, 0.5, 0.25) for t in tasks]
    answers = {chat(t)[-1]["content"]: reference_answer(t) for t in tasks}

    def script(prompt, i):
        return answers[prompt.messages[-1]["content"]] if i == 0 else "no"

    report = evaluate_bank(ScriptedBackend(script=script), verifier, items, samples=2)
    assert report.pass_at_k == {"pass@1": 0.5, "pass@2": 1.0}
    assert {r["reason"] for r in report.rows} == {"passed", "no_answer", "not_literal"}


@pytest.mark.slow
def test_the_bundled_model_solves_the_first_humaneval_problem_greedily(verifier):
    from selfplay.backends import Sampling, make_backend
    from selfplay.evaluate import STOP

    # One problem, greedy: on two busy CPU cores a 0.5B model makes a few tokens a second.
    with make_backend("transformers", "bundled") as backend:
        sampling = Sampling(temperature=0.0, max_new_tokens=64, stop=STOP)
        report = evaluate_humaneval(backend, verifier, samples=1, sampling=sampling, limit=1)
    assert report.pass_at_k == {"pass@1": 1.0}, report.rows
    assert report.rows[0]["status"] == "passed"
