"""Where a value answer sits in a response, and when two values are the same: strictly, with
types (the fenced block an answer is in: test_fences.py)."""

import math

import pytest

from selfplay.kinds.answers import (
    NotAValue,
    answer_text,
    call_arguments,
    parse_value,
    same,
    same_repr,
    strip_special_tokens,
)


def test_value_answers_come_from_a_block_an_answer_marker_or_the_last_line():
    assert answer_text("think...\n```python\n[1, 2]\n```") == "[1, 2]"
    assert answer_text("So the answer is: 'abc'") == "'abc'"
    assert answer_text("I computed it.\n42") == "42"
    assert answer_text("   ") is None


def test_values_include_what_reprs_of_data_look_like():
    assert parse_value("{'a': (1, 2.5), 'b': [None, True]}") == {"a": (1, 2.5), "b": [None, True]}
    assert parse_value("inf") == math.inf and parse_value("-inf") == -math.inf
    assert math.isnan(parse_value("nan")) and math.isnan(parse_value("float('nan')"))
    assert parse_value("frozenset({1, 2})") == frozenset({1, 2}) and parse_value("set()") == set()
    assert parse_value("[frozenset(), -0.0, 1+2j]") == [frozenset(), -0.0, 1 + 2j]


@pytest.mark.parametrize(
    "code",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "x",
        "[i for i in range(3)]",
        "float('1e9999')",
        "set(range(3))",
        "9" * 200_000,
    ],
)
def test_values_are_never_evaluated_code(code):
    with pytest.raises(NotAValue):
        parse_value(code)


@pytest.mark.parametrize(
    "a, b",
    [
        (1, True),
        (1, 1.0),
        ([1], (1,)),
        (0.0, -0.0),
        ({1: "a"}, {True: "a"}),
        ({1, 2}, {1.0, 2}),
        ({"k": [1]}, {"k": [True]}),
        (frozenset({1}), {1}),
        ("1", 1),
    ],
)
def test_same_tells_types_apart_all_the_way_down(a, b):
    assert not same(a, b)


def test_same_agrees_on_equal_values():
    assert same([1, (2, "a"), {3: {4.5}}], [1, (2, "a"), {3: {4.5}}])
    assert same(float("nan"), float("nan")) and same(-0.0, -0.0)
    assert same_repr("{'b': 2, 'a': 1}", "{'a': 1, 'b': 2}")  # dict order is not value
    assert same_repr("float('inf')", "inf") and not same_repr("'1'", "1")


def test_arguments_with_or_without_the_call_and_with_keywords():
    assert call_arguments("3, [1, 2]", "f") == "3, [1, 2]"
    assert call_arguments("f('a', 2)", "f") == "'a', 2"
    assert call_arguments("solve('a')", "solve") == "'a'"
    assert call_arguments("(1, 2)", "f") == "(1, 2)"  # one tuple argument
    assert call_arguments("f(s='ab', n=-1)", "f") == "s='ab', n=-1"
    assert call_arguments("f(x=inf)", "f") == "x=inf"


@pytest.mark.parametrize(
    "text", ["1); import os; (2", "f(*range(3))", "f(**{'a': 1})", "open('/etc/passwd')", "x"]
)
def test_arguments_that_are_code_are_refused(text):
    assert call_arguments(text, "f") is None


def test_special_tokens_after_the_response_are_stripped():
    assert strip_special_tokens("```python\n1\n```<|im_end|>") == "```python\n1\n```"
    assert strip_special_tokens("ok<|eot_id|></s>  ") == "ok"
    assert strip_special_tokens("a <|im_end|> b") == "a <|im_end|> b"  # only at the end


def test_a_tokenizers_own_special_tokens_are_stripped_where_it_is_known():
    special = ["<|begin_of_text|>", "<|eot_id|>", "[END]"]
    assert strip_special_tokens("```python\n1\n```\n[END][END]", special) == "```python\n1\n```"
    assert strip_special_tokens("ok <|eot_id|>", special) == "ok"
    assert strip_special_tokens("ok [END] more", special) == "ok [END] more"  # only at the end
    assert strip_special_tokens("ok  ", special) == "ok  "  # nothing stripped, nothing changed


def test_the_one_call_an_answer_written_as_statements_makes_is_its_answer():
    copied = "def f(n, k):\n    return f(n - 1, k) + 1\n\nresult = f(6, 3)\nprint(result)\n"
    assert call_arguments(copied, "f") == "6, 3"  # the copied body's own call is not counted
    assert call_arguments("f(6, 3) == 20", "f") == "6, 3"
    assert call_arguments("print(f([10, 12]))  # 9", "f") == "[10, 12]"
    assert call_arguments("assert f([1, 2], k=1) == 3", "f") == "[1, 2], k=1"
    assert call_arguments("print(f('ab'))\nprint(f('ab'))", "f") == "'ab'"  # one call, twice


@pytest.mark.parametrize(
    "text",
    [
        "print(f(1))\nprint(f(2))",  # two candidates: no one answer
        "x = [1]\nf(x)",  # a name, not a value
        "def g():\n    return f(1)\n",  # only inside a definition
        "result = g(1)",  # another function
        "f(1) +",  # not Python
    ],
)
def test_statements_without_exactly_one_literal_call_are_no_answer(text):
    assert call_arguments(text, "f") is None
