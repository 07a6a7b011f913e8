"""Correct ordinary Python passes: values cross as themselves, and what tests do with the
program's own objects works. One construct per test, named after it (a false negative is a
wrong reward too)."""

import pytest


def passes(grade, program, tests, **row):
    v = grade(program, tests, **row)
    assert v.passed, v.detail
    assert v.signals == [], v.signals
    return v


@pytest.mark.parametrize(
    "returned, tests",
    [
        ("Counter('abca')", ["assert f() == {'a': 2, 'b': 1, 'c': 1}", "assert f()['z'] == 0"]),
        ("defaultdict(list, {1: [2]})", ["assert f() == {1: [2]}", "d = f(); d[5].append(1)"]),
        (
            "OrderedDict([(2, 'b'), (1, 'a')])",
            ["assert list(f()) == [2, 1]", "assert f() == {1: 'a', 2: 'b'}"],
        ),
        ("deque([1, 2, 3], maxlen=5)", ["assert list(f()) == [1, 2, 3]", "assert f().maxlen == 5"]),
        ("bytearray(b'ab')", ["assert f() == b'ab'", "assert isinstance(f(), bytearray)"]),
        ("{1: 2, 3: 4}.keys()", ["assert f() == {1, 3}"]),
        ("{1: 2}.items()", ["assert f() == {(1, 2)}"]),
        ("list({1: 2}.values())", ["assert f() == [2]"]),
        ("frozenset({1, 2})", ["assert f() == {1, 2}", "assert type(f()) is frozenset"]),
        ("complex(1, -2)", ["assert f() == 1 - 2j"]),
        ("range(2, 9, 3)", ["assert f() == range(2, 9, 3)", "assert list(f()) == [2, 5, 8]"]),
        ("Fraction(1, 3)", ["from fractions import Fraction\nassert f() == Fraction(2, 6)"]),
        (
            "Decimal('1.10')",
            [
                "from decimal import Decimal\nassert f() == Decimal('1.1')",
                "assert str(f()) == '1.10'",
            ],
        ),
        (
            "datetime.date(2024, 2, 29)",
            ["import datetime\nassert f() == datetime.date(2024, 2, 29)"],
        ),
        (
            "datetime.timedelta(days=1, seconds=5)",
            ["import datetime\nassert f().total_seconds() == 86405"],
        ),
        ("array.array('i', [1, 2])", ["assert list(f()) == [1, 2]", "assert f().typecode == 'i'"]),
    ],
)
def test_standard_library_values_cross_as_themselves(grade, returned, tests):
    program = (
        "import array, datetime\n"
        "from collections import Counter, defaultdict, OrderedDict, deque\n"
        "from fractions import Fraction\nfrom decimal import Decimal\n"
        f"def f():\n    return {returned}\n"
    )
    passes(grade, program, tests)


def test_namedtuples_are_tuples_with_their_field_names(grade):
    program = (
        "from collections import namedtuple\nfrom typing import NamedTuple\n"
        "P = namedtuple('P', 'x y')\n"
        "class Q(NamedTuple):\n    a: int\n    b: str = 'b'\n    def twice(self):\n        return 2 * self.a\n"
        "def f():\n    return P(1, 2)\n"
        "def g():\n    return Q(3)\n"
    )
    tests = [
        "assert f() == (1, 2) and f().x == 1 and f().y == 2",
        "assert g() == (3, 'b') and g().b == 'b'",
        "assert f() == P(1, 2) and isinstance(f(), tuple)",
        "assert g().twice() == 6",  # a method of the program's class, asked of the program
        "assert g()._replace(a=4) == (4, 'b')",
    ]
    passes(grade, program, tests)


