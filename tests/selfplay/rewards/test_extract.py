"""Answer extraction: which part of a response counts, and when two literals are equal."""

from selfplay.rewards.extract import (
    answer_text,
    last_code_block,
    parse_arguments,
    parse_literal,
    same_repr_value,
    same_value,
)


def test_the_last_fenced_block_is_the_answer():
    text = "First try:\n```python\ndef f(): return 1\n```\nFixed:\n```\ndef f(): return 2\n```\n"
    assert last_code_block(text) == "def f(): return 2\n"


def test_no_block_an_empty_block_or_an_unclosed_block_is_no_answer():
    assert last_code_block("def f(): return 1") is None
    assert last_code_block("```python\n\n```") is None
    assert last_code_block("```python\ndef f(): return 1\n") is None


def test_literal_answers_come_from_a_block_an_answer_marker_or_the_last_line():
    assert answer_text("think...\n```python\n[1, 2]\n```") == "[1, 2]"
    assert answer_text("So the answer is: 'abc'") == "'abc'"
    assert answer_text("I computed it.\n42") == "42"
    assert answer_text("   ") is None


def test_parse_literal_never_executes_code():
    assert parse_literal("{'a': (1, 2.5)}") == (True, {"a": (1, 2.5)})
    assert parse_literal("__import__('os').system('true')") == (False, None)
    assert parse_literal("9" * 200_000) == (False, None)  # too long to be an answer


def test_argument_lists_with_or_without_the_call():
    assert parse_arguments("3, [1, 2]", "f") == "3, [1, 2]"
    assert parse_arguments("f('a', 2)", "f") == "'a', 2"
    assert parse_arguments("solve('a')", "solve") == "'a'"
    assert parse_arguments("(1, 2)", "f") == "(1, 2)"  # one tuple argument
    assert parse_arguments("(1, 2), 3", "f") == "(1, 2), 3"  # two arguments


def test_argument_lists_that_are_code_are_refused():
    assert parse_arguments("1); import os; (2", "f") is None
    assert parse_arguments("f(*range(3))", "f") is None
    assert parse_arguments("open('/etc/passwd')", "f") is None
    assert parse_arguments("x", "f") is None


def test_strict_equality_tells_types_apart():
    assert same_value([1, (2, "a")], [1, (2, "a")])
    assert not same_value(1, True)
    assert not same_value(1, 1.0)
    assert not same_value([1], (1,))
    assert same_value(float("nan"), float("nan"))
    assert same_repr_value("{'b': 2, 'a': 1}", "{'a': 1, 'b': 2}")  # dict order is not value
    assert not same_repr_value("'1'", "1")
