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
