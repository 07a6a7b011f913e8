"""No program gets code of its choosing run in the test process, the one that writes the verdict.

Two ways an attack found, each a wrong `solve` that passed with no signal:
- naming a module whose import acts (`numpy.f2py.__main__` runs f2py on the test process's
  own arguments, and f2py evaluates expressions from a file it reads in the working directory,
  which the program writes): as a module global, the module of a raised exception, of an
  exception's base class, of an enum's member;
- a forged reply on the program's end of the call channel: a handle without a class, whose
  `__class__` the program then answered with numpy.ndarray, so `pytest.approx` compared every
  element of an empty `flat`.
"""

import pytest

from selfplay.verifier.inside import channel

# Runs in whichever process evaluates it: in the test process it rewrites the verdict to passed.
_FORGE = (
    "import sys\n"
    "for _m in list(sys.modules.values()):\n"
    "    if hasattr(_m, 'Reporter') and hasattr(_m, 'Namespace'):\n"
    "        _orig = _m.Reporter.write\n"
    "        def _w(self, obj, _orig=_orig):\n"
    "            if 'v' in obj:\n"
    "                obj = {'v': dict(obj['v'], status='passed', tests_passed=10**6, detail='')}\n"
    "            return _orig(self, obj)\n"
    "        _m.Reporter.write = _w\n"
)

# Writes the Fortran file f2py would read, under the name f2py takes from the test process's
# arguments (the same as the zygote's), in /tmp, the test process's working directory.
_PRELUDE = (
    "import os, types, enum\n"
    "_argv = open('/proc/self/cmdline', 'rb').read().split(b'\\0')\n"
    "_name = [a for a in _argv if a][-1].decode()\n"
    "_src = ('      subroutine foo(a)\\n      integer n\\n'\n"
    "        \"      parameter (n = len(str(exec(bytes.fromhex('HEX').decode()))))\\n\"\n"
    "        '      real a(n)\\n      end\\n')\n"
    "for _tok in _name.split():\n"
    "    if not _tok.startswith('-'):\n"
    "        open(os.path.join('/tmp', _tok), 'w').write(_src)\n"
    "        break\n"
).replace("HEX", _FORGE.encode().hex())

MODULE = "numpy.f2py.__main__"
TRIGGERS = {
    "module global": f"f2py_main = types.ModuleType({MODULE!r})\ndef solve(x):\n    return 0\n",
    "raised exception": (
        "def solve(x):\n"
        "    class E(Exception):\n        pass\n"
        f"    E.__module__ = {MODULE!r}\n"
        "    raise E('no')\n"
    ),
    "exception base": (
        f"class Base(Exception):\n    pass\nBase.__module__ = {MODULE!r}\n"
        "class Mine(Base):\n    pass\ndel Base\ndef solve(x):\n    return 0\n"
    ),
    "enum member": (
        f"class Color(enum.Enum):\n    RED = 1\nColor.__module__ = {MODULE!r}\n"
        "_c = Color.RED\ndel Color\ndef solve(x):\n    return _c\n"
    ),
}
SQUARES = ["assert solve(4) == 16", "assert solve(5) == 25"]


@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_a_module_whose_import_acts_is_never_imported_for_the_program(grade, trigger):
    pytest.importorskip("numpy")
    verdict = grade(_PRELUDE + TRIGGERS[trigger], SQUARES)
    assert not verdict.passed, verdict
    assert verdict.tests_passed == 0


def test_the_same_program_solving_the_task_still_passes(grade):
    pytest.importorskip("numpy")
    program = _PRELUDE + TRIGGERS["module global"].replace("return 0", "return x * x")
    assert grade(program, SQUARES).passed


