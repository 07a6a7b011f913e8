"""The simulated solver: prerequisites gate learning, and only mixed groups teach."""

from __future__ import annotations

import numpy as np
import pytest

from curricula.learner import Learner, sigmoid
from curricula.worlds import World


def tiny_world(needs: list[tuple[int, int]], levels: list[int]) -> World:
    """One task per concept, difficulty 0, nothing trivial or impossible; held out: the same."""
    n = len(levels)
    tasks = np.arange(n)
    return World(
        concept=tasks,
        difficulty=np.zeros(n),
        trivial=np.zeros(n, dtype=bool),
        impossible=np.zeros(n, dtype=bool),
        prerequisites=np.asarray(needs, dtype=np.int64).reshape(-1, 2),
        vectors=np.zeros((n, 2)),
        needs=np.asarray(needs, dtype=np.int64).reshape(-1, 2),
        concept_level=np.asarray(levels),
        heldout_concept=tasks,
        heldout_difficulty=np.zeros(n),
    )


def learner(world: World, **options) -> Learner:
    return Learner(world, **({"lr": 0.1, "transfer": 0.0} | options))


def test_a_concept_is_locked_until_what_it_needs_is_mastered():
    world = tiny_world([(0, 1)], [0, 1])
    solver = learner(world, ready_at=0.7, unready_penalty=5.0)
    # Concept 0 at ability 0 solves half its tasks: short of 0.7, so 1 pays part of 5.
    assert solver.penalty[1] == pytest.approx(5.0 * (1 - 0.5 / 0.7))
    assert solver.solve_prob(np.array([1]))[0] == pytest.approx(sigmoid(-solver.penalty[1]))
    for ability, at_most, at_least in ((-3.0, 0.01, 0.0), (3.0, 0.5, 0.5)):
        solver.ability[0] = ability
        solver.learn(np.array([0]), np.array([0]), 8)  # refreshes the penalties, teaches nothing
        p = solver.solve_prob(np.array([1]))[0]
        assert at_least - 1e-9 <= p <= at_most + 1e-9
    assert solver.penalty[1] == 0.0  # mastery sigmoid(3) = 0.95 >= 0.7: ready


def test_one_weak_need_of_several_slows_a_concept_without_locking_it():
    world = tiny_world([(0, 2), (1, 2)], [0, 0, 1])
    solver = learner(world, ready_at=0.7, unready_penalty=5.0)
    solver.ability[:] = [4.0, -4.0, 0.0]
    solver.learn(np.array([2]), np.array([0]), 8)
    mean_mastery = (sigmoid(4.0) + sigmoid(-4.0)) / 2
    assert solver.penalty[2] == pytest.approx(5.0 * (1 - mean_mastery / 0.7))
    assert 0.0 < solver.penalty[2] < 5.0 * (1 - sigmoid(-4.0) / 0.7)


def test_penalties_compound_down_a_chain():
    world = tiny_world([(0, 1), (1, 2)], [0, 1, 2])
    solver = learner(world)
    assert 0.0 < solver.penalty[1] < solver.penalty[2]


def test_only_mixed_groups_teach():
    world = tiny_world([], [0, 0, 0])
    solver = learner(world, lr=0.1, transfer=0.2)
    signal = solver.learn(np.array([0, 1]), np.array([0, 8]), 8)
    assert signal.tolist() == [0.0, 0.0] and solver.ability.tolist() == [0.0, 0.0, 0.0]
    signal = solver.learn(np.array([0]), np.array([4]), 8)
    assert signal.tolist() == [1.0]  # 2 sqrt(q (1 - q)) at q = 1/2
    # own concept: (1 - transfer) + transfer of the step's signal; the others: transfer of it
    assert solver.ability.tolist() == pytest.approx([0.1, 0.02, 0.02])


def test_trivial_tasks_are_always_solved_and_impossible_ones_never():
    world = tiny_world([], [0, 0, 0])
    world.trivial[0] = True
    world.impossible[1] = True
    solver = learner(world)
    solver.ability[:] = [-9.0, 9.0, 0.0]
    assert solver.solve_prob(np.arange(3)).tolist() == pytest.approx([1.0, 0.0, 0.5])


def test_held_out_success_counts_the_penalties():
    world = tiny_world([(0, 1)], [0, 1])
    solver = learner(world)
    expected = np.mean(sigmoid(-solver.penalty))
    assert solver.heldout_success() == pytest.approx(expected)
    assert solver.heldout_success() < 0.5
