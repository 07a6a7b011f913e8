"""Reading programs and inputs out of model text: parsing only, nothing runs."""

from selfplay.proposer.parse import call_arguments, inputs_from, program_from

PREFILL = "```python\ndef f("


def test_program_is_the_prefilled_block_up_to_the_fence():
    text = "x):\n    return x + 1\n```\nSome prose.\n```python\nprint(2)\n```"
    assert program_from(PREFILL, text) == "def f(x):\n    return x + 1\n"


def test_an_unclosed_block_still_gives_the_program():
    assert program_from(PREFILL, "x):\n    return x") == "def f(x):\n    return x\n"


def test_no_block_gives_none():
    assert program_from("", "I think the answer is 3.") is None


def test_call_arguments_are_literal_positional_arguments():
    assert call_arguments("f(3, [1, 2], 'a')", "f") == "3, [1, 2], 'a'"
    assert call_arguments("assert f((1, 2)) == 3", "f") == "(1, 2)"
    assert call_arguments("f(-4)", "f") == "-4"


def test_call_arguments_refuse_code_names_keywords_and_other_functions():
    assert call_arguments("f(__import__('os').system('id'))", "f") is None
    assert call_arguments("f(x)", "f") is None
    assert call_arguments("f(n=3)", "f") is None
    assert call_arguments("f(*[1, 2])", "f") is None
    assert call_arguments("g(3)", "f") is None
    assert call_arguments("f()", "f") is None
    assert call_arguments("f(3", "f") is None


def test_inputs_are_distinct_and_limited():
    text = "1)\nf(2)\nf(1)\nnot a call\nf(os.getcwd())\nf(3)\nf(4)\n```"
    assert inputs_from("```python\nf(", text, "f", limit=3) == ["1", "2", "3"]
