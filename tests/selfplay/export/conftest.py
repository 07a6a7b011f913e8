"""One real bank file for the export tests, built once (exports only read it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("SELFPLAY_REWARD_WORKERS", "2")

from bank_builder import build_bank  # noqa: E402


@pytest.fixture(scope="session")
def bank_path(tmp_path_factory, verifier) -> Path:
    return build_bank(tmp_path_factory.mktemp("bank") / "bank.db", verifier)
