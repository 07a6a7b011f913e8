"""Every step of every round gets its own seed, the same one each time it runs."""

from __future__ import annotations

from itertools import product

from selfplay.seeds import step_seed


def test_the_old_collisions_are_gone():
    # The sums gave the sixth try of round 1's first wave the solver's seed (0 + 1000 + 500),
    # and round 1's eleventh try round 2's first.
    assert step_seed(0, "round", 1, "propose", 5, 0) != step_seed(0, "round", 1, "solve")
    assert step_seed(0, "round", 1, "propose", 10, 0) != step_seed(0, "round", 2, "propose", 0, 0)


def test_seeds_are_distinct_over_a_long_run_and_repeat_exactly():
    steps = ["probe", "probe.pick", "solve", "solve.pick", "propose.codegen.pick"]
    seeds = [step_seed(s, "round", r, step) for s, r, step in product(range(3), range(200), steps)]
    seeds += [step_seed(0, "round", r, "propose", t, w)
              for r, t, w in product(range(200), range(12), range(25))]  # fmt: skip
    seeds += [step_seed(0, "loop", i, "train") for i in range(200)]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= x < 2**63 for x in seeds)
    assert step_seed(7, "round", 3, "solve") == step_seed(7, "round", 3, "solve")
