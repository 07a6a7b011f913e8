"""Answer extraction per kind: code blocks and literals, read without running anything."""

import pytest

from selfplay.solver import extract, grading_row, shown_examples
from task_bank.schema import parse_task

FENCE = "```python\n"


def make(kind, n=4):
    inputs = [str(i) for i in range(1, n + 1)]
    return parse_task(
        {
            "kind": kind,
            "prompt": "p",
            "program": "def f(x):\n    return [x] * 2\n",
            "entry_point": "f",
            "tests": ["assert f(1) == [1, 1]"],
            "examples": [{"input": x, "output": repr([int(x)] * 2)} for x in inputs],
        }
    )


@pytest.mark.parametrize(
    "text",
    [
        "[3, 3]\n",
        "f(3) == [3, 3]\n",
        "assert f(3) == [3, 3]\n",
        "result = [3, 3]\n",
        "The list\n[3, 3]",
    ],
)
def test_deduction_reads_the_stated_value(text):
    answer = extract(make("deduction"), FENCE, text)
    assert answer.value == [3, 3] and answer.text == "[3, 3]"


@pytest.mark.parametrize(
    "text",
    ["__import__('os').system('touch /tmp/pwned')\n", "[x for x in range(3)]\n", "", "no fence"],
)
def test_deduction_refuses_code_and_nothing(text):
    prefill = FENCE if text != "no fence" else ""
    assert extract(make("deduction"), prefill, text) is None


def test_abduction_reads_the_call_arguments():
    answer = extract(make("abduction"), FENCE + "f(", "4, 'a')\n")
    assert answer.text == "4, 'a'" and answer.value == (4, "a")
    assert extract(make("abduction"), FENCE + "f(", "len('abc'))\n") is None


def test_abduction_takes_a_bare_literal_as_the_single_argument():
    answer = extract(make("abduction"), FENCE, "[1, 2]\n")
    assert answer.value == ([1, 2],)


def test_programs_are_the_last_code_block():
    text = "x):\n    return x\n```\nOr better:\n```python\ndef f(x):\n    return [x, x]\n```"
    answer = extract(make("induction"), FENCE + "def f(", text)
    assert answer.text == "def f(x):\n    return [x, x]\n"
    assert extract(make("codegen"), "", "I cannot do that.") is None


def test_grading_rows_are_built_from_values_not_model_text():
    t = make("deduction")
    row = grading_row(t, extract(t, FENCE, "assert f(1)   ==   [ 1,1 ]  # sure\n"), "r")
    assert row["tests"] == ["assert f(1) == [1, 1]"] and row["program"] == t.program
    t = make("abduction")
    row = grading_row(t, extract(t, FENCE + "f(", "(1), )\n"), "r")
    assert row["tests"] == ["assert f(1) == [1, 1]"]


def test_induction_shows_some_examples_and_grades_on_the_others():
    shown, held = shown_examples(make("induction", 5))
    assert [e["input"] for e in shown] == ["1", "2", "3"]
    assert [e["input"] for e in held] == ["4", "5"]
    shown, held = shown_examples(make("induction", 2))
    assert len(shown) == 1 and len(held) == 1
    row = grading_row(
        make("induction", 5), extract(make("induction"), FENCE, "def f(x): pass"), "r"
    )
    assert row["tests"] == ["assert f(4) == [4, 4]", "assert f(5) == [5, 5]"]
