"""A proposed codegen task's statement: signature, docstring, and some of its tests as
examples, never all of them."""

from selfplay import kinds
from selfplay.kinds.codegen import HIDDEN_TESTS

PROGRAM = (
    "def f(xs: list, k: int) -> str:\n"
    '    """Say whether k is in xs."""\n'
    "    return 'yes' if k in xs else 'no'\n"
)
PAIRS = [("[1, 2], 1", "'yes'"), ("[1, 2], 5", "'no'"), ("[], 0", "'no'"), ("[3], 3", "'yes'")]


def statement(pairs):
    return kinds.get("codegen").statement(PROGRAM, "f", pairs)


def test_the_statement_shows_two_tests_as_calls_with_their_results():
    text = statement(PAIRS)
    assert text.startswith("Write `f(xs: list, k: int) -> str`.\n\nSay whether k is in xs.")
    assert ">>> f([1, 2], 1)\n'yes'\n>>> f([1, 2], 5)\n'no'" in text
    assert "f([], 0)" not in text and "f([3], 3)" not in text


def test_at_least_two_tests_stay_unseen():
    for n in range(len(PAIRS) + 1):
        text = statement(PAIRS[:n])
        shown = sum(f">>> f({x})" in text for x, _ in PAIRS[:n])
        assert shown == max(0, min(2, n - HIDDEN_TESTS))
    assert "For example" not in statement(PAIRS[:2])
