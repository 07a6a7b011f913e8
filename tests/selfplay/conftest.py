"""Fixtures for the selfplay package tests: the bundled seed tasks (validated by the bank's own
reader); the verifier is the shared one (tests/conftest.py)."""

from __future__ import annotations

import os

import pytest

from selfplay.admission.importers import read_source

# The shared reward pool reads its size from here; two workers suit a small CI machine.
os.environ.setdefault("SELFPLAY_REWARD_WORKERS", "2")


@pytest.fixture(scope="session")
def seed_tasks():
    return read_source("seeds").tasks


@pytest.fixture(scope="session")
def by_kind(seed_tasks):
    """The first seed task of each kind."""
    out = {}
    for t in seed_tasks:
        out.setdefault(t.kind, t)
    return out
