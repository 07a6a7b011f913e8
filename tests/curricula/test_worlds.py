"""Simulated worlds: each layout grows the dependency it names, and the knobs spoil the graph
by the share they say."""

from __future__ import annotations

import numpy as np
import pytest

from curricula.worlds import STRUCTURES, Structure, concept_needs, get_structure, grow_world


def grow(structure: Structure, n: int = 800, seed: int = 0):
    return grow_world(structure, n, 200, np.random.default_rng(seed))


def needed_by(world) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for p, c in world.needs.tolist():
        out.setdefault(c, set()).add(p)
    return out


@pytest.mark.parametrize("structure", STRUCTURES, ids=lambda s: s.name)
def test_every_structure_grows_a_bank_its_held_out_set_and_a_graph_within_it(structure):
    world = grow(structure)
    n = 800
    for column in (world.concept, world.difficulty, world.trivial, world.impossible):
        assert column.shape == (n,)
    assert world.vectors.shape[0] == n
    assert world.heldout_concept.shape == world.heldout_difficulty.shape == (200,)
    src, dst = world.prerequisites.T
    assert ((0 <= src) & (src < n) & (0 <= dst) & (dst < n)).all() and (src != dst).all()
    assert len(world.prerequisites) > 0
    assert world.concept.max() < world.n_concepts
    # Trivial and impossible tasks are disjoint and about as common as the structure says.
    assert not (world.trivial & world.impossible).any()
    assert abs(world.trivial.mean() - structure.share_trivial) < 0.06
    assert abs(world.impossible.mean() - structure.share_impossible) < 0.06


def test_layers_list_fan_in_prerequisites_from_the_concepts_they_need():
    s = Structure("t", layout="layers", levels=4, width=5, concept_needs=2, fan_in=7)
    world = grow(s)
    needs = needed_by(world)
    level = world.concept_level
    for c, needed in needs.items():
        assert len(needed) == 2 and all(level[p] == level[c] - 1 for p in needed)
    listed = np.bincount(world.prerequisites[:, 1], minlength=800)
    for t in range(800):
        c = world.concept[t]
        if level[c] == 0:
            assert listed[t] == 0
        else:
            assert listed[t] == 7
    sources = world.concept[world.prerequisites[:, 0]]
    targets = world.concept[world.prerequisites[:, 1]]
    assert all(p in needs[c] for p, c in zip(sources.tolist(), targets.tolist(), strict=True))


def test_chains_need_the_concept_before_them_in_their_chain():
    s = Structure("t", layout="chain", levels=4, width=3, fan_in=1)
    needs, level = concept_needs(s, np.random.default_rng(0))
    assert sorted(map(tuple, needs.tolist())) == [(c - 3, c) for c in range(3, 12)]
    assert level.tolist() == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3


def test_dags_skip_levels_but_always_need_one_concept_just_below():
    s = Structure("t", layout="dag", levels=6, width=6, concept_needs=3)
    needs, level = concept_needs(s, np.random.default_rng(0))
    gaps = level[needs[:, 1]] - level[needs[:, 0]]
    assert (gaps >= 1).all() and (gaps > 1).any()
    for c in range(6, 36):
        assert (level[needs[needs[:, 1] == c, 0]] == level[c] - 1).any()


def test_wrong_edges_rewire_the_asked_share_to_random_tasks():
    clean = Structure("t", layout="layers", fan_in=10)
    spoilt = Structure("t", layout="layers", fan_in=10, wrong=0.4)

    def off_target(world) -> float:
        needs = needed_by(world)
        src, dst = world.prerequisites.T
        pairs = zip(world.concept[src].tolist(), world.concept[dst].tolist(), strict=True)
        return np.mean([p not in needs.get(c, ()) for p, c in pairs])

    assert off_target(grow(clean)) == 0.0
    # A rewired edge lands in a needed concept by chance (2 of 40 concepts) now and then.
    assert 0.4 * 0.9 < off_target(grow(spoilt)) <= 0.4 * 1.05


def test_missing_edges_drop_the_asked_share():
    full = len(grow(Structure("t", fan_in=10)).prerequisites)
    kept = len(grow(Structure("t", fan_in=10, missing=0.7)).prerequisites)
    assert kept / full == pytest.approx(0.3, abs=0.03)


def test_lineage_lists_each_derived_task_parent_of_its_own_skill():
    world = grow(get_structure("lineage"), n=2000)
    parent, child = world.prerequisites.T
    assert len(np.unique(child)) == len(child)  # one parent each
    assert (world.concept[parent] == world.concept[child]).all()
    assert world.needs.shape == (0, 2)  # skills do not depend on each other
    # Derived tasks are harder than their parents on average (drift 0.4), not reliably.
    gap = world.difficulty[child] - world.difficulty[parent]
    assert 0.2 < gap.mean() < 0.6 and (gap < 0).mean() > 0.2


def test_same_seed_same_world():
    s = get_structure("noisy")
    a, b = grow(s, seed=3), grow(s, seed=3)
    assert np.array_equal(a.prerequisites, b.prerequisites)
    assert np.array_equal(a.difficulty, b.difficulty)
    assert not np.array_equal(a.prerequisites, grow(s, seed=4).prerequisites)


def test_bad_structures_are_clear_errors():
    with pytest.raises(ValueError, match="layout"):
        Structure("t", layout="tree")
    with pytest.raises(ValueError, match="wrong"):
        Structure("t", wrong=1.5)
    with pytest.raises(ValueError, match="layers-20"):
        get_structure("no-such-world")
