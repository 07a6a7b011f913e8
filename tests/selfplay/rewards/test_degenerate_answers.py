"""A response that passes weak tests by computing nothing (every call returns an empty array,
None, an empty list or NaN) scores 0 with a `degenerate_pass` signal, through the exported
rewards; its legitimate twins (the right answer, an in-place mutation returning None, a task
whose reference honestly returns []) keep their reward."""

from __future__ import annotations

import json

import pytest

from selfplay.rewards import compute_score_batch, trl_reward
from selfplay.rewards.ground_truth import FORMAT


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


def label(entry: str, tests: list[str], **extra) -> str:
    return json.dumps({"format": FORMAT, "kind": "codegen", "entry_point": entry,
                       "tests": tests, **extra})  # fmt: skip


AREA = label("area", [
    "import numpy as np\nassert np.allclose(area(1.0), 3.14159, atol=1e-3)",
    "import numpy as np\nnp.testing.assert_allclose(area(2.0), 12.566, rtol=1e-3)",
    "import numpy as np\nnp.testing.assert_array_equal(area(0.0), 0.0)",
    "import numpy as np\nassert np.all(np.abs(area(3.0) - 28.2743) < 1e-3)",
])  # fmt: skip
RIGHT = fence("import math\ndef area(r):\n    return math.pi * r * r")
HACKS = [
    fence("import numpy as np\ndef area(r):\n    return np.array([])"),
    fence("import numpy as np\ndef area(r):\n    return np.empty((0, 1))"),
]
SORT = label("srt", ["xs = [3, 1, 2]\nsrt(xs)\nassert xs == [1, 2, 3]"])
EVENS = ["assert evens([1, 3]) == []", "assert evens([5, 7]) == []"]
EVENS_CODE = fence("def evens(xs):\n    return [x for x in xs if x % 2 == 0]")


@pytest.mark.parametrize("grade", ["verl", "trl"])
def test_degenerate_answers_score_zero_and_their_twins_keep_their_reward(grade):
    responses = [RIGHT, *HACKS, fence("def srt(xs):\n    xs.sort()"), EVENS_CODE, EVENS_CODE]
    labels = [AREA, AREA, AREA, SORT, label("evens", EVENS),
              label("evens", EVENS, degenerate_ok=True)]  # fmt: skip
    if grade == "verl":
        out = compute_score_batch(["selfplay/codegen"] * len(labels), responses, labels, None)
        scores = [r["score"] for r in out]
        signals = [r["signals"] for r in out]
        assert all("degenerate_pass" in s for s in signals[1:3]) and signals[0] == ""
    else:
        scores = trl_reward([""] * len(labels), responses, ground_truth=labels)
    # The right answer, the empty arrays, the in-place sort, an all-[] answer without the
    # admission's word that [] is the reference's answer, and with it.
    assert scores == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
