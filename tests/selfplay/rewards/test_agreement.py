"""One grading path: a bank label and a trainer's reward agree, near misses included.

For every kind, a table of responses (right answers in odd fences, type-coerced literals,
several blocks, keyword abductions, answers that only fit the shown examples, hacks) is graded
by the solver (a scripted model answering the solver's prompt, so the attempt is what the bank
stores) and by each trainer's entry point as the trainer calls it: verl's `compute_score`,
`compute_score_async` (concurrently, as verl 0.9's reward loop does) and
`compute_score_batch`, TRL's `trl_reward`, and the OpenRLHF reward file with OpenRLHF's query
(prompt and response decoded with the end-of-turn token). Every path gives the same score and
reason, and each row's expected reason is stated.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
from bank_samples import io_task as task

import selfplay.export
from selfplay.backends.scripted import ScriptedBackend
from selfplay.config import SolverConfig
from selfplay.rewards import (
    GroundTruth,
    compute_score,
    compute_score_async,
    compute_score_batch,
    trl_reward,
)
from selfplay.solver import Solver, solver_prompt

PROGRAM = "def f(s, n=1):\n    return s[::-1] * n\n"


def fence(body: str, mark: str = "```") -> str:
    return f"{mark}python\n{body}\n{mark}"


TASKS = {
    "codegen": task("codegen", PROGRAM, ["'ab'", "'xyz', 2"], ["'ba'", "'zyxzyx'"]),
    "deduction": task("deduction", "def f(x):\n    return x + 1\n", ["1"], ["2"]),
    "deduction-set": task(
        "deduction", "def f(x):\n    return frozenset(x)\n", ["[]"], ["frozenset()"]
    ),
    "abduction": task("abduction", PROGRAM, ["'ab'"], ["'ba'"]),
    "induction": task(
        "induction",
        PROGRAM,
        ["'ab'", "'c'", "'xyz'", "'pq', 2"],
        ["'ba'", "'c'", "'zyx'", "'qpqp'"],
    ),
}
RIGHT = "def f(s, n=1):\n    return s[::-1] * n"
TABLE = [
    # (task, response, reason, score)
    ("codegen", fence(RIGHT), "passed", 1.0),
    ("codegen", fence(RIGHT, "~~~"), "passed", 1.0),
    ("codegen", fence(RIGHT, "````"), "passed", 1.0),
    ("codegen", "```python\n" + RIGHT + "\n", "passed", 1.0),  # left open at the end
    ("codegen", fence("def f(s, n=1):\n    return s") + "\nFixed:\n" + fence(RIGHT), "passed", 1.0),
    ("codegen", fence(RIGHT) + "\nOr:\n" + fence("def f(s, n=1):\n    return s"), "failed", 0.0),
    ("codegen", RIGHT, "no_answer", 0.0),
    ("codegen", fence("import os\ndef f(s, n=1):\n    os._exit(0)"), "error", 0.0),
    (
        "codegen",
        fence(
            "class A:\n    def __eq__(s, o):\n        return True\ndef f(s, n=1):\n    return A()"
        ),
        "failed",
        0.0,
    ),
    ("deduction", fence("2"), "passed", 1.0),
    ("deduction", "The result is computed.\nAnswer: 2", "passed", 1.0),
    ("deduction", fence("2.0"), "wrong_answer", 0.0),  # a float does not answer an int
    ("deduction", fence("True"), "wrong_answer", 0.0),
    ("deduction", fence("1 + 1"), "not_literal", 0.0),
    ("deduction", "", "no_answer", 0.0),
    ("deduction-set", fence("frozenset()"), "passed", 1.0),
    ("deduction-set", fence("set()"), "wrong_answer", 0.0),
    ("abduction", fence("f('ab')"), "passed", 1.0),
    ("abduction", fence("'ab'"), "passed", 1.0),
    ("abduction", fence("f(s='ab')"), "passed", 1.0),
    ("abduction", fence("f('ba')"), "wrong_answer", 0.0),
    ("abduction", fence("f(__import__('os').getcwd())"), "not_literal", 0.0),
    ("induction", fence(RIGHT), "passed", 1.0),
    # fits the shown examples only: the held-out ones catch it
    (
        "induction",
        fence("def f(s, n=1):\n    return {'ab': 'ba', 'c': 'c'}.get(s, s)"),
        "wrong_answer",
        0.0,
    ),
    ("induction", "no code", "no_answer", 0.0),
]


def _openrlhf():
    """The reward file exactly as `selfplay export --format openrlhf` ships it, loaded by path."""
    path = Path(selfplay.export.__file__).parent.parent / "rewards" / "openrlhf_reward.py"
    spec = importlib.util.spec_from_file_location("reward_func", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


@pytest.fixture(scope="module")
def graded(verifier):
    """Every row of TABLE graded by every path: {path: [(reason, score), ...]}."""
    labels = [GroundTruth.from_task(TASKS[name]).to_json() for name, *_ in TABLE]
    responses = [response for _, response, _, _ in TABLE]
    out: dict[str, list] = {}
    # The solver: each task's prompt answered with the table's responses, in order.
    queue = {}
    for name, response, _, _ in TABLE:
        queue.setdefault(solver_prompt(TASKS[name]).messages[-1]["content"], []).append(response)
    backend = ScriptedBackend(script=lambda prompt, i: queue[prompt.messages[-1]["content"]].pop(0))
    solver = Solver(backend, verifier, SolverConfig(samples=1))
    attempts = []
    for name, *_ in TABLE:
        (attempt,) = solver.attempt([TASKS[name]]).attempts
        attempts.append(attempt)
    out["solver"] = [(a.status, a.reward) for a in attempts]
    out["compute_score"] = [
        (r["reason"], r["score"])
        for r in (compute_score("selfplay", s, g) for s, g in zip(responses, labels, strict=True))
    ]

    async def concurrently():
        return await asyncio.gather(
            *(compute_score_async("selfplay", s, g) for s, g in zip(responses, labels, strict=True))
        )

    out["compute_score_async"] = [(r["reason"], r["score"]) for r in asyncio.run(concurrently())]
    out["compute_score_batch"] = [
        (r["reason"], r["score"])
        for r in compute_score_batch(["selfplay"] * len(labels), responses, labels, None)
    ]
    reasons: dict[str, list] = {}
    scores = trl_reward(
        [""] * len(labels),
        responses,
        ground_truth=labels,
        log_extra=lambda column, values: reasons.setdefault(column, []).extend(values),
    )
    out["trl_reward"] = list(zip(reasons["selfplay_reason"], scores, strict=True))
    prompt = "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
    reward_func = _openrlhf()
    out["openrlhf"] = []
    for response, label in zip(responses, labels, strict=True):
        result = reward_func([prompt + response + "<|im_end|>"], [prompt], [label])
        out["openrlhf"].append((None, float(result["rewards"][0])))
    return out


@pytest.mark.parametrize("path", ["solver", "compute_score", "compute_score_async",
                                  "compute_score_batch", "trl_reward"])  # fmt: skip
def test_every_path_gives_the_tables_reasons_and_scores(graded, path):
    expected = [(reason, score) for _, _, reason, score in TABLE]
    assert graded[path] == expected


def test_openrlhf_scores_the_same_once_its_end_of_turn_token_is_stripped(graded):
    assert [s for _, s in graded["openrlhf"]] == [score for *_, score in TABLE]
