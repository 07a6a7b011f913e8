"""Rewards: the solver's per attempt, the proposer's per task from the solver's pass rate.

A task every attempt solves, or none does, teaches the solver nothing, so both
learnability forms are 0 at p = 0 and p = 1:
- `variance`: p(1-p), largest at p = 1/2 (Foster & Foerster 2025 sample tasks by it);
- `absolute_zero`: 1 - p on 0 < p < 1 (Absolute Zero's proposer reward), largest for the
  hardest task the solver still solves sometimes.
"""

from __future__ import annotations

from selfplay.config import Learnability

LEARNABILITY_FORMS = ("variance", "absolute_zero")


def solver_reward(passed: bool) -> float:
    return 1.0 if passed else 0.0


def learnability(pass_rate: float, form: Learnability = "variance") -> float:
    """The proposer's reward for a task the solver passes at rate `pass_rate`."""
    if not 0.0 <= pass_rate <= 1.0:
        raise ValueError(f"pass_rate must be in [0, 1], got {pass_rate}")
    if pass_rate in (0.0, 1.0):
        return 0.0
    if form == "variance":
        return pass_rate * (1.0 - pass_rate)
    if form == "absolute_zero":
        return 1.0 - pass_rate
    raise ValueError(f"learnability form must be one of {LEARNABILITY_FORMS}, got {form!r}")
