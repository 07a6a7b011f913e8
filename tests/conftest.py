"""Fixtures shared across the tree: one real local Ray cluster for every Ray test."""

from __future__ import annotations

import os

import pytest

# The reward pool joins a Ray cluster that this process is connected to; the suite's other
# reward tests must keep grading locally while the Ray cluster below is up.
os.environ.setdefault("SELFPLAY_RAY_ADDRESS", "off")


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
