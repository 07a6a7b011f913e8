"""The row format: what parses, what is refused and how ids are made."""

from __future__ import annotations

import pytest

from selfplay.admission.schema import InvalidTask, parse_task

ROW = {
    "kind": "deduction",
    "prompt": "What does f return?",
    "program": "def f(x):\n    return x * 2\n",
    "entry_point": "f",
    "tests": ["assert f(2) == 4"],
    "examples": [{"input": "3"}],
    "tags": ["math"],
}


def test_a_valid_row_parses_and_round_trips():
    task = parse_task(ROW, source="mine")
    assert task.source == "mine" and task.tags == ["math"]
    assert task.examples == [{"input": "3", "output": None}]
    again = parse_task(task.to_row())
    assert again.to_row() == task.to_row()


def test_ids_are_content_hashes_when_absent_and_kept_when_given():
    a, b = parse_task(ROW, source="s"), parse_task(dict(ROW), source="s")
    assert a.id == b.id and a.id.startswith("s-")
    other = parse_task(ROW | {"program": "def f(x):\n    return x * 3\n"}, source="s")
    assert other.id != a.id
    assert parse_task(ROW | {"id": 7}).id == "7"


def test_json_encoded_columns_are_accepted():
    row = ROW | {"tests": '["assert f(1) == 2"]', "tags": '["x"]', "examples": "[]"}
    task = parse_task(row)
    assert task.tests == ["assert f(1) == 2"] and task.tags == ["x"]


def test_stdin_stdout_codegen_needs_no_entry_point():
    row = {
        "kind": "codegen",
        "prompt": "echo",
        "program": "print(input())",
        "tests": [{"input": "a\n", "output": "a\n"}],
    }
    assert parse_task(row).entry_point is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "poetry"}, "field 'kind' must be one of"),
        ({"program": "def f(:"}, "field 'program' is not valid Python"),
        ({"program": None}, "field 'program' is missing"),
        ({"tests": []}, "field 'tests' is missing or not a non-empty list"),
        ({"tests": [3]}, "test 0 must be a string of Python"),
        ({"entry_point": "not a name"}, "field 'entry_point'"),
        ({"examples": [{"input": "import os"}]}, "is not a Python literal of arguments"),
        ({"tags": "math"}, "field 'tags' is a string that is not valid JSON"),
        ({"tags": [1]}, "field 'tags' must be a list of strings"),
        ({"extra": 1}, "unknown field 'extra'"),
        ({"id": ""}, "field 'id' must be a non-empty string"),
    ],
)
def test_bad_rows_get_one_sentence(change, message):
    with pytest.raises(InvalidTask, match=message) as info:
        parse_task(ROW | change)
    assert "\n" not in str(info.value)
