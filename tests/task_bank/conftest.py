"""A gate on this test's own bank and the shared verifier (both from tests/conftest.py)."""

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


@pytest.fixture
def gate(bank: Bank, verifier: Verifier) -> Gate:
    return Gate(bank, verifier, GateConfig())
