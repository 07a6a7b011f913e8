"""A row reads only the interpreter, the standard library and the packages a program may
import, and every page of them is in memory before it runs: no read of a row waits for the
disk, so which pages are cached says nothing another row wrote."""

from __future__ import annotations

import ast
import os
import sysconfig
from importlib import metadata

import pytest

from selfplay.verifier import Verifier
from selfplay.verifier.bwrap import root_mounts, sandbox_readable, to_sandbox_path
from selfplay.verifier.factory import make_verifier
from selfplay.verifier.readable import default_packages, package_paths, readable

WALK = r"""
import os, resource

SKIP = ("/proc", "/dev", "/tmp", "/run", "/opt/selfplay/snapshots")

def io():
    with open("/proc/self/io") as f:
        fields = dict(line.split(": ") for line in f.read().splitlines())
    return int(fields["read_bytes"]), resource.getrusage(resource.RUSAGE_SELF).ru_inblock

def read_everything():
    before = io()
    files = total = 0
    for top, dirs, names in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP]
        for name in names:
            path = os.path.join(top, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb", buffering=0) as f:
                while chunk := f.read(1 << 20):
                    total += len(chunk)
            files += 1
    after = io()
    return files, total, after[0] - before[0], after[1] - before[1]

def exists(paths):
    return [os.path.exists(p) for p in paths]
"""


def _inside(host: str) -> str:
    real = os.path.realpath(host)
    return to_sandbox_path(real, root_mounts()) or real


def _evict(paths) -> None:
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def test_every_read_a_row_makes_hits_memory():
    """The host drops what it can of the readable files from its cache first: only the
    verifier's own reading at start brings them back before the row reads them all."""
    _evict(sandbox_readable(default_packages()).files())
    with Verifier(workers=1, timeout_s=60) as v:
        row = {"id": "walk", "program": WALK, "tests": [], "calls": ["read_everything()"]}
        (verdict,) = v.grade([row])
    assert verdict.status == "passed", verdict.detail
    files, total, read_bytes, blocks_in = ast.literal_eval(verdict.outputs[0])
    assert files > 1000 and total > 50 << 20, (files, total)  # the whole installation it sees
    assert (read_bytes, blocks_in) == (0, 0)


def test_nothing_else_of_the_host_is_there_to_read(one_worker):
    typer = metadata.distribution("typer").locate_file("typer/__init__.py")  # not importable
    stdlib_test = os.path.join(os.path.dirname(os.__file__), "test", "__init__.py")
    numpy = metadata.distribution("numpy").locate_file("numpy/__init__.py")
    paths = [_inside(str(p)) for p in (typer, stdlib_test, numpy)]
    # What the host has beside them (the parents of bound paths, /root for a Python under
    # it, say, are made empty in the sandbox).
    paths += [
        p for p in ("/usr/bin/env", "/etc/passwd", "/usr/share", "/var/lib") if os.path.exists(p)
    ]
    row = {"id": "x", "program": WALK, "tests": [], "calls": [f"exists({paths!r})"]}
    (verdict,) = one_worker.grade([row])
    seen = dict(zip(paths, ast.literal_eval(verdict.outputs[0]), strict=True))
    assert seen.pop(paths[2]) is True, seen  # numpy is there, its neighbours are not
    assert not any(seen.values()), seen


def test_a_package_outside_the_set_is_refused_until_asked_for(monkeypatch):
    row = {"id": "t", "program": "import typer\ndef f():\n    return typer.__name__",
           "tests": ["assert f() == 'typer'"]}  # fmt: skip
    with make_verifier(1) as v:
        (refused,) = v.grade([row])
    assert refused.status == "error" and "No module named 'typer'" in refused.detail
    assert "SELFPLAY_PACKAGES" in refused.detail  # installed here: the detail says how
    monkeypatch.setenv("SELFPLAY_PACKAGES", "numpy,typer")
    with make_verifier(1) as v:
        (passed,) = v.grade([row])
    assert passed.status == "passed", passed.detail


def test_the_set_follows_requirements_and_hides_the_standard_librarys_tests():
    entries, missing = package_paths(("pandas", "no-such-package-here"))
    tops = {os.path.basename(e) for e in entries}
    assert {"pandas", "numpy", "dateutil"} <= tops, tops  # pandas needs them to import
    assert "typer" not in tops and missing == ["no-such-package-here"]
    r = readable(("numpy",))
    assert any(h.endswith("/test") for h in r.hidden)
    tests = os.path.join(os.path.realpath(sysconfig.get_paths()["stdlib"]), "test") + "/"
    files = list(r.files())
    assert any(f.endswith("/json/__init__.py") for f in files)
    assert not any(f.startswith(tests) for f in files)


def test_a_package_asked_for_and_not_installed_is_named():
    warnings: list[str] = []
    with Verifier(workers=1, packages=("numpy", "no-such-package-here"), warn=warnings.append) as v:
        v.start()
    assert any("no-such-package-here" in w and "not installed" in w for w in warnings), warnings


@pytest.mark.parametrize("program", ["import numpy, pandas, json, sqlite3, hashlib, decimal"])
def test_the_default_set_imports(one_worker, program):
    row = {"id": "i", "program": program + "\ndef f():\n    return 1", "tests": ["assert f()"]}
    (verdict,) = one_worker.grade([row])
    assert verdict.passed, verdict.detail


def test_a_runs_config_names_the_packages_and_the_environment_the_default(monkeypatch):
    from selfplay.config import RunConfig
    from selfplay.engine.build import make_run_verifier

    config = RunConfig.model_validate({"verifier": {"packages": ["numpy", "typer"]}})
    assert make_run_verifier(config).packages == ("numpy", "typer")
    monkeypatch.setenv("SELFPLAY_PACKAGES", "numpy, sympy")
    assert make_run_verifier(RunConfig()).packages == ("numpy", "sympy")
    monkeypatch.delenv("SELFPLAY_PACKAGES")
    assert make_run_verifier(RunConfig()).packages == ("numpy", "pandas", "pytest")
