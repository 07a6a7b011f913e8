"""The static checks: each rejection reason, and the programs that must pass."""

import pytest

from selfplay.admission.static import static_checks

OK = "def f(x):\n    return sorted(x)\n"


def reason(program, kind="deduction"):
    r = static_checks(program, "f", kind)
    return None if r is None else r.name


def test_a_plain_function_passes():
    assert reason(OK) is None


def test_no_code():
    assert reason(None) == "no_code"
    assert reason("   \n") == "no_code"


def test_unparseable():
    assert reason("def f(x):\n    return (x\n") == "unparseable"


def test_no_entry_point_and_no_parameters():
    assert reason("def g(x):\n    return x\n") == "no_entry_point"
    assert reason("def f():\n    return 1\n") == "no_parameters"


@pytest.mark.parametrize(
    "program",
    [
        "import random\ndef f(x):\n    return random.randint(0, x)\n",
        "from random import choice\ndef f(x):\n    return choice(x)\n",
        "import os\ndef f(x):\n    return os.urandom(x)\n",
        "import uuid\ndef f(x):\n    return str(uuid.uuid4())\n",
        "import secrets\ndef f(x):\n    return secrets.token_hex(x)\n",
    ],
)
def test_unseeded_randomness(program):
    assert reason(program) == "unseeded_randomness"


def test_seeded_randomness_passes():
    program = (
        "import random\ndef f(x):\n    rng = random.Random(42)\n    return rng.randint(0, x)\n"
    )
    assert reason(program) is None
    program = "import random\ndef f(x):\n    random.seed(x)\n    return random.random()\n"
    assert reason(program) is None


@pytest.mark.parametrize(
    "program",
    [
        "import time\ndef f(x):\n    return x\n",
        "from time import perf_counter\ndef f(x):\n    return perf_counter()\n",
        "import datetime\ndef f(x):\n    return datetime.datetime.now().year + x\n",
        "from datetime import date\ndef f(x):\n    return date.today().day\n",
    ],
)
def test_time_dependence(program):
    assert reason(program) == "time_dependence"


def test_dates_without_the_clock_pass():
    assert (
        reason("import datetime\ndef f(y):\n    return datetime.date(y, 1, 1).weekday()\n") is None
    )


def test_process_dependent_builtins():
    assert reason("def f(s):\n    return hash(s) % 7\n") == "hidden_state"
    assert reason("def f(s):\n    return open(s).read()\n") == "hidden_state"


def test_codegen_needs_a_docstring():
    assert reason(OK, "codegen") == "no_description"
    documented = (
        'def f(x):\n    """Return the items of x in ascending order."""\n    return sorted(x)\n'
    )
    assert reason(documented, "codegen") is None


@pytest.mark.parametrize(
    "program",
    [
        "def f(x):\n    if not x:\n        return 0\n    return helper(x)\n",
        "def f(x):\n    g = lambda y: y + z\n    return g(x)\n",
        "def f(xs):\n    return [v * k for v in xs]\n",
        # A class attribute is no global: a method that reads it bare raises NameError.
        "class A:\n    k = 3\n    def m(self):\n        return k\n\ndef f(x):\n    return A().m()\n",
    ],
)
def test_undefined_name(program):
    assert reason(program) == "undefined_name"


@pytest.mark.parametrize(
    "program",
    [
        "def g(y):\n    return y + 1\n\ndef f(x):\n    return g(x)\n",
        "def f(n):\n    return 1 if n < 2 else n * f(n - 1)\n",
        "def f(x):\n    global seen\n    seen = x\n    return seen\n",
        "def f(x):\n    import math\n    return math.sqrt(x)\n",
        "from math import *\ndef f(x):\n    return sqrt(x)\n",
        "def f(xs):\n    return [w for v in xs if (w := v)] + [w]\n",
        "def f(x):\n    try:\n        return int(x)\n    except ValueError as e:\n        return str(e)\n",
        "def f(x):\n    return __name__ + str(x)\n",
    ],
)
def test_names_bound_anywhere_the_program_can_see_pass(program):
    assert reason(program) is None
