"""The proposer's reward for a task: its learnability, from the solver's pass counts on it.

A task every attempt solves, or none does, teaches the solver nothing, so both forms are 0 at
p = 0 and p = 1 (p = successes / attempts):
- `variance`: p(1-p), largest at p = 1/2 (Foster & Foerster 2025 sample tasks by it);
- `absolute_zero`: 1 - p on 0 < p < 1 (Absolute Zero's proposer reward), largest for the
  hardest task the solver still solves sometimes.

The round records it per new task (its `rewards` step, `selfplay.engine.steps.rewards`); it is
not the curriculum's E[p(1-p)] under a posterior (`curricula.posterior`'s `expected_variance`).
"""

from __future__ import annotations

from typing import get_args

from selfplay.config import Learnability

LEARNABILITY_FORMS: tuple[str, ...] = get_args(Learnability)


def learnability(successes: int, attempts: int, form: Learnability = "variance") -> float:
    """The proposer's reward for a task the solver passed `successes` times in `attempts`."""
    if attempts < 1 or not 0 <= successes <= attempts:
        raise ValueError(
            f"need 0 <= successes <= attempts and attempts >= 1, got {successes}/{attempts}"
        )
    if successes in (0, attempts):
        return 0.0
    pass_rate = successes / attempts
    if form == "variance":
        return pass_rate * (1.0 - pass_rate)
    if form == "absolute_zero":
        return 1.0 - pass_rate
    raise ValueError(f"learnability form must be one of {LEARNABILITY_FORMS}, got {form!r}")
