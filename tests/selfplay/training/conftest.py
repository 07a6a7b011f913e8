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
    from task_bank.schema import parse_task

    def make(kind, program, inputs, outputs):
        row = {
            "kind": kind,
            "prompt": f"A {kind} task.",
            "program": program,
            "entry_point": "f",
            "tests": [f"assert f({x}) == {y}" for x, y in zip(inputs, outputs, strict=True)],
            "examples": [{"input": x, "output": y} for x, y in zip(inputs, outputs, strict=True)],
        }
        return parse_task(row, source="test")

    return make
