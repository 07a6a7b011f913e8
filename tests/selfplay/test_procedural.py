"""Procedural tasks: drawn by seed at a chosen level, admitted by the real chain like any
proposal, with their family and level on the task."""

from __future__ import annotations

import ast
import json
import random

import pytest
from selfplay_cli import one_sentence_error, run_cli

from selfplay import families, procedural
from selfplay.admission import Admission, AdmissionConfig
from task_bank.store import Bank


def _statements(program: str) -> int:
    fn = ast.parse(program).body[0]
    return len(fn.body) - 1  # the return is not a step


@pytest.mark.parametrize("family", ["arith", "lists", "strings", "bits", "nested"])
@pytest.mark.parametrize("level", [1, 4, 9])
def test_a_chain_has_the_statements_its_level_asks_for(family, level):
    drawn = families.get(family).draw(level, random.Random(level), 5)
    assert _statements(drawn.program) == level


def test_the_same_seed_draws_the_same_candidates():
    a = procedural.candidates(levels=(2, 3), per_level=5, seed=7)
    b = procedural.candidates(levels=(2, 3), per_level=5, seed=7)
    c = procedural.candidates(levels=(2, 3), per_level=5, seed=8)
    assert [(x.program, x.inputs) for x in a] == [(x.program, x.inputs) for x in b]
    assert [x.program for x in a] != [x.program for x in c]
    assert [x.draft["metadata"]["level"] for x in a] == [2] * 5 + [3] * 5


def test_candidates_are_admitted_with_computed_outputs_and_their_level(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    batch = procedural.candidates(levels=(1, 5), per_level=6, seed=3, families=["arith", "lists"])
    report = admission.admit(batch)
    assert report.seen == 12
    assert report.seen == report.admitted + sum(report.rejected.values())
    assert report.admitted >= 10, report.rejected  # a level-1 repeat may be a duplicate
    by_level = {1: 0, 5: 0}
    for task in bank.tasks(source="procedural"):
        level = task.metadata["level"]
        by_level[level] += 1
        assert f"level-{level}" in task.tags and _statements(task.program) == level
        assert task.metadata["difficulty"] == level
        # The outputs are the sandbox's: running the program here gives the same.
        env: dict = {}
        exec(task.program, env)  # noqa: S102 - our own generated program, in the test
        first = task.examples[0]
        assert repr(env["f"](ast.literal_eval(first["input"]))) == first["output"]
    assert by_level[1] and by_level[5]


def test_generate_cli_admits_and_refuses_bad_input_in_one_sentence(tmp_path):
    db = str(tmp_path / "g.db")
    done = run_cli("bank", "generate", "--bank", db, "--family", "strings,recursion",
                   "--levels", "2,4", "--per-level", "3", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["seen"] == 6 and report["admitted"] + sum(report["rejected"].values()) == 6
    assert report["admitted"] >= 5
    with Bank(db) as bank:
        kept = {(t.metadata["family"], t.metadata["level"]) for t in bank.tasks()}
    assert {f for f, _ in kept} == {"strings", "recursion"} and {lv for _, lv in kept} == {2, 4}
    one_sentence_error(run_cli("bank", "generate", "--bank", db, "--levels", "0-3"), "--levels")
    one_sentence_error(run_cli("bank", "generate", "--bank", db, "--family", "maths"), "maths")
    one_sentence_error(run_cli("bank", "generate", "--bank", db, "--kind", "codegen"), "codegen")