def test_enum_members_by_class_and_value_and_identity(grade):
    program = (
        "import enum\n"
        "class Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n"
        "class Level(enum.IntEnum):\n    LOW = 1\n    HIGH = 2\n"
        "class Perm(enum.Flag):\n    R = 1\n    W = 2\n"
        "def pick(n):\n    return Color(n)\n"
        "def level():\n    return Level.HIGH\n"
        "def rw():\n    return Perm.R | Perm.W\n"
        "def name_of(c):\n    return c.name\n"
    )
    tests = [
        "assert pick(1) is Color.RED and pick(2) == Color.GREEN",
        "assert level() == 2 and level() is Level.HIGH and level() > Level.LOW",
        "assert rw() == Perm.R | Perm.W and Perm.W in rw()",
        "assert name_of(Color.GREEN) == 'GREEN'",  # a member goes back to the program as itself
        "assert isinstance(pick(1), Color) and [c.name for c in Color] == ['RED', 'GREEN']",
    ]
    passes(grade, program, tests)


def test_in_place_mutation_of_arguments_reaches_the_test(grade):
    program = (
        "def sort_in_place(xs):\n    xs.sort()\n"
        "def fill(grid, v):\n    for row in grid:\n        row[:] = [v] * len(row)\n"
        "def count_into(d, words):\n    for w in words:\n        d[w] = d.get(w, 0) + 1\n"
        "def grow(s):\n    s.add(9)\n"
        "def bump(b):\n    b[0] += 1\n"
    )
    tests = [
        "xs = [3, 1, 2]\nassert sort_in_place(xs) is None\nassert xs == [1, 2, 3]",
        "g = [[0, 0], [0]]\ninner = g[0]\nfill(g, 7)\nassert g == [[7, 7], [7]] and inner == [7, 7]",
        "d = {'a': 1}\ncount_into(d, ['a', 'b'])\nassert d == {'a': 2, 'b': 1}",
        "s = {1}\ngrow(s)\nassert s == {1, 9}",
        "b = bytearray(b'a')\nbump(b)\nassert b == bytearray(b'b')",
        "xs = [3, 1]\nsort_in_place(xs=xs) if False else sort_in_place(xs)\nassert xs == [1, 3]",
    ]
    passes(grade, program, tests)


def test_isinstance_with_the_programs_classes(grade):
    program = (
        "class Shape:\n    pass\n"
        "class Square(Shape):\n    def __init__(self, s):\n        self.s = s\n"
        "def make(s):\n    return Square(s)\n"
    )
    tests = [
        "assert isinstance(make(2), Square) and isinstance(make(2), Shape)",
        "assert not isinstance(3, Square)",
        "assert issubclass(Square, Shape)",
        "assert make(3).s == 3",
        "assert make(1).__class__.__name__ == 'Square'",
    ]
    passes(grade, program, tests)


def test_the_programs_exception_classes_are_caught_by_the_tests(grade):
    program = (
        "class BankError(Exception):\n    pass\n"
        "class Insufficient(BankError):\n"
        "    def __init__(self, need):\n        super().__init__(f'need {need}')\n        self.need = need\n"
        "def withdraw(n):\n    raise Insufficient(n)\n"
        "def parse(s):\n    import json\n    return json.loads(s)\n"
    )
    tests = [
        "try:\n    withdraw(5)\n    raise AssertionError\nexcept Insufficient as e:\n    assert str(e) == 'need 5' and e.need == 5",
        "try:\n    withdraw(1)\nexcept BankError:\n    pass\nelse:\n    raise AssertionError",
        "import json\ntry:\n    parse('{')\nexcept json.JSONDecodeError as e:\n    assert e.pos == 1\nelse:\n    raise AssertionError",
        "try:\n    parse('[')\nexcept ValueError:\n    pass\nelse:\n    raise AssertionError",
    ]
    passes(grade, program, tests)


def test_names_and_docstrings_of_the_programs_functions(grade):
    program = 'def add(a, b):\n    """Add two numbers."""\n    return a + b\n'
    tests = [
        "assert add.__name__ == 'add' and add.__qualname__ == 'add'",
        "assert add.__doc__ == 'Add two numbers.'",
        "assert add.__module__ == 'solution'",
    ]
    passes(grade, program, tests)


