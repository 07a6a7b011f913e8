"""Over-defense: ordinary programs must pass. One test per kind of legitimate code."""


def passes(grade, program, tests, **row):
    v = grade(program, tests, **row)
    assert v.passed, v.detail
    return v


def test_humaneval_style_check_block(grade):
    program = "def add(a, b):\n    return a + b\n"
    test = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n\ncheck(add)\n"
    passes(grade, program, [test])


def test_classes_with_their_own_eq_on_both_sides(grade):
    program = (
        "class Point:\n"
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
        "    def __eq__(self, o):\n        return (self.x, self.y) == (o.x, o.y)\n"
        "    def __hash__(self):\n        return hash((self.x, self.y))\n"
        "    def __add__(self, o):\n        return Point(self.x + o.x, self.y + o.y)\n"
        "    def __lt__(self, o):\n        return (self.x, self.y) < (o.x, o.y)\n"
    )
    passes(
        grade,
        program,
        [
            "assert Point(1, 2) + Point(3, 4) == Point(4, 6)",
            "assert Point(1, 2) != Point(2, 1)",
            "assert len({Point(1, 1), Point(1, 1)}) == 1",
            "assert sorted([Point(2, 0), Point(1, 5)])[0] == Point(1, 5)",
            "p = Point(1, 2)\nassert (p.x, p.y) == (1, 2)",
        ],
    )


def test_stateful_objects_built_by_the_tests(grade):
    program = (
        "class Stack:\n"
        "    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n"
        "    def pop(self):\n        return self.items.pop()\n"
        "    def __len__(self):\n        return len(self.items)\n"
    )
    passes(
        grade,
        program,
        [
            "s = Stack()\ns.push(1)\ns.push(2)\nassert len(s) == 2\nassert s.pop() == 2\nassert s.items == [1]"
        ],
    )


def test_generators_and_closures(grade):
    program = (
        "def evens(n):\n    yield from range(0, n, 2)\ndef adder(k):\n    return lambda x: x + k\n"
    )
    passes(grade, program, ["assert list(evens(7)) == [0, 2, 4, 6]", "assert adder(3)(4) == 7"])


def test_expected_exceptions(grade):
    program = "def safe_div(a, b):\n    if b == 0:\n        raise ValueError('b is zero')\n    return a / b\n"
    test = "try:\n    safe_div(1, 0)\n    assert False, 'no exception'\nexcept ValueError as e:\n    assert 'zero' in str(e)\n"
    passes(grade, program, [test])


def test_recursion_with_a_raised_limit(grade):
    program = "import sys\nsys.setrecursionlimit(100000)\ndef depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
    passes(grade, program, ["assert depth(20000) == 20000"])


def test_a_few_threads(grade):
    program = (
        "import threading\n"
        "def parallel_sum(chunks):\n"
        "    out = [0] * len(chunks)\n"
        "    def work(i):\n        out[i] = sum(chunks[i])\n"
        "    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(chunks))]\n"
        "    [t.start() for t in ts]\n    [t.join() for t in ts]\n"
        "    return sum(out)\n"
    )
    passes(grade, program, ["assert parallel_sum([[1, 2], [3], [4, 5], [6]]) == 21"])


def test_scratch_files(grade):
    program = (
        "import os, tempfile\n"
        "def roundtrip(text):\n"
        "    with open('notes.txt', 'w') as f:\n        f.write(text)\n"
        "    with tempfile.NamedTemporaryFile('w+', delete=False) as t:\n        t.write(text)\n"
        "    return open('notes.txt').read() + open(t.name).read()\n"
    )
    passes(grade, program, ["assert roundtrip('ab') == 'abab'"])


def test_printing_does_not_disturb_grading(grade):
    passes(grade, "def f(x):\n    print('debug', x)\n    return x * 2\n", ["assert f(21) == 42"])


def test_reading_stdin(grade):
    program = "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs[:n]))\n"
    passes(
        grade,
        program,
        [{"input": "2\n5 6 7\n", "output": "11"}, {"input": "3\n1 1 1", "output": "3\n\n"}],
    )


def test_stdin_output_compared_ignoring_trailing_whitespace_only(grade):
    program = "print('a  ')\nprint('b')\n"
    passes(grade, program, [{"input": "", "output": "a\nb   \n\n"}])
    v = grade(program, [{"input": "", "output": "a b"}])
    assert v.status == "failed" and "wrong output" in v.detail


def test_floats_and_special_values(grade):
    program = "import math\ndef stats(xs):\n    return sum(xs) / len(xs), math.inf, -0.0\n"
    passes(
        grade,
        program,
        [
            "m, inf, z = stats([0.1, 0.2])\nassert abs(m - 0.15) < 1e-12 and inf == float('inf') and z == 0"
        ],
    )


def test_numpy_values_cross_as_themselves(grade):
    program = (
        "import numpy as np\ndef f(n):\n    return np.arange(n) * 2\n"
        "def g():\n    return np.int64(7)\ndef total(a):\n    return int(a.sum())\n"
    )
    tests = [
        "assert (f(3) == [0, 2, 4]).all() and f(3).shape == (3,) and f(3).tolist() == [0, 2, 4]",
        "import numpy as np\nassert g() == 7 and isinstance(g(), np.int64)",
        "import numpy as np\nassert total(np.ones((2, 3))) == 6",  # an array the tests pass
    ]
    passes(grade, program, tests)


def test_calls_return_reprs_of_values(grade):
    v = grade("def f(x):\n    return {'k': [x, (x,)]}\n", [], calls=["f(1)", "f('a')", "1/0"])
    assert v.outputs[:2] == ["{'k': [1, (1,)]}", "{'k': ['a', ('a',)]}"]
    assert v.outputs[2] is None and "ZeroDivisionError" in v.detail


def test_modules_imported_by_the_program_are_usable_in_tests(grade):
    passes(grade, "import math\ndef f():\n    return 2.0\n", ["assert math.isclose(f(), 2.0)"])
