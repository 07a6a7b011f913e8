"""`synthesize`: calls built from what a program does with its parameters."""

import ast

import pytest

from selfplay.proposer.synthesis import parameter_types, synthesize


def first_type(body: str, params: str = "x") -> list[str]:
    return [t[0] for t in parameter_types(f"def f({params}):\n{body}", "f")]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    return sum(v for v in x)\n", "list_int"),
        ("    y = x.copy()\n    y.append(1)\n    return y\n", "list_int"),
        ("    return [w.upper() for w in x if len(w) > 2]\n", "list_str"),
        ("    return sorted(k for k, v in x.items() if v > 0)\n", "dict"),
        ("    return x['name']\n", "dict"),
        ("    return x.split()[0].upper()\n", "str"),
        ("    return sum(i * i for i in range(x))\n", "int"),
        ("    return x % 7 + 1\n", "int"),
        ("    return [row[0] for row in x]\n", "list_str"),
        ("    return sum(x[i][i] for i in range(len(x)))\n", "list_list"),
        ("    return '-'.join(x)\n", "list_str"),
    ],
)
def test_the_body_says_what_a_parameter_is(body, expected):
    assert first_type(body) == [expected]


def test_annotations_outweigh_the_body():
    assert first_type("    return len(x)\n", "x: str") == ["str"]
    assert first_type("    return len(x)\n", "x: list[str]") == ["list_str"]
    assert first_type("    return x\n", "x: dict[str, int]") == ["dict"]


def test_only_required_parameters_are_given():
    assert len(parameter_types("def f(xs, k, step=2):\n    return xs[k]\n", "f")) == 2


def test_calls_are_distinct_literals_the_models_first_then_at_most_the_limit():
    program = "def f(xs, k):\n    return xs[k % len(xs)] + k\n"
    calls = synthesize(program, "f", ["[1, 2], 3", "[1,2], 3", "9, 9"], ["[4], 1", "5"], 6)
    assert calls[:3] == [
        "[1, 2], 3",
        "9, 9",
        "[4], 1",
    ]  # the repeat is dropped, "5" has one argument
    assert len(calls) == 2 + 6
    values = [ast.literal_eval(f"({c},)") for c in calls]
    assert all(len(v) == 2 for v in values)
    assert len({repr(v) for v in values}) == len(values)
    # Most synthesised calls follow the evidence: a list, then an integer.
    fitting = [v for v in values[3:] if isinstance(v[0], list) and isinstance(v[1], int)]
    assert len(fitting) >= len(values[3:]) // 2


def test_a_program_without_the_function_gets_only_the_models_calls():
    assert synthesize("def g(x):\n    return x\n", "f", ["1", "2"]) == ["1", "2"]
    assert synthesize("def f(:\n", "f", ["1"]) == ["1"]