def test_dataclasses_with_annotations(grade):
    program = (
        "from dataclasses import dataclass, field\n"
        "@dataclass\nclass Point:\n    x: int\n    y: int = 0\n    tags: list = field(default_factory=list)\n"
        "def origin():\n    return Point(0)\n"
    )
    tests = [
        "assert origin() == Point(0, 0)",
        "assert origin().tags == []",
        "assert Point(1).x == 1",
    ]
    passes(grade, program, tests)


def test_pickle_and_multiprocessing_of_the_programs_own_objects(grade):
    program = (
        "import pickle, multiprocessing\n"
        "class Box:\n    def __init__(self, v):\n        self.v = v\n"
        "def square(x):\n    return x * x\n"
        "def round_trip(v):\n    return pickle.loads(pickle.dumps(Box(v))).v\n"
        "def pool_squares(xs):\n"
        "    with multiprocessing.get_context('fork').Pool(2) as p:\n"
        "        return p.map(square, xs)\n"
    )
    tests = ["assert round_trip(7) == 7", "assert pool_squares([1, 2, 3]) == [1, 4, 9]"]
    passes(grade, program, tests, timeout_s=20)


def test_exit_and_quit_in_scripts(grade):
    v = grade("print(42)\nexit(0)\n", [{"input": "", "output": "42\n"}])
    assert v.passed, v.detail
    v = grade("print(1)\nquit()\n", [{"input": "", "output": "1\n"}])
    assert v.passed, v.detail


def test_kodcode_style_imports_of_the_solution_module(grade):
    program = "def add(a, b):\n    return a + b\n"
    tests = [
        "from solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ntest_add()\n",
        "import solution\nassert solution.add(2, 2) == 4\n",
        "import sys as _sys\nsolution = _sys.modules[__name__]\nassert solution.add(1, 1) == 2\n",
    ]
    passes(grade, program, tests)


def test_results_of_millions_of_elements(grade):
    program = "def big(n):\n    return list(range(n))\n"
    v = passes(
        grade,
        program,
        ["r = big(3_000_000)\nassert len(r) == 3_000_000 and r[-1] == 2_999_999"],
        timeout_s=60,
        memory_mb=2048,
    )
    assert v.tests_passed == 1


def test_result_items_is_a_per_row_limit(grade):
    program = "def big(n):\n    return list(range(n))\n"
    v = grade(program, ["assert len(big(1000)) == 1000"], result_items=100)
    assert not v.passed and "result_items" in v.detail, v.detail
    assert v.signals == ["oversized_result"]


def test_generators_are_consumed_in_batches(grade, verifier_5s_512mb):
    program = "def gen(n):\n    for i in range(n):\n        yield i * i\n"
    tests = ["assert sum(gen(200_000)) == sum(i * i for i in range(200_000))"]
    v = passes(grade, program, tests, timeout_s=30)
    # One round trip per item would take far longer than the generator itself.
    assert v.phases["tests"] < 5.0, v.phases


def test_generator_semantics_survive_batching(grade):
    program = (
        "def counter():\n    n = 0\n    while True:\n        n += 1\n        yield n\n"
        "def boom():\n    yield 1\n    raise KeyError('k')\n"
    )
    tests = [
        "g = counter()\nassert next(g) == 1 and next(g) == 2 and [next(g) for _ in range(5)] == [3, 4, 5, 6, 7]",
        "g = boom()\nassert next(g) == 1\ntry:\n    next(g)\nexcept KeyError:\n    pass\nelse:\n    raise AssertionError",
        "assert list(zip(range(3), counter())) == [(0, 1), (1, 2), (2, 3)]",
        "assert 3 in counter()",
    ]
    passes(grade, program, tests)


