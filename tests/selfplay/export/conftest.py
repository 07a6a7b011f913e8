"""The export tests read built_bank (tests/conftest.py) in place: exports only read a bank."""

from __future__ import annotations

import os

# The shared reward pool reads its size from here; two workers suit a small CI machine.
os.environ.setdefault("SELFPLAY_REWARD_WORKERS", "2")
