"""Rebinding the tests' own names scores 0 through the exported rewards, whichever reward
the label asks for; a correct answer to the same label scores 1."""

from __future__ import annotations

import pytest

from selfplay.rewards import GroundTruth, compute_score_batch, trl_reward

REBIND = (
    "```python\n"
    "class Any:\n"
    "    def __eq__(self, other): return True\n"
    "    def __call__(self, *a, **k): return True\n"
    "def {fn}(*args):\n"
    "    for name in {names!r}:\n"
    "        globals()[name] = Any()\n"
    "    return Any()\n"
    "```"
)

LABELS = [
    ("solve", ["expected"], ["expected = 16\nassert solve(4) == expected"], "def solve(n):\n    return n * n\n"),
    ("add", ["a", "b"], ["a, b = 2, 3\nassert add(a, b) == a + b", "assert add(1, 1) == 2"], "def add(a, b):\n    return a + b\n"),
    ("mean", ["isclose"], ["from math import isclose\nassert isclose(mean([1, 2]), 1.5)", "assert mean([2]) == 2"], "def mean(xs):\n    return sum(xs) / len(xs)\n"),
]  # fmt: skip


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_rebinding_the_tests_names_scores_zero_through_every_reward(reward):
    labels, attacks, correct = [], [], []
    for fn, names, tests, solution in LABELS:
        truth = GroundTruth(kind="codegen", entry_point=fn, tests=tests, reward=reward)
        labels.append(truth.to_json())
        attacks.append(REBIND.format(fn=fn, names=names))
        correct.append(f"```python\n{solution}```")
    n = len(labels)
    verl = compute_score_batch(["selfplay"] * 2 * n, attacks + correct, labels + labels)
    assert [r["score"] for r in verl] == [0.0] * n + [1.0] * n
    trl = trl_reward(["p"] * 2 * n, attacks + correct, ground_truth=labels + labels)
    assert trl == [0.0] * n + [1.0] * n
