"""The abduction prompt: the target output, and the form of an answer without the answer."""

from selfplay import kinds
from selfplay.admission.schema import parse_task


def task(examples):
    return parse_task(
        {
            "id": "abd",
            "kind": "abduction",
            "prompt": "Find an input for which `f` returns the output shown.",
            "program": "def f(xs, k):\n    return sorted(xs)[k]\n",
            "entry_point": "f",
            "tests": ["assert f([2, 1], 0) == 1"],
            "examples": examples,
        }
    )


def prompt(t) -> str:
    return kinds.get("abduction").chat(t)[-1]["content"]


def test_another_examples_call_shows_the_form_of_an_answer():
    text = prompt(
        task(
            [
                {"input": "[3, 1, 2], 0", "output": "1"},
                {"input": "[5, 1], 1", "output": "5"},
            ]
        )
    )
    assert "returns `1`" in text
    assert "For example, `f([5, 1], 1)` returns `5`." in text


def test_an_example_with_the_target_output_is_never_shown():
    text = prompt(
        task(
            [
                {"input": "[3, 1, 2], 0", "output": "1"},
                {"input": "[1, 9], 0", "output": "1"},  # this one would be an answer
                {"input": "[4, 2], 1", "output": "4"},
            ]
        )
    )
    assert "[1, 9]" not in text and "For example, `f([4, 2], 1)` returns `4`." in text
    alone = prompt(task([{"input": "[3, 1, 2], 0", "output": "1"}]))
    assert "such as `f(3, [1, 2])`" in alone and "[3, 1, 2]" not in alone
