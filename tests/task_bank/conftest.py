"""Shared fixtures: a real sandboxed verifier and a real SQLite bank file per test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from selfplay.verifier import Verifier
from task_bank.gate import Gate, GateConfig
from task_bank.store import Bank

# With --import-mode=importlib test directories are not on sys.path; the shared row
# builders live next to this file.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def verifier():
    with Verifier(workers=2, timeout_s=10.0) as v:
        yield v


@pytest.fixture
def bank(tmp_path: Path):
    with Bank(tmp_path / "bank.db") as b:
        yield b


@pytest.fixture
def gate(bank: Bank, verifier: Verifier) -> Gate:
    return Gate(bank, verifier, GateConfig())
