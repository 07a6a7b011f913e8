"""The proposer's RL reward: Absolute Zero's scale, R-Zero's repetition penalty, group-relative
advantages."""

from __future__ import annotations

import pytest

from selfplay.proposer.reward import OUTSIDE, REJECTED, group_advantages, score_proposals

A = "def f(x):\n    return x + 1\n"
A_OTHER_CONSTANT = "def f(x):\n    return x + 7\n"
B = "def f(s):\n    return s[::-1]\n"
C = "def f(xs):\n    return sorted(xs)[0]\n"


def test_rejected_scores_minus_one_and_outside_the_frontier_minus_a_half():
    scores = score_proposals(
        [False, True, True, True], [None, (4, 0), (4, 4), (4, 1)], [A, B, C, "x"], penalty=0.0
    )
    assert [s.base for s in scores] == [REJECTED, OUTSIDE, OUTSIDE, 0.75]
    assert [s.frontier for s in scores] == [False, False, False, True]
    assert scores[3].pass_rate == 0.25 and scores[0].pass_rate is None


def test_harder_frontier_tasks_score_more():
    hard, easy = score_proposals([True, True], [(8, 1), (8, 7)], [A, B], penalty=0.0)
    assert hard.reward == pytest.approx(7 / 8) and easy.reward == pytest.approx(1 / 8)


def test_an_admitted_task_nobody_attempted_is_not_counted_at_the_frontier():
    [s] = score_proposals([True], [None], [A], penalty=0.0)
    assert s.base == OUTSIDE and not s.frontier


def test_copies_of_one_program_shape_pay_their_share_of_the_batch():
    # Two proposals differ only in a constant: one shape, so each pays 2/4; the others 1/4.
    scores = score_proposals([True] * 4, [(4, 2)] * 4, [A, A_OTHER_CONSTANT, B, C], penalty=1.0)
    assert [s.penalty for s in scores] == [0.5, 0.5, 0.25, 0.25]
    assert scores[0].reward == pytest.approx(0.5 - 0.5)
    assert scores[2].reward == pytest.approx(0.5 - 0.25)
    none = score_proposals([True] * 2, [(4, 2)] * 2, [A, A], penalty=0.0)
    assert [s.reward for s in none] == [0.5, 0.5]


def test_a_missing_program_pays_no_penalty():
    [s] = score_proposals([False], [None], [None], penalty=1.0)
    assert s.penalty == 0.0 and s.reward == REJECTED


def test_advantages_compare_only_within_a_group():
    adv = group_advantages([1.0, -1.0, 5.0, 5.0, 0.2], [0, 0, 1, 1, 2])
    assert adv[0] == pytest.approx(1.0, abs=1e-3) and adv[1] == pytest.approx(-1.0, abs=1e-3)
    # A group whose members all scored the same (or a single member) moves nothing.
    assert adv[2:] == [0.0, 0.0, 0.0]


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError):
        score_proposals([True], [], [A])
    with pytest.raises(ValueError):
        group_advantages([1.0], [0, 1])
