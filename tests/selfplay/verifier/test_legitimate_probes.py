"""Correct programs and tests that an earlier verifier failed (an attack on it found 30 such
over-defenses): each must pass. A false negative is a wrong reward too. What still cannot
pass is listed, with the reason, under "Known limits" in the threat model
(`selfplay/verifier/__init__.py`)."""

import pytest

PROBES = {
    "contains on a handle": (
        "class Trie:\n    def __init__(self): self.w=set()\n    def add(self, x): self.w.add(x)\n    def __contains__(self, x): return x in self.w\ndef make():\n    t=Trie(); t.add('ab'); return t\n",
        ["t = make()\nassert 'ab' in t and 'zz' not in t"],
    ),
    "from datetime import datetime": (
        "from datetime import datetime\ndef f():\n    return 1\n",
        ["assert datetime(2020,1,1).year == 2020 and f() == 1"],
    ),
    "from random import random": (
        "from random import random\ndef f():\n    return 1\n",
        ["assert 0 <= random() < 1 and f() == 1"],
    ),
    "numpy matrix return": (
        "import numpy as np\ndef f():\n    return np.matrix([[1,2],[3,4]])\n",
        [
            "import numpy as np\nm = f()\nassert isinstance(m, np.matrix) and (m == np.matrix([[1,2],[3,4]])).all()"
        ],
    ),
    "numpy string array": (
        "import numpy as np\ndef f():\n    return np.array(['a','bc'])\n",
        [
            "import numpy as np\na = f()\nassert isinstance(a, np.ndarray) and a.dtype.kind == 'U' and list(a) == ['a','bc']"
        ],
    ),
    "generator send": (
        "def acc():\n    total = 0\n    while True:\n        x = yield total\n        total += x\n",
        ["g = acc()\nnext(g)\nassert g.send(1) == 1\nassert g.send(2) == 3\nassert g.send(3) == 6"],
    ),
    "random seed": (
        "import random\ndef f():\n    return random.random()\n",
        [
            "import random\nrandom.seed(7)\nwant = random.random()\nrandom.seed(7)\nassert f() == want"
        ],
    ),
    "numpy seed": (
        "import numpy as np\ndef f():\n    return float(np.random.rand())\n",
        [
            "import numpy as np\nnp.random.seed(3)\nwant = float(np.random.rand())\nnp.random.seed(3)\nassert f() == want"
        ],
    ),
    "environment variable": (
        "import os\ndef f():\n    return os.environ.get('MODE')\n",
        ["import os\nos.environ['MODE'] = 'fast'\nassert f() == 'fast'"],
    ),
    "decimal context": (
        "from decimal import Decimal\ndef f():\n    return Decimal(1) / Decimal(3)\n",
        ["import decimal\ndecimal.getcontext().prec = 5\nassert str(f()) == '0.33333'"],
    ),
    "cwd": (
        "import os\ndef f():\n    return os.getcwd()\n",
        [
            "import os\nos.makedirs('/tmp/w', exist_ok=True)\nos.chdir('/tmp/w')\nassert f() == '/tmp/w'"
        ],
    ),
    "generator argument": (
        "def total(xs):\n    return sum(xs)\n",
        ["assert total(x * x for x in range(4)) == 14"],
    ),
    "map argument": (
        "def total(xs):\n    return sum(xs)\n",
        ["assert total(map(int, ['1', '2'])) == 3"],
    ),
    "itemgetter argument": (
        "def pick(rows, key):\n    return sorted(rows, key=key)\n",
        [
            "from operator import itemgetter\nassert pick([(2,'b'),(1,'a')], itemgetter(0)) == [(1,'a'),(2,'b')]"
        ],
    ),
    "partial argument": (
        "def apply(f, x):\n    return f(x)\n",
        ["from functools import partial\nassert apply(partial(pow, 2), 3) == 8"],
    ),
    "Path argument": (
        "def name(p):\n    return p.name\n",
        ["from pathlib import Path\nassert name(Path('/a/b.txt')) == 'b.txt'"],
    ),
    "Path return": (
        "from pathlib import Path\ndef f():\n    return Path('/a') / 'b'\n",
        ["from pathlib import Path\nassert f() == Path('/a/b')"],
    ),
    "SimpleNamespace return": (
        "from types import SimpleNamespace\ndef f():\n    return SimpleNamespace(a=1, b=[2])\n",
        ["from types import SimpleNamespace\nassert f() == SimpleNamespace(a=1, b=[2])"],
    ),
    "ChainMap return": (
        "from collections import ChainMap\ndef f():\n    return ChainMap({'a': 1}, {'b': 2})\n",
        ["from collections import ChainMap\nassert f() == ChainMap({'a': 1}, {'b': 2})"],
    ),
    "coroutine await": (
        "async def f():\n    return 5\n",
        ["import asyncio\nassert asyncio.run(f()) == 5"],
    ),
    "ExceptionGroup members": (
        "def f():\n    raise ExceptionGroup('many', [ValueError('a'), KeyError('b')])\n",
        [
            "try:\n    f()\nexcept ExceptionGroup as g:\n    assert isinstance(g.exceptions[0], ValueError) and str(g.exceptions[0]) == 'a'\nelse:\n    assert False"
        ],
    ),
    "exception context": (
        "def f():\n    try:\n        {}['x']\n    except KeyError:\n        raise ValueError('bad')\n",
        [
            "try:\n    f()\nexcept ValueError as e:\n    assert isinstance(e.__context__, KeyError)\nelse:\n    assert False"
        ],
    ),
    "isinstance Sequence": (
        "class Seq:\n    def __len__(self): return 2\n    def __getitem__(self, i):\n        if i >= 2: raise IndexError\n        return i\nfrom collections.abc import Sequence\nSequence.register(Seq)\ndef f():\n    return Seq()\n",
        ["from collections.abc import Sequence\nassert isinstance(f(), Sequence)"],
    ),
    "not an Iterator": (
        "class Box:\n    pass\ndef f():\n    return Box()\n",
        ["from collections.abc import Iterator\nassert not isinstance(f(), Iterator)"],
    ),
    "not callable": (
        "class Box:\n    pass\ndef f():\n    return Box()\n",
        ["assert not callable(f())"],
    ),
    "pickle a program object": (
        "class P:\n    def __init__(self, x): self.x = x\n    def __eq__(self, o): return isinstance(o, P) and o.x == self.x\ndef f():\n    return P(3)\n",
        ["import pickle\np = f()\nassert pickle.loads(pickle.dumps(p)) == p"],
    ),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_legitimate_code_passes(grade, name):
    program, tests = PROBES[name]
    v = grade(program, tests)
    assert v.passed, v.detail
    assert "handle_compared" not in v.signals and "channel_forgery" not in v.signals


def test_a_seed_the_tests_drew_from_stays_theirs(grade):
    """The generator's state crosses only freshly seeded: what the tests drew after seeding
    is not the program's to replay."""
    program = "import random\ndef guess():\n    return random.random()\n"
    tests = ["import random\nrandom.seed(7)\nwant = random.random()\nassert guess() != want"]
    v = grade(program, tests)
    assert v.passed, v.detail


def test_an_iterator_too_long_to_pass_is_refused_with_a_reason(grade):
    v = grade(
        "def total(xs):\n    return sum(xs)\n", ["import itertools\ntotal(itertools.count())"]
    )
    assert not v.passed and "cannot be passed" in v.detail


def test_a_partial_the_program_returns_never_runs_a_library_function_here(grade):
    """A partial crosses only around the program's own function: `partial(exec, code, {})`
    would run the program's code in the test process, where the verdict is written."""
    program = (
        "from functools import partial\n"
        "def counter():\n"
        "    return partial(exec, 'import os; os.write(1, b\"pwned\")', {})\n"
        "def adder(n):\n"
        "    def add(x):\n"
        "        return x + n\n"
        "    return partial(add)\n"
    )
    attack = grade(program, ["counter()()"])
    assert not attack.passed and "partial" in attack.detail
    legit = grade(program, ["assert adder(2)(3) == 5"])
    assert legit.passed, legit.detail


def test_an_attrgetter_the_program_returns_reads_no_private_attribute(grade):
    program = "from operator import attrgetter\ndef key():\n    return attrgetter('__class__')\n"
    v = grade(program, ["assert key()(1) is int"])
    assert not v.passed


def test_a_fully_masked_array_passes_no_numpy_assertion(grade):
    """numpy.testing ignores masked entries: a masked array of the program's stays a handle,
    which numpy's assertions refuse, instead of data that would pass against anything."""
    program = (
        "import numpy as np\ndef f():\n    return np.ma.masked_array([0, 0, 0], mask=[1, 1, 1])\n"
    )
    for check in ("assert_array_equal", "assert_allclose"):
        test = f"import numpy as np\nnp.testing.{check}(f(), np.array([1.0, 2.0, 3.0]))"
        v = grade(program, [test])
        assert not v.passed, (check, v.detail)


def test_the_tests_may_pass_a_masked_array_to_the_program(grade):
    program = "def total(a):\n    return int(a.sum())\n"
    test = "import numpy as np\nassert total(np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])) == 4"
    v = grade(program, [test])
    assert v.passed, v.detail
