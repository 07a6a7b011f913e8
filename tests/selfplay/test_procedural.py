"""Procedural tasks: drawn by seed at a chosen depth, admitted by the real chain like any
proposal, with their depth on the task."""

from __future__ import annotations

import ast
import json
import random

import pytest
from selfplay_cli import one_sentence_error, run_cli

from selfplay import procedural
from selfplay.admission import Admission, AdmissionConfig


def _statements(program: str) -> int:
    fn = ast.parse(program).body[0]
    return len(fn.body) - 1  # the return is not a step


@pytest.mark.parametrize("family", procedural.FAMILIES)
@pytest.mark.parametrize("depth", [1, 4, 9])
def test_a_program_has_the_depth_asked_for(family, depth):
    assert _statements(procedural.program(family, depth, random.Random(depth))) == depth


def test_the_same_seed_draws_the_same_candidates():
    a = procedural.candidates(depths=(2, 3), per_depth=5, seed=7)
    b = procedural.candidates(depths=(2, 3), per_depth=5, seed=7)
    c = procedural.candidates(depths=(2, 3), per_depth=5, seed=8)
    assert [(x.program, x.inputs) for x in a] == [(x.program, x.inputs) for x in b]
    assert [x.program for x in a] != [x.program for x in c]
    assert [x.draft["metadata"]["depth"] for x in a] == [2] * 5 + [3] * 5


def test_candidates_are_admitted_with_computed_outputs_and_their_depth(bank, verifier):
    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
    batch = procedural.candidates(depths=(1, 5), per_depth=6, seed=3)
    report = admission.admit(batch)
    assert report.seen == 12
    assert report.seen == report.admitted + sum(report.rejected.values())
    assert report.admitted >= 10, report.rejected  # a depth-1 repeat may be a duplicate
    by_depth = {1: 0, 5: 0}
    for task in bank.tasks(source="procedural"):
        depth = task.metadata["depth"]
        by_depth[depth] += 1
        assert f"depth-{depth}" in task.tags and _statements(task.program) == depth
        # The outputs are the sandbox's: running the program here gives the same.
        env: dict = {}
        exec(task.program, env)  # noqa: S102 - our own generated program, in the test
        first = task.examples[0]
        assert repr(env["f"](ast.literal_eval(first["input"]))) == first["output"]
    assert by_depth[1] and by_depth[5]


def test_generate_cli_admits_and_refuses_bad_input_in_one_sentence(tmp_path):
    db = str(tmp_path / "g.db")
    done = run_cli(
        "bank", "generate", "--bank", db, "--depths", "2,4", "--per-depth", "3", "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["seen"] == 6 and report["admitted"] + sum(report["rejected"].values()) == 6
    assert report["admitted"] >= 5
    one_sentence_error(run_cli("bank", "generate", "--bank", db, "--depths", "0-3"), "--depths")
    one_sentence_error(run_cli("bank", "generate", "--bank", db, "--kind", "codegen"), "codegen")
