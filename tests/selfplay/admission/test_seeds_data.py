"""The bundled seed set (selfplay/admission/importers/seeds.jsonl) is a correct, varied task file.

Every reference program is graded by the real sandboxed verifier against its own tests, and
every stored example output is recomputed by running the program, so a seed whose answer
key is wrong cannot ship.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter

import pytest

from selfplay.admission.decontam import humaneval_decontaminator
from selfplay.admission.importers import SEEDS_PATH
from selfplay.admission.normalize import ast_hash
from selfplay.admission.schema import parse_task

KINDS = ("codegen", "deduction", "abduction", "induction")
SKILLS = {
    "strings",
    "lists",
    "dicts",
    "math",
    "recursion",
    "sorting-searching",
    "dynamic-programming",
    "graphs",
    "simulation",
    "parsing",
    "bit-tricks",
    "classes",
}
ID = re.compile(r"^seed-(?P<skill>[a-z-]+)-(?P<n>\d{2})$")


def _load() -> list[dict]:
    rows = []
    with SEEDS_PATH.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            row = json.loads(line)
            assert isinstance(row, dict), f"line {number} is not a JSON object"
            rows.append(row)
    return rows


ROWS = _load()


def _calls(row: dict) -> list[str]:
    return [f"{row['entry_point']}({e['input']})" for e in row.get("examples", [])]


@pytest.fixture(scope="module")
def verdicts(verifier):
    jobs = [
        {"id": r["id"], "program": r["program"], "tests": r["tests"], "calls": _calls(r)}
        for r in ROWS
    ]
    return dict(zip([r["id"] for r in ROWS], verifier.grade(jobs), strict=True))


def test_the_seed_file_is_large_and_covers_every_kind_and_skill():
    assert len(ROWS) >= 72
    kinds = Counter(r["kind"] for r in ROWS)
    assert set(kinds) == set(KINDS)
    assert all(kinds[k] >= 12 for k in ("deduction", "abduction", "induction")), kinds
    skills = Counter(r["tags"][0] for r in ROWS)
    assert set(skills) == SKILLS
    assert min(skills.values()) >= 6, skills
    assert {r["metadata"]["difficulty"] for r in ROWS} == {1, 2, 3, 4, 5}


def test_every_row_is_a_valid_task_row_from_the_seeds_source():
    for row in ROWS:
        task = parse_task(row, source="seeds")
        assert task.kind in KINDS
        assert row["source"] == "seeds"
        match = ID.match(row["id"])
        assert match, row["id"]
        assert match["skill"] == row["tags"][0], row["id"]
        assert row["entry_point"].isidentifier(), row["id"]
        assert len(row["tests"]) >= 3, row["id"]
        assert row["prompt"].strip(), row["id"]


def test_ids_and_programs_are_unique_even_after_renaming():
    assert len({r["id"] for r in ROWS}) == len(ROWS)
    hashes = Counter(ast_hash(r["program"]) for r in ROWS)
    assert [h for h, n in hashes.items() if n > 1] == []


def test_program_tasks_carry_enough_examples_to_show_and_hold_out():
    for row in ROWS:
        examples = row.get("examples", [])
        if row["kind"] in ("deduction", "abduction"):
            assert len(examples) >= 2, row["id"]
        if row["kind"] == "induction":
            assert len(examples) >= 6, row["id"]
            # A rule that maps every shown input to one value teaches nothing.
            assert len({e["output"] for e in examples}) >= 2, row["id"]
        inputs = [e["input"] for e in examples]
        assert len(set(inputs)) == len(inputs), row["id"]
        for e in examples:
            ast.literal_eval(f"({e['input']},)")  # the input is a literal argument list
            ast.literal_eval(e["output"])  # deduction answers are compared as literals


def test_stdin_tasks_define_main_and_use_only_io_tests():
    io_rows = [r for r in ROWS if any(isinstance(t, dict) for t in r["tests"])]
    assert len(io_rows) >= 3
    for row in io_rows:
        assert row["kind"] == "codegen" and row["entry_point"] == "main", row["id"]
        assert all(set(t) == {"input", "output"} for t in row["tests"]), row["id"]
        assert "examples" not in row, row["id"]


def test_every_reference_program_passes_its_own_tests_in_the_sandbox(verdicts):
    failed = {i: f"{v.status}: {v.detail}" for i, v in verdicts.items() if not v.passed}
    assert failed == {}
    for row in ROWS:
        assert verdicts[row["id"]].tests_total == len(row["tests"])


def test_every_example_output_is_what_the_program_returns(verdicts):
    wrong = {}
    for row in ROWS:
        stored = [e["output"] for e in row.get("examples", [])]
        if stored and verdicts[row["id"]].outputs != stored:
            wrong[row["id"]] = (stored, verdicts[row["id"]].outputs)
    assert wrong == {}


def test_no_seed_is_flagged_as_contaminated_by_humaneval():
    decontaminator = humaneval_decontaminator()
    flagged = {}
    for row in ROWS:
        reason = decontaminator.check(parse_task(row, source="seeds"))
        if reason:
            flagged[row["id"]] = reason
    assert flagged == {}
