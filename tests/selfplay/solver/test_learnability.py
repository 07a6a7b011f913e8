"""The proposer's reward for a task, from the solver's pass counts on it."""

import pytest

from selfplay.solver import LEARNABILITY_FORMS, learnability


def test_a_task_always_or_never_solved_teaches_nothing():
    for form in LEARNABILITY_FORMS:
        assert learnability(0, 3, form) == learnability(3, 3, form) == 0.0


def test_variance_is_largest_at_half_solved():
    assert learnability(1, 2) == 0.25 and learnability(1, 4, "variance") == 0.1875
    assert learnability(1, 3) == pytest.approx(1 / 3 * 2 / 3)


def test_absolute_zero_rewards_the_hardest_solvable_task():
    assert learnability(1, 4, "absolute_zero") == 0.75
    assert learnability(1, 3, "absolute_zero") == pytest.approx(2 / 3)


def test_bad_counts_and_forms_are_refused():
    with pytest.raises(ValueError, match="absolute_zero"):
        learnability(1, 2, "other")
    for successes, attempts in ((0, 0), (3, 2), (-1, 2)):
        with pytest.raises(ValueError, match="successes <= attempts"):
            learnability(successes, attempts)