def test_program_classes_with_operators_and_test_data(grade):
    # Class tasks combine program objects with test data; the result is a program object.
    program = (
        "class Vec:\n"
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
        "    def __mul__(self, k):\n        return Vec(self.x * k, self.y * k)\n"
        "    __rmul__ = __mul__\n"
        "    def __add__(self, o):\n        return Vec(self.x + o.x, self.y + o.y)\n"
        "    def __eq__(self, o):\n        return isinstance(o, Vec) and (self.x, self.y) == (o.x, o.y)\n"
        "    def __abs__(self):\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n"
        "    def __repr__(self):\n        return f'Vec({self.x}, {self.y})'\n"
    )
    tests = [
        "assert Vec(2, -1) * 3 == Vec(6, -3) and 3 * Vec(1, 1) == Vec(3, 3)",
        "assert Vec(1, 2) + Vec(3, 4) == Vec(4, 6)",
        "assert (Vec(1, 2) * 2).x == 2",
        "assert abs(Vec(3, 4)) == 5.0",
        "assert repr(Vec(1, 2)) == 'Vec(1, 2)' and sorted([3, 1]) == [1, 3]",
    ]
    passes(grade, program, tests)


def test_standard_library_enum_members_cross_as_themselves(grade):
    program = (
        "import re, socket\n"
        "def flags(f):\n    return re.compile('a', f).flags & re.IGNORECASE\n"
        "def same(f):\n    return f\n"
    )
    tests = [
        "import re\nassert flags(re.IGNORECASE) == re.IGNORECASE",
        "import re\nassert same(re.IGNORECASE) is re.IGNORECASE",
        "import socket\nassert same(socket.AF_INET) is socket.AF_INET",
    ]
    passes(grade, program, tests)


def test_enums_with_mixins_tuple_values_and_their_own_str(grade):
    program = (
        "import enum\n"
        "class Color(str, enum.Enum):\n    RED = 'red'\n    BLUE = 'blue'\n"
        "class Planet(enum.Enum):\n"
        "    EARTH = (5.97e24, 6.37e6)\n"
        "    def __init__(self, mass, radius):\n        self.mass, self.radius = mass, radius\n"
        "class Suit(enum.Enum):\n    HEART = 1\n    def __str__(self):\n        return 'H'\n"
        "def red():\n    return Color.RED\n"
        "def mass(p):\n    return p.mass\n"
        "def suit():\n    return Suit.HEART\n"
    )
    tests = [
        "assert red() == 'red' and red() is Color.RED",
        "assert mass(Planet.EARTH) == 5.97e24 and Planet.EARTH.mass == 5.97e24",
        "assert str(suit()) == 'H'",
    ]
    passes(grade, program, tests)


def test_namedtuples_with_defaults_and_with_behaviour_of_their_own(grade):
    program = (
        "from typing import NamedTuple\n"
        "class P(NamedTuple):\n    x: int\n    y: int = 0\n"
        "class V(NamedTuple):\n    x: int\n    y: int\n"
        "    def __add__(self, o):\n        return V(self.x + o.x, self.y + o.y)\n"
        "def v(x, y):\n    return V(x, y)\n"
    )
    tests = [
        "assert P(3) == (3, 0) and P(3).y == 0",
        # a namedtuple whose class changes tuple behaviour is the program's object, not a tuple
        "assert v(1, 2) + v(3, 4) == v(4, 6)",
    ]
    passes(grade, program, tests)


def test_globals_the_program_changes_during_calls(grade):
    program = (
        "count = 0\ncalls = []\n"
        "def inc(x):\n    global count\n    count += 1\n    calls.append(x)\n    return count\n"
        "def define():\n    global late\n    late = 'here'\n"
    )
    tests = [
        "inc('a'); inc('b')\nassert count == 2 and calls == ['a', 'b']",
        "import solution\nassert solution.count == 2",
        "define()\nassert late == 'here'",
    ]
    passes(grade, program, tests)


