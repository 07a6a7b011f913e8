"""Beta posteriors: expected reward variance, uncertainty, staleness, and borrowing from graph neighbours."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from curricula import estimate
from curricula.edges import compile_edges
from curricula.posterior import discount, staleness


def frame(rows: dict[str, tuple[int, int, int]], **attrs) -> pd.DataFrame:
    stats = pd.DataFrame.from_dict(
        rows, orient="index", columns=["attempts", "successes", "last_step"]
    )
    stats.attrs.update(attrs)
    return stats


def star(center: str, leaves: list[str], **edge_attrs) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_edges_from(((leaf, center) for leaf in leaves), **edge_attrs)
    return graph


def test_expected_variance_and_uncertainty_match_the_beta_moments():
    stats = frame({"a": (10, 3, 0), "b": (0, 0, -1), "c": (40, 40, 0)})
    est = estimate(stats)
    rng = np.random.default_rng(0)
    for i, (alpha, beta) in enumerate([(4, 8), (1, 1), (41, 1)]):
        p = rng.beta(alpha, beta, 400_000)
        assert est.expected_variance[i] == pytest.approx(np.mean(p * (1 - p)), rel=0.02)
        assert est.uncertainty[i] == pytest.approx(np.std(p), rel=0.02)
        assert est.mean[i] == pytest.approx(alpha / (alpha + beta), rel=1e-5)


def test_expected_variance_is_highest_for_well_measured_half_solved_tasks():
    stats = frame({"half": (40, 20, 0), "unknown": (0, 0, -1), "solved": (40, 40, 0)})
    lb = estimate(stats).frame(stats.index)["expected_variance"]
    assert lb["half"] > lb["unknown"] > lb["solved"]


def test_staleness_counts_steps_since_the_last_attempt():
    stats = frame({"a": (1, 0, 7), "b": (1, 1, 9), "never": (0, 0, -1)})
    assert estimate(stats).staleness.tolist() == [3, 1, 11]  # now = 10
    stats.attrs["step"] = 20
    assert estimate(stats).staleness.tolist() == [13, 11, 21]


def test_half_life_makes_old_records_count_less():
    stats = frame({"old": (32, 0, 0), "new": (32, 0, 40)})
    fresh = estimate(stats)
    decayed = estimate(stats, half_life=10.0)
    assert fresh.uncertainty[0] == pytest.approx(fresh.uncertainty[1])
    assert decayed.uncertainty[0] > 3 * decayed.uncertainty[1]
    assert decayed.mean[0] > decayed.mean[1]  # pulled back toward the prior


def test_an_unattempted_task_borrows_its_neighbours_solve_rate():
    leaves = ["n1", "n2", "n3"]
    for rate, direction in ((16, 1), (0, -1)):
        stats = frame({"x": (0, 0, -1), **{n: (16, rate, 3) for n in leaves}})
        edges = compile_edges(star("x", leaves), stats.index)
        with_graph = estimate(stats, edges).mean[0]
        alone = estimate(stats).mean[0]
        assert alone == pytest.approx(0.5)
        assert (with_graph - 0.5) * direction > 0.2


def test_borrowing_is_capped_and_uses_edge_weights():
    leaves = ["n1", "n2"]
    stats = frame({"x": (0, 0, -1), "n1": (100, 100, 3), "n2": (100, 0, 3)})
    graph = star("x", leaves)
    graph.edges["n1", "x"]["weight"] = 3.0
    est = estimate(stats, compile_edges(graph, stats.index), borrow_cap=4.0)
    assert est.alpha[0] + est.beta[0] == pytest.approx(2.0 + 4.0)  # prior + cap
    assert est.mean[0] == pytest.approx((1 + 3) / 6)  # 3:1 for the heavier neighbour


def test_a_well_measured_task_stands_on_its_own_record():
    stats = frame({"x": (16, 16, 3), "n1": (16, 0, 3)})
    edges = compile_edges(star("x", ["n1"]), stats.index)
    assert estimate(stats, edges).mean[0] == pytest.approx(estimate(stats).mean[0])


def test_a_task_with_few_attempts_borrows_only_the_remaining_room():
    stats = frame({"x": (2, 2, 3), "n1": (50, 0, 3)})
    est = estimate(stats, compile_edges(star("x", ["n1"]), stats.index), borrow_cap=4.0)
    assert est.alpha[0] == pytest.approx(3.0)
    assert est.beta[0] == pytest.approx(1.0 + 2.0)


def test_edges_to_tasks_outside_stats_are_ignored():
    stats = frame({"x": (0, 0, -1)})
    graph = star("x", ["elsewhere"])
    edges = compile_edges(graph, stats.index)
    assert edges.src.size == 0
    assert estimate(stats, edges).mean[0] == pytest.approx(0.5)


def test_bad_counts_are_rejected():
    with pytest.raises(ValueError, match="successes <= attempts"):
        estimate(frame({"x": (1, 2, 0)}))


def test_discounted_borrowing_matches_discounting_each_neighbour_step_after_step():
    # With a half-life the neighbour sums are kept on a rescaled record (so that only the
    # tasks just attempted change between calls); they must equal discounting each
    # neighbour's counts directly, also across the points where the scale is rebased.
    rng = np.random.default_rng(0)
    n = 400  # 8 tasks a step change: few enough for the incremental path of the sums
    graph = nx.gnm_random_graph(n, 1500, seed=0, directed=True)
    attempts = np.zeros(n, dtype=int)
    successes = np.zeros(n, dtype=int)
    last = np.full(n, -1)
    edges, pushed = None, 0
    for step in range(0, 140, 3):  # rebases every 32 half-lives of 2 steps: twice here
        chosen = rng.choice(n, 8, replace=False)
        attempts[chosen] += 4
        successes[chosen] += rng.binomial(4, 0.5, 8)
        last[chosen] = step
        stats = pd.DataFrame({"attempts": attempts, "successes": successes, "last_step": last})
        edges = edges or compile_edges(graph, stats.index)  # one compiled graph, as a scheduler
        got = estimate(stats, edges, half_life=2.0, borrow_cap=1e9)
        weight = 2.0 ** (-np.maximum(step + 1 - last - 1, 0) / 2.0)
        s, f = successes * weight, (attempts - successes) * weight
        u, v = np.array(list(graph.edges)).T
        both = np.concatenate([u, v]), np.concatenate([v, u])  # evidence flows both ways
        bs = np.bincount(both[1], weights=s[both[0]], minlength=n)
        bf = np.bincount(both[1], weights=f[both[0]], minlength=n)
        np.testing.assert_allclose(got.alpha, 1 + s + bs, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(got.beta, 1 + f + bf, rtol=1e-4, atol=1e-6)
        pushed += edges._neighbours._updates > 0
    assert pushed > 10


def test_a_record_counts_half_for_every_half_life_since_the_step_before_now():
    stats = frame({"last": (8, 4, 9), "older": (8, 4, 7), "oldest": (8, 4, 3)})  # now = 10
    stale = staleness(stats)
    assert discount(stale, 2.0).tolist() == pytest.approx([1.0, 0.5, 0.125])
    est = estimate(stats, half_life=2.0)
    assert est.attempts.tolist() == pytest.approx([8.0, 4.0, 1.0])
    assert est.alpha.tolist() == pytest.approx([1 + 4.0, 1 + 2.0, 1 + 0.5])
