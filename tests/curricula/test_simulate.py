"""The simulation: runs reach the target, schedulers see only what a real run gives them, and
the suite checks the targets on every structure."""

from __future__ import annotations

import numpy as np
import pytest

from curricula import Scheduler, register_scheduler
from curricula.simulate import SimConfig, make_world, run_seed, summarize, train
from curricula.suite import check_targets, run_suite, summarize_suite
from curricula.worlds import get_structure

SMALL = {"n_tasks": 300, "n_heldout": 100, "max_rollouts": 80_000, "lr": 0.03}
SEEN: list[tuple[list, dict, set]] = []


@register_scheduler("spy_test")
class Spy(Scheduler):
    """Uniform, recording what it is shown."""

    def select(self, stats, k, graph=None):
        node_keys = {key for _, data in graph.nodes(data=True) for key in data}
        edge_keys = {key for *_, data in graph.edges(data=True) for key in data}
        SEEN.append((list(stats.columns), dict(stats.attrs), node_keys | edge_keys))
        return list(self.rng.choice(stats.index.to_numpy(), k, replace=False))


def test_schedulers_see_attempt_statistics_and_the_graph_only():
    cfg = SimConfig(**(SMALL | {"max_rollouts": 5_000}), schedulers=("spy_test",))
    structure = get_structure("layers-20")
    SEEN.clear()
    train(make_world(cfg, structure, 0), structure, cfg, "spy_test", 0)
    assert SEEN
    for columns, attrs, keys in SEEN:
        assert columns == ["attempts", "successes", "last_step"] and attrs == {}
        # what a bank's graph holds: kinds, relations, weights; nothing latent
        assert keys <= {"kind", "relation", "prerequisite", "weight", "similarity"}


def test_a_run_counts_rollouts_until_held_out_success_reaches_the_target():
    cfg = SimConfig(**SMALL)
    structure = get_structure("chains")
    run = train(make_world(cfg, structure, 0), structure, cfg, "learnability", 0)
    assert run.rollouts_to_target is not None
    assert run.rollouts_to_target == run.curve_rollouts[-1]
    assert run.curve_success[-1] >= cfg.target > run.curve_success[-2]
    assert np.all(np.diff(run.curve_rollouts) == cfg.batch_tasks * cfg.group_size)
    assert 0.0 < run.useful_share <= 1.0


def test_a_run_that_spends_its_budget_did_not_reach_the_target():
    cfg = SimConfig(**(SMALL | {"max_rollouts": 2_000}))
    structure = get_structure("layers-5")
    run = train(make_world(cfg, structure, 0), structure, cfg, "uniform", 0)
    assert run.rollouts_to_target is None and run.curve_rollouts[-1] >= 2_000


def test_on_a_layered_world_the_informed_schedulers_beat_uniform():
    cfg = SimConfig(**SMALL, schedulers=("uniform", "learnability", "frontier"))
    runs = [r for seed in range(2) for r in run_seed(cfg, get_structure("layers-20"), seed)]
    ratios = {n: s["ratio_to_uniform"] for n, s in summarize(runs, cfg)["schedulers"].items()}
    assert ratios["uniform"] == 1.0
    assert ratios["learnability"] < 0.9 and ratios["frontier"] < 0.9


def test_the_suite_gives_the_same_results_with_one_worker_or_two():
    cfg = SimConfig(**SMALL, schedulers=("uniform", "frontier"))
    worlds = [get_structure("lineage"), get_structure("noisy")]
    one = run_suite(cfg, worlds, seeds=2, workers=1)
    two = run_suite(cfg, worlds, seeds=2, workers=2)
    assert list(one) == ["lineage", "noisy"]
    for name in one:
        assert [(r.scheduler, r.seed, r.rollouts_to_target) for r in one[name]] == [
            (r.scheduler, r.seed, r.rollouts_to_target) for r in two[name]
        ]
    summary = summarize_suite(one, cfg, worlds)
    assert summary["seeds"] == 2 and set(summary["structures"]) == {"lineage", "noisy"}
    assert summary["structures"]["noisy"]["structure"]["wrong"] == 0.3
    assert [t["baseline"] for t in summary["structures"]["noisy"]["targets"]] == ["uniform"]


def medians(**values: float | None) -> dict:
    return {name: {"median": v} for name, v in values.items()}


def test_targets_compare_medians_with_uniform_and_frontier_with_learnability():
    got = check_targets(medians(uniform=100.0, learnability=70.0, frontier=55.0))
    assert [(t["scheduler"], t["baseline"], t["met"]) for t in got] == [
        ("learnability", "uniform", True),
        ("frontier", "uniform", True),
        ("frontier", "learnability", True),
    ]
    assert got[2]["ratio"] == pytest.approx(55 / 70)
    # frontier under 0.6x uniform, but more than 5% behind learnability: missed
    worse = check_targets(medians(uniform=100.0, learnability=50.0, frontier=55.0))
    assert [t["met"] for t in worse] == [True, True, False]
    # a scheduler that did not reach the target in half its runs misses
    unreached = check_targets(medians(uniform=100.0, learnability=None, frontier=50.0))
    assert [t["met"] for t in unreached] == [False, True, False]