def test_handles_take_slices_in_place_operators_and_format_specs(grade):
    program = (
        "class Seq:\n"
        "    def __init__(self, xs):\n        self.xs = list(xs)\n"
        "    def __getitem__(self, i):\n        return self.xs[i]\n"
        "    def __iadd__(self, other):\n        self.xs += list(other)\n        return self\n"
        "    def __len__(self):\n        return len(self.xs)\n"
        "    def __format__(self, spec):\n        return format(sum(self.xs), spec)\n"
    )
    tests = [
        "s = Seq([1, 2, 3])\nassert s[0:2] == [1, 2] and s[::-1] == [3, 2, 1]",
        "s = Seq([1])\ns += [2, 3]\nassert len(s) == 3",
        "assert f'{Seq([1, 2]):.1f}' == '3.0'",
    ]
    passes(grade, program, tests)


def test_copies_and_types_of_the_programs_objects(grade):
    program = (
        "class Box:\n    def __init__(self, v):\n        self.v = v\n"
        "def gen():\n    yield 1\n"
        "def box():\n    return Box([1])\n"
    )
    tests = [
        "import copy\nb = box()\nc = copy.deepcopy(b)\nassert c is not b and c.v == [1]",
        "import types\nassert isinstance(gen(), types.GeneratorType)",
    ]
    passes(grade, program, tests)


def test_exceptions_cross_both_ways_with_their_methods_and_causes(grade):
    program = (
        "class AppError(Exception):\n    def code(self):\n        return 42\n"
        "def fail():\n    try:\n        {}['k']\n    except KeyError as e:\n        raise AppError('wrapped') from e\n"
        "class Guard:\n"
        "    def __enter__(self):\n        return self\n"
        "    def __exit__(self, kind, exc, tb):\n        return kind is ValueError\n"
        "def kind_of(e):\n    return type(e).__name__\n"
    )
    tests = [
        "try:\n    fail()\nexcept AppError as e:\n    assert e.code() == 42 and isinstance(e.__cause__, KeyError)",
        "with Guard():\n    raise ValueError('swallowed by the program')",
        "assert kind_of(ValueError('x')) == 'ValueError'",
    ]
    passes(grade, program, tests)


def test_standard_library_functions_and_types_as_arguments(grade):
    program = (
        "def sort_by(xs, key):\n    return sorted(xs, key=key)\n"
        "def apply(f, x):\n    return f(x)\n"
        "def kind():\n    return int\n"
    )
    tests = [
        "assert sort_by(['bbb', 'a', 'cc'], key=len) == ['a', 'cc', 'bbb']",
        "assert sort_by(['B', 'a'], str.lower) == ['a', 'B']",
        "import math\nassert apply(math.sqrt, 9.0) == 3.0",
        "assert kind() is int",
    ]
    passes(grade, program, tests)


def test_names_like_builtins_and_modules_stay_the_programs_own(grade):
    program = (
        "def max(xs):\n    return 'mine'\n"
        "def select(xs, k):\n    return sorted(xs)[:k]\n"
        "def array(n):\n    return [0] * n\n"
    )
    tests = [
        "assert max([1, 2]) == 2",  # the tests' builtin max is untouched
        "from solution import max\nassert max([1]) == 'mine'",  # but the program's is there
        "assert select([3, 1, 2], 2) == [1, 2] and array(2) == [0, 0]",
    ]
    passes(grade, program, tests)


def test_scripts_see_a_plain_argv(grade):
    program = (
        "import argparse, sys\n"
        "args = argparse.ArgumentParser().parse_args()\n"
        "print(len(sys.argv), sys.stdin.read().strip())\n"
    )
    v = grade(program, [{"input": "hi\n", "output": "1 hi\n"}])
    assert v.passed, v.detail


def test_returning_an_argument_keeps_its_identity(grade):
    program = "def same(xs):\n    return xs\ndef copied(xs):\n    return list(xs)\n"
    tests = [
        "a = [1, 2]\nassert same(a) is a",
        "a = [1, 2]\nassert copied(a) is not a and copied(a) == a",
    ]
    passes(grade, program, tests)
    v = grade(program, ["a = [1]\nassert same(a) is not a"])  # the lazy `return xs` is caught
    assert not v.passed
