"""The exported label: built from a task per kind, a JSON round trip, refused when unusable."""

import json

import pytest

from selfplay.kinds import shown_count
from selfplay.rewards.ground_truth import FORMAT, GroundTruth, InvalidGroundTruth


def test_each_kind_carries_what_its_grading_needs(by_kind):
    code = GroundTruth.from_task(by_kind["codegen"]).to_dict()
    assert code["tests"] == by_kind["codegen"].tests and "program" not in code
    ded = GroundTruth.from_task(by_kind["deduction"]).to_dict()
    assert ded["expected"] == by_kind["deduction"].examples[0]["output"]
    assert ded["input"] == by_kind["deduction"].examples[0]["input"] and "program" not in ded
    abd = GroundTruth.from_task(by_kind["abduction"]).to_dict()
    assert abd["program"] == by_kind["abduction"].program and "input" not in abd
    ind = GroundTruth.from_task(by_kind["induction"]).to_dict()
    assert len(ind["examples"]) == len(by_kind["induction"].examples)
    assert 1 <= ind["shown"] < len(ind["examples"])


def test_the_reference_program_of_a_code_task_is_not_in_its_label(by_kind):
    for kind in ("codegen", "induction"):
        assert by_kind[kind].program not in GroundTruth.from_task(by_kind[kind]).to_json()


def test_json_round_trip(seed_tasks):
    for task in seed_tasks:
        gt = GroundTruth.from_task(task)
        again = GroundTruth.parse(gt.to_json())
        assert again == gt
        assert json.loads(gt.to_json())["format"] == FORMAT


def test_shown_examples_always_leave_one_held_out():
    assert [shown_count(n) for n in (2, 3, 4, 8)] == [1, 2, 2, 4]


@pytest.mark.parametrize(
    ("label", "words"),
    [
        ("not json", "not valid JSON"),
        ("[1]", "JSON object"),
        ('{"kind": "codegen", "tests": ["assert 1"]}', "format"),
        (json.dumps({"format": FORMAT, "kind": "golf"}), "unknown kind"),
        (json.dumps({"format": FORMAT, "kind": "abduction", "expected": "1"}), "'program'"),
    ],
)
def test_unusable_labels_are_refused_with_a_reason(label, words):
    with pytest.raises(InvalidGroundTruth, match=words):
        GroundTruth.parse(label)


def test_partial_credit_travels_in_the_label(by_kind):
    gt = GroundTruth.from_task(by_kind["codegen"], reward="fraction")
    assert json.loads(gt.to_json())["reward"] == "fraction"
    assert GroundTruth.parse(gt.to_json()).reward == "fraction"
    assert "reward" not in GroundTruth.from_task(by_kind["codegen"]).to_dict()  # binary: default
    with pytest.raises(InvalidGroundTruth, match="reward"):
        GroundTruth.parse(json.dumps({**gt.to_dict(), "reward": "vibes"}))
