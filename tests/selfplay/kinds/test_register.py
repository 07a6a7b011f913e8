"""A kind registered from a directory goes the whole way: admission, the solver's prompt, the
reward and an export, with nothing but its module and its two templates."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from selfplay import kinds
from selfplay.admission import Admission
from selfplay.admission.schema import parse_task
from selfplay.export import export_bank
from selfplay.kinds import KindError
from selfplay.prompts import propose
from selfplay.rewards import GroundTruth, grade_responses
from selfplay.solver import solver_prompt

# "reverse": shown a sequence, write it reversed; the answer is a Python literal, compared
# with the output the verifier computed by running the task's program at admission.
MODULE = """
from selfplay.kinds.answers import NotAValue, answer_text, parse_value, same_repr
from selfplay.kinds.base import (
    NO_ANSWER, NOT_LITERAL, PASSED, WRONG_ANSWER, Kind, Score, examples_with_outputs, fail,
)
from selfplay.kinds.fences import fence


class Reverse(Kind):
    name = "reverse"
    min_examples = 1
    answer = "value"
    required = ("expected",)
    proposed_statement = "Write the sequence shown, reversed."

    def fields(self, task):
        return {"sequence": examples_with_outputs(task)[0]["input"]}

    def reference_answer(self, task):
        return fence(examples_with_outputs(task)[0]["output"])

    def ground_truth(self, task):
        shown = examples_with_outputs(task)
        if not shown:
            raise ValueError("a reverse task needs an example with its output")
        return {"input": shown[0]["input"], "expected": shown[0]["output"]}

    def plan(self, response, gt, row_id):
        text = answer_text(response)
        if text is None:
            return fail(NO_ANSWER, "the response is empty", answered=False)
        try:
            parse_value(text)
        except NotAValue:
            return fail(NOT_LITERAL, text[:200])
        if same_repr(text, gt.expected):
            return Score(1.0, PASSED, True, 1, 1)
        return Score(0.0, WRONG_ANSWER, True, 0, 1, text[:200])

    def shown(self, task):
        return task.examples[0]["input"] if task.examples else None
"""
SOLVE = "$prompt\n\nReverse `$sequence`. Reply with the reversed value in one ```python block.\n"
PROPOSE = """Write a function `f` that reverses a sequence.

$references
--- prefill ---
```python
def f(
"""


def write_kind(folder: Path, *, propose: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reverse.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    (folder / "reverse.solve.tmpl").write_text(SOLVE, encoding="utf-8")
    if propose:
        (folder / "reverse.propose.tmpl").write_text(PROPOSE, encoding="utf-8")
    return folder


@pytest.fixture()
def reverse(tmp_path):
    """The toy kind, registered for one test and gone afterwards."""
    (kind,) = kinds.register_dir(write_kind(tmp_path / "kinds"))
    yield kind
    kinds.unregister("reverse")
    assert tuple(kinds.NAMES) == ("codegen", "deduction", "abduction", "induction")


def test_a_registered_kind_is_admitted_solved_graded_and_exported(reverse, bank, verifier):
    assert "reverse" in kinds.NAMES and kinds.get("reverse") is reverse
    task = parse_task(
        {
            "kind": "reverse",
            "prompt": "A reverse task.",
            "program": "def f(xs):\n    return xs[::-1]\n",
            "entry_point": "f",
            "tests": ["assert f([1, 2, 3]) == [3, 2, 1]"],
            "examples": [{"input": "[1, 2, 'a']"}],
        },
        source="test",
    )
    report = Admission(bank, verifier).admit([task])
    assert report.admitted_ids == [task.id], report.outcomes
    stored = bank.get(task.id)
    assert stored.kind == "reverse" and stored.examples[0]["output"] == "['a', 2, 1]"

    prompt = solver_prompt(stored).messages[-1]["content"]
    assert prompt == (
        "A reverse task.\n\nReverse `[1, 2, 'a']`. "
        "Reply with the reversed value in one ```python block.\n"
    )
    proposal = propose("reverse", references="(none yet)")
    assert proposal.prefill == "```python\ndef f("
    assert "(none yet)" in proposal.messages[-1]["content"]

    label = GroundTruth.from_task(stored).to_json()
    right, wrong = kinds.reference_answer(stored), "```python\n[1, 2, 'a']\n```"
    scores = grade_responses([right, wrong, "no idea"], [label] * 3, verifier)
    assert [s.score for s in scores] == [1.0, 0.0, 0.0]
    assert [s.reason for s in scores] == ["passed", "wrong_answer", "not_literal"]

    out = bank.path.parent / "export"
    export_bank(bank.path, "openrlhf", out)
    (row,) = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert row["kind"] == "reverse" and row["input"][-1]["content"] == prompt
    assert json.loads(row["label"])["expected"] == "['a', 2, 1]"


def test_a_missing_template_is_one_sentence_and_registers_nothing(tmp_path):
    folder = write_kind(tmp_path / "kinds", propose=False)
    with pytest.raises(KindError, match=r"^task kind 'reverse' has no propose template: expected"):
        kinds.register_dir(folder)
    assert "reverse" not in kinds.NAMES


def test_a_name_clash_is_one_sentence(reverse, tmp_path):
    with pytest.raises(KindError, match="a task kind named 'reverse' is already registered"):
        kinds.register_dir(write_kind(tmp_path / "again"))
    assert kinds.get("reverse") is reverse


def test_a_built_in_name_cannot_be_taken(tmp_path):
    folder = tmp_path / "kinds"
    folder.mkdir()
    for name in ("codegen.py", "codegen.solve.tmpl", "codegen.propose.tmpl"):
        (folder / name).write_text("", encoding="utf-8")
    with pytest.raises(KindError, match="'codegen' is already registered"):
        kinds.register_dir(folder)


def test_every_built_in_kind_has_its_two_templates_beside_it():
    for kind in kinds.KINDS.values():
        for role in ("solve", "propose"):
            path = kind.template_path(role)
            assert path.parent == Path(kinds.__file__).parent and path.is_file()
