"""The one fence reader: which fenced block of a response is its answer, and the cases where
the proposer's former regular expression and the answers' line reader disagreed."""

import pytest

from selfplay.kinds.fences import as_response, blocks, code_blocks, fence, last_code_block
from selfplay.proposer.parse import program_from


def test_the_last_fenced_block_is_the_answer():
    text = "First try:\n```python\ndef f(): return 1\n```\nFixed:\n```\ndef f(): return 2\n```\n"
    assert last_code_block(text) == "def f(): return 2"
    # The body is the lines between the fences, without the newline before the closing one.
    assert last_code_block("```python\na = 1\n```\ntext\n```\nb = 2\n```") == "b = 2"


@pytest.mark.parametrize(
    "text",
    [
        "~~~python\nx = 1\n~~~",
        "````python\nx = 1\n````",
        "````\nx = 1\n```\ny = 2\n````",  # a shorter fence inside does not close a longer one
        "```py\nx = 1\n",  # still open at the end: generation stopped at the closing fence
        "  ```python\nx = 1\n  ```",
        "```python3\nx = 1\n```",
    ],
)
def test_fences_of_backticks_or_tildes_closed_or_left_open(text):
    block = last_code_block(text)
    assert block is not None and block.splitlines()[0].strip() == "x = 1"


def test_no_block_and_an_empty_block_are_no_answer():
    assert last_code_block("def f(): return 1") is None
    assert last_code_block("```python\n\n```") is None
    assert code_blocks("inline ```code``` is no fence") == []


def test_a_block_of_another_language_is_a_block():
    """The regex opened only python/py/bare fences, so the closing fence of the `text` block
    opened a block on the prose after it, and the answer read was "Code:"."""
    text = "Output:\n```text\nhello\n```\nCode:\n```python\nx = 1\n```"
    assert code_blocks(text) == ["hello", "x = 1"]
    assert last_code_block(text) == "x = 1"


def test_backticks_inside_a_line_neither_open_nor_close():
    """The regex ended the block at the first three backticks anywhere, cutting the program
    inside its string literal."""
    assert last_code_block('```python\ns = "```"\n```') == 's = "```"'
    assert last_code_block("see ```\nx = 1\n```\n") is None  # the fence must start its line


def test_a_closed_block_wins_over_an_open_one_after_it():
    """An open block after a closed one is the tail of a response cut by its token budget;
    the closed block is what the model finished."""
    text = "```python\ndef f(x):\n    return x\n```\nUsage:\n```python\nprint(f("
    assert [b.closed for b in blocks(text)] == [True, False]
    assert last_code_block(text) == "def f(x):\n    return x"


def test_an_open_block_after_a_prefill_is_the_answer():
    """A stop string on "```" cuts the closing fence: the one block left open counts."""
    assert last_code_block("```python\ndef f(x):\n    return x") == "def f(x):\n    return x"
    assert program_from("```python\ndef f(", "x):\n    return x") == "def f(x):\n    return x\n"
    # An empty closed block before it does not outrank it.
    assert last_code_block("```\n```\n```python\nx = 1") == "x = 1"


def test_the_proposer_reads_the_prefilled_block_with_the_same_reader():
    completion = 'x):\n    return "```" + x\n```\nProse.\n```python\nprint(2)\n```'
    assert program_from("```python\ndef f(", completion) == 'def f(x):\n    return "```" + x\n'


def test_an_answer_is_written_in_one_python_block():
    assert fence("[1, 2]\n") == "```python\n[1, 2]\n```"
    assert as_response("42") == "```python\n42\n```"
    assert as_response("```\n42\n```") == "```\n42\n```"  # already fenced: kept as it is