@pytest.mark.parametrize(
    "module, allowed",
    [
        ("json", True),
        ("json.decoder", True),
        ("collections.abc", True),
        ("numpy.f2py.__main__", False),
        ("json.__main__", False),
        ("this", False),
        ("antigravity", False),
        ("idlelib.idle", False),
        ("numpy.tests", False),
        ("pandas.conftest", False),
        ("unittest.__main__", False),
        ("solution", False),
        ("os.", False),
    ],
)
def test_importable_refuses_modules_that_act_or_are_private(module, allowed):
    assert channel.importable(module) is allowed


def test_a_private_module_already_imported_is_given_as_it_is():
    import _pickle  # noqa: F401  (pickle's exceptions live there)

    assert channel.importable("_pickle")
    assert not channel.importable("_selfplay_no_such_private_module")


# The program speaks for itself on the call channel: a reply with a handle that names no class
# (a proxy that asks the program for everything), then `__class__` answered as `claimed`.
_FORGED_REPLY = (
    "import sys, os\n"
    "import numpy\n"
    "class Fake:\n"
    "    flat = ()\n"
    "def solve(x):\n"
    "    srv = sys._getframe(2).f_locals['self']\n"
    "    wire = sys.modules[type(srv).__module__.rsplit('.', 1)[0] + '.wire']\n"
    "    obj = Fake()\n"
    "    hid = srv.enc.hid(obj)\n"
    "    wire.send(3, ('r', ('n', {handle}), [], []))\n"
    "    while True:\n"
    "        try:\n"
    "            req = wire.recv(3)\n"
    "        except EOFError:\n"
    "            os._exit(0)\n"
    "        op, args, kwargs, watched = req\n"
    "        if op == 'getattr':\n"
    "            a = [srv.enc.decode(m) for m in args]\n"
    "            if a[0] is obj and a[1] == '__class__':\n"
    "                wire.send(3, ('r', ('n', {claimed!r}), [], []))\n"
    "                continue\n"
    "        srv.reply(srv.answer(*req))\n"
)


@pytest.mark.parametrize(
    "claimed, tests",
    [
        (("G", "numpy", "ndarray"), ["import pytest\nassert solve(4) == pytest.approx(16)"]),
        (("G", "builtins", "int"), ["assert isinstance(solve(4), int)"]),
    ],
)
def test_a_forged_classless_handle_claims_no_class(grade, claimed, tests):
    pytest.importorskip("numpy")
    pytest.importorskip("pytest")
    program = _FORGED_REPLY.format(handle="('h', hid, 'ndarray')", claimed=claimed)
    verdict = grade(program, tests)
    assert not verdict.passed, verdict
    assert "channel_forgery" in verdict.signals


@pytest.mark.parametrize(
    "claimed, tests",
    [
        (("G", "numpy", "ndarray"), ["import pytest\nassert solve(4) == pytest.approx(16)"]),
        (("G", "builtins", "int"), ["assert isinstance(solve(4), int)"]),
        (("G", "builtins", "list"), ["assert isinstance(solve(4), list)"]),
    ],
)
def test_a_handle_of_a_standard_library_class_cannot_claim_a_data_class(grade, claimed, tests):
    """A well-formed handle of a class the tests know by name (a generator's) asks the program
    for its class: the answer is believed only for classes whose objects never cross as
    handles."""
    pytest.importorskip("numpy")
    pytest.importorskip("pytest")
    program = _FORGED_REPLY.format(handle="('h', hid, 'generator', -1, 0)", claimed=claimed)
    assert not grade(program, tests).passed


def test_a_classless_program_object_claims_only_its_own_kind(grade):
    """A program class or function (handles without a class of their own) may report `type`
    or a function type, as plain Python would; never a class of the tests' choosing."""
    program = "class Box:\n    pass\ndef solve():\n    return Box\ndef gen():\n    yield 1\n"
    assert grade(program, ["assert isinstance(solve(), type)"]).passed
    assert grade(program, ["import types\nassert isinstance(gen(), types.GeneratorType)"]).passed
    assert grade(program, ["import numpy\nassert not isinstance(solve(), numpy.ndarray)"]).passed
