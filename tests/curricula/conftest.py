"""A real bank file for the curriculum: the bundled seed tasks, derived tasks with lineage,
their vectors, and two rounds of attempts from a made-up solver."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bank_samples import add_tasks

from selfplay.admission.dedup import Vectorizer
from selfplay.admission.importers import SEEDS_PATH
from selfplay.admission.schema import parse_task
from task_bank.store import Attempt, Bank

SEEDS = SEEDS_PATH


def seed_rows() -> list[dict]:
    return [json.loads(line) for line in SEEDS.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def bank_path(tmp_path_factory) -> Path:
    rows = seed_rows()
    tasks = [parse_task(r, source="seeds") for r in rows]
    # One derived task per codegen seed: the parent's program plus a helper, as a proposer
    # variation would look; its lineage names the parent.
    for r in rows[:30]:
        if r["kind"] != "codegen":
            continue
        child = {
            **r,
            "id": r["id"] + "-v2",
            "program": r["program"] + "\n\ndef _helper():\n    return 1\n",
        }
        tasks.append(parse_task(child, source="derived"))
        tasks[-1].parent_ids = [r["id"]]
    path = tmp_path_factory.mktemp("curriculum") / "bank.db"
    rng = np.random.default_rng(0)
    with Bank(path) as bank:
        add_tasks(bank, tasks, vectors=Vectorizer().vectorize(tasks))
        rate = {t.id: rng.choice([0.0, 0.3, 0.6, 1.0]) for t in tasks[:70]}
        for step in range(2):
            rid = bank.start_round({})
            bank.add_attempts(
                Attempt(task_id=tid, solver="s", answer="x", status="passed",
                        passed=bool(rng.random() < p), round_id=rid, step=step)
                for tid, p in rate.items() for _ in range(8)
            )  # fmt: skip
            bank.finish_round(rid)
    return path
