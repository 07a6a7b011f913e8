"""Fixtures shared across the tree: one real local Ray cluster for every Ray test, one
sandboxed verifier pool per setting the tests grade under, an empty bank file per test, and
the export tests' bank, built once."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from selfplay.verifier import Verifier
from task_bank.store import Bank

# Helpers the test modules import (`from selfplay_cli import run_cli`): with
# --import-mode=importlib test folders are not on sys.path.
sys.path.insert(0, str(Path(__file__).parent / "helpers"))

from bank_builder import build_bank  # noqa: E402

# The reward pool joins a Ray cluster that this process is connected to; the suite's other
# reward tests must keep grading locally while the Ray cluster below is up.
os.environ.setdefault("SELFPLAY_RAY_ADDRESS", "off")


@pytest.fixture(autouse=True)
def _ctrl_c_reaches_the_commands_started():
    """The tests that press Ctrl-C send SIGINT to the commands they start, which inherit this
    process's SIGINT ignored if it is (Python then installs no KeyboardInterrupt handler in
    them): a process started in the background, or one where a library in an earlier test
    left it ignored. Each test starts with Python's own."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def ray_cluster():
    """A real Ray cluster on loopback (no dashboard, no usage statistics, no token in the home
    directory), connected in this process; yields its address for subprocesses."""
    ray = pytest.importorskip("ray", reason="needs the ray extra: pip install 'selfplay[ray]'")
    from selfplay.verifier.connect import LOOPBACK, LOOPBACK_ENV, loopback_only

    saved = {key: os.environ.get(key) for key in LOOPBACK_ENV}
    loopback_only()
    context = ray.init(address="local", include_dashboard=False, log_to_driver=False, num_cpus=2,
                       _node_ip_address=LOOPBACK)  # fmt: skip
    try:
        yield context.address_info["address"]
    finally:
        ray.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# One pool per setting, started once per session (each start is two sandboxed workers with
# their zygotes and cgroups) and closed at its end. Sharing is safe because a row leaves
# nothing in its worker for the next row (what tests/selfplay/verifier checks), and a row may
# set its own timeout_s and memory_mb, so the setting is only the default for rows that do not.
# Tests that need a pool of their own build one instead: those that count its usage, see it
# start or close, set the environment it starts in, or need a single worker for two rows.
# The settings are the ones each folder used before the pools were shared; they are kept
# apart rather than merged so that no test's rows run under other limits than before.


def _pool(timeout_s: float, memory_mb: int):
    with Verifier(workers=2, timeout_s=timeout_s, memory_mb=memory_mb) as v:
        yield v


@pytest.fixture(scope="session")
def verifier():
    """The Verifier's own limits (10 s and 1,024 MB a row): grading as a user's default does."""
    yield from _pool(10.0, 1024)


@pytest.fixture(scope="session")
def verifier_3s():
    """3 s a row: the self-play round tests (a row that never ends costs 3 s, not 10)."""
    yield from _pool(3.0, 1024)


@pytest.fixture(scope="session")
def verifier_3s_512mb():
    """3 s and 512 MB a row: the proposer and solver tests (a replayed program that loops
    forever, as one proposer test's does, costs 3 s, not 10)."""
    yield from _pool(3.0, 512)


@pytest.fixture(scope="session")
def verifier_5s_512mb():
    """5 s and 512 MB a row: the verifier's own tests (those about a limit set it per row)."""
    yield from _pool(5.0, 512)


@pytest.fixture
def bank(tmp_path: Path):
    """An empty bank file of this test's own."""
    with Bank(tmp_path / "bank.db") as b:
        yield b


@pytest.fixture
def admission(bank: Bank, verifier: Verifier):
    """Admission into this test's own bank, with the shared verifier and default settings."""
    from selfplay.admission import Admission

    return Admission(bank, verifier)


@pytest.fixture(scope="session")
def built_bank(tmp_path_factory, verifier) -> Path:
    """The bank of helpers/bank_builder.py (the seeds, one contaminated HumanEval task, graded
    attempts), built once for the export, training and CLI tests: read it in place, or copy
    it first (bank_file) to write to it."""
    return build_bank(tmp_path_factory.mktemp("built-bank") / "bank.db", verifier)


@pytest.fixture
def bank_file(built_bank, tmp_path) -> Path:
    """This test's own copy of built_bank, to write to."""
    path = tmp_path / "bank.db"
    shutil.copy(built_bank, path)
    return path
