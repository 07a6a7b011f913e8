"""Training tests train on bank_file, their own copy of built_bank (tests/conftest.py: seeds,
attempts that pass and fail), and on SmolLM2-135M."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("SELFPLAY_REWARD_WORKERS", "2")


@pytest.fixture(scope="session")
def tiny_model() -> str:
    from selfplay.backends.models import local_model_dir

    return local_model_dir("smollm2-135m")


@pytest.fixture()
def make_task():
    from bank_samples import io_task

    return io_task
