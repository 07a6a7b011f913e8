"""State the tests set that a program running in their process would see: carried to the
solution process before a call whenever it changed.

- the environment (`os.environ`) and the working directory;
- the decimal module's context (precision, rounding, exponent limits, capitals, clamp);
- the seed of `random` and of numpy's legacy global generator, where the tests called
  `seed`: the freshly seeded state crosses, and only while nothing has been drawn from it
  (Mersenne Twister's position at its end). A state the tests have drawn from would tell the
  program what they drew (the generator can be run backwards), so `want = random.random();
  assert f() == want` stays the tests' secret, while `random.seed(7)` before a call gives the
  program the generator the tests seeded. The generator a module seeds for itself when it is
  imported never crosses: every row and its tests draw numbers of their own.

`Ambient.changes()` runs in the test process before each call (a few microseconds when nothing
changed); `apply` runs in the solution process.
"""

from __future__ import annotations

import decimal
import os
import sys

_MT_END = 624  # the position of a freshly seeded Mersenne Twister
_DECIMAL_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")


def _decimal_context() -> tuple:
    ctx = decimal.getcontext()
    return tuple(getattr(ctx, name) for name in _DECIMAL_FIELDS)


SEEDED: set[str] = set()  # "random", "numpy.random": seeded by the tests since last sent


def _watch(module) -> None:
    """Note every call of the module's `seed`."""
    seed = getattr(module, "seed", None)
    if seed is None or getattr(seed, "_selfplay_watched", False):
        return

    def watched(*args, **kwargs):
        SEEDED.add(module.__name__)
        return seed(*args, **kwargs)

    watched._selfplay_watched = True
    module.seed = watched


class _SeedWatch:
    """Watches `random` and `numpy.random` as the tests import them (not before: importing
    `random` costs a row that does not use it)."""

    def find_spec(self, name, path, target=None):
        if name not in ("random", "numpy.random"):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                loader = spec.loader
                execute = loader.exec_module

                def exec_module(module, execute=execute):
                    execute(module)
                    _watch(module)

                try:
                    loader.exec_module = exec_module
                except AttributeError:
                    return None
                return spec
        return None


def watch_seeds() -> None:
    for name in ("random", "numpy.random"):
        if name in sys.modules:
            _watch(sys.modules[name])
    if not any(isinstance(f, _SeedWatch) for f in sys.meta_path):
        sys.meta_path.insert(0, _SeedWatch())


def _random_state():
    rnd = sys.modules.get("random")
    if rnd is None or "random" not in SEEDED:
        return None
    state = rnd.getstate()
    return state if state[1][-1] == _MT_END and state[2] is None else None


def _numpy_state():
    np_random = sys.modules.get("numpy.random")
    if np_random is None or "numpy.random" not in SEEDED:
        return None
    try:
        name, keys, pos, has_gauss, _ = np_random.get_state(legacy=True)
    except Exception:
        return None
    if name != "MT19937" or pos != _MT_END or has_gauss:
        return None
    return keys.tolist()


class Ambient:
    """The test process's side: what was last sent, and what changed since."""

    def __init__(self):
        watch_seeds()
        self.env = dict(os.environ._data)  # bytes to bytes: compared without decoding
        self.cwd = _cwd()
        self.decimal = _decimal_context()
        self.random = _random_state()
        self.numpy = None

    def changes(self) -> dict | None:
        out: dict = {}
        if os.environ._data != self.env:
            self.env = dict(os.environ._data)
            out["env"] = dict(os.environ)
        cwd = _cwd()
        if cwd != self.cwd and cwd is not None:
            self.cwd = out["cwd"] = cwd
        ctx = _decimal_context()
        if ctx != self.decimal:
            self.decimal = ctx
            out["decimal"] = list(ctx)
        state = _random_state()
        if state is not None and state != self.random:
            self.random = state
            out["random"] = list(state[1])
        keys = _numpy_state()
        if keys is not None and keys != self.numpy:
            self.numpy = out["numpy"] = keys
        SEEDED.clear()
        return out or None


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


def apply(state) -> None:
    """In the solution process: take the tests' state (checked: it comes from the tests, but
    a malformed one must not break the call protocol)."""
    if type(state) is not dict:
        return
    env = state.get("env")
    if type(env) is dict and all(type(k) is str and type(v) is str for k, v in env.items()):
        os.environ.clear()
        os.environ.update(env)
    cwd = state.get("cwd")
    if type(cwd) is str:
        try:
            os.chdir(cwd)
        except OSError:
            pass
    ctx = state.get("decimal")
    if type(ctx) is list and len(ctx) == len(_DECIMAL_FIELDS):
        try:
            for name, value in zip(_DECIMAL_FIELDS, ctx, strict=True):
                setattr(decimal.getcontext(), name, value)
        except (TypeError, ValueError):
            pass
    words = state.get("random")
    if type(words) is list and len(words) == _MT_END + 1:
        try:
            import random

            random.setstate((3, tuple(words), None))
        except (TypeError, ValueError):
            pass
    keys = state.get("numpy")
    if type(keys) is list and len(keys) == _MT_END:
        try:
            import numpy

            numpy.random.set_state(("MT19937", numpy.array(keys, dtype=numpy.uint32), _MT_END))
        except Exception:
            pass
