"""A real bank for training tests (the export tests' builder: seeds, attempts that pass and
fail), built once per session; tests that write to it copy it first."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "export"))
os.environ.setdefault("SELFPLAY_REWARD_WORKERS", "2")

from bank_builder import build_bank  # noqa: E402


@pytest.fixture(scope="session")
def built_bank(tmp_path_factory, verifier) -> Path:
    return build_bank(tmp_path_factory.mktemp("train-bank") / "bank.db", verifier)


@pytest.fixture
def bank_file(built_bank, tmp_path) -> Path:
    path = tmp_path / "bank.db"
    shutil.copy(built_bank, path)
    return path


@pytest.fixture(scope="session")
def tiny_model() -> str:
    from selfplay.backends.models import local_model_dir

    return local_model_dir("smollm2-135m")
