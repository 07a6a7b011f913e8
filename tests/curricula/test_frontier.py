"""The frontier: readiness is the share of prerequisites mastered, not their number, and the
graph only reorders tasks without a record of their own."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from curricula import estimate, make_scheduler
from curricula.edges import compile_edges
from curricula.frontier import frontier_mask, graph_weight, judged_pass_rate, readiness

MASTERED, FAILING, HALF, UNTRIED = (16, 16), (16, 0), (16, 8), (0, 0)


def bank(records: dict[str, tuple[int, int]], step: int = 5) -> pd.DataFrame:
    return pd.DataFrame(
        [(a, s, step if a else -1) for a, s in records.values()],
        index=pd.Index(list(records), name="task_id"),
        columns=["attempts", "successes", "last_step"],
    )


def credit(successes: int, attempts: int) -> float:
    """The rule's credit for a prerequisite measured well enough not to borrow: its posterior
    mean placed between the prior mean (0) and mastery 0.8 (1)."""
    mean = (1 + successes) / (2 + attempts)
    return min(max((mean - 0.5) / 0.3, 0.0), 1.0)


def prerequisites_of(task: str, records: dict[str, tuple[int, int]]) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_edges_from((p, task) for p in records if p != task)
    return graph


def ready(stats: pd.DataFrame, graph: nx.DiGraph, **options) -> pd.Series:
    edges = compile_edges(graph, stats.index)
    return pd.Series(readiness(estimate(stats, edges), edges, **options), index=stats.index)


def test_readiness_is_the_share_of_prerequisites_mastered_not_their_number():
    # Twenty prerequisites: twelve mastered and eight impossible is enough (a strict "all
    # mastered" rule would wait forever); four mastered of twenty is not.
    many = {f"p{i}": MASTERED if i < 12 else FAILING for i in range(20)} | {"x": UNTRIED}
    assert ready(bank(many), prerequisites_of("x", many))["x"] == 1.0
    few = {f"p{i}": MASTERED if i < 4 else FAILING for i in range(20)} | {"x": UNTRIED}
    assert ready(bank(few), prerequisites_of("x", few))["x"] == pytest.approx(
        (4 / 20) * credit(16, 16) / 0.5
    )


def test_readiness_does_not_depend_on_fan_in():
    for fan_in in (1, 2, 10, 30):
        records = {f"p{i}": MASTERED if i % 2 == 0 else HALF for i in range(fan_in)}
        records["x"] = UNTRIED
        got = ready(bank(records), prerequisites_of("x", records))["x"]
        share = np.mean([credit(s, a) for p, (a, s) in records.items() if p != "x"])
        assert got == pytest.approx(min(share / 0.5, 1.0))
    assert got == pytest.approx(1.0)  # half mastered, half at a coin flip: enough


def test_enough_sets_the_share_of_prerequisites_that_makes_a_task_ready():
    records = {"p0": MASTERED, "p1": FAILING, "p2": FAILING, "p3": FAILING, "x": UNTRIED}
    graph = prerequisites_of("x", records)
    assert ready(bank(records), graph, enough=0.25)["x"] == 1.0
    assert ready(bank(records), graph, enough=0.5)["x"] == pytest.approx(0.5)
    assert ready(bank(records), graph, enough=1.0)["x"] == pytest.approx(0.25)


def test_edge_weights_weigh_prerequisites_and_similarity_edges_are_none():
    records = {"easy": MASTERED, "hard": FAILING, "alike": FAILING, "x": UNTRIED}
    graph = nx.DiGraph()
    graph.add_edge("easy", "x", weight=3.0)
    graph.add_edge("hard", "x", weight=1.0)
    graph.add_edge("alike", "x", relation="similar", prerequisite=False)
    got = ready(bank(records), graph, enough=1.0)
    assert got["x"] == pytest.approx(0.75)
    assert got["easy"] == got["hard"] == got["alike"] == 1.0  # no prerequisites: ready


def test_an_untried_prerequisite_counts_by_what_its_neighbours_show():
    # u was never tried; its similar neighbours are all solved, so its posterior (and its
    # credit as x's prerequisite) is high: mastery is read from the graph's evidence too.
    records = {"n1": MASTERED, "n2": MASTERED, "u": UNTRIED, "x": UNTRIED}
    graph = nx.DiGraph()
    graph.add_edge("u", "x")
    for n in ("n1", "n2"):
        graph.add_edge(n, "u", relation="similar", prerequisite=False)
        graph.add_edge("u", n, relation="similar", prerequisite=False)
    assert ready(bank(records), graph)["x"] > 0.9
    alone = nx.DiGraph([("u", "x")])
    assert ready(bank(records), alone)["x"] == 0.0  # no evidence: a coin flip earns nothing


def ready_and_blocked(n: int = 20) -> tuple[pd.DataFrame, nx.DiGraph, list, list]:
    """n untried tasks that list ten prerequisites, seven mastered and three impossible, and
    n that list ten prerequisites solved half the time. Both kinds borrow about the same
    solve rate from their prerequisites, so learnability alone cannot tell them apart."""
    records = {f"m{j}": MASTERED for j in range(7)} | {f"f{j}": FAILING for j in range(3)}
    records |= {f"h{j}": HALF for j in range(10)}
    graph = nx.DiGraph()
    for i in range(n):
        graph.add_edges_from((p, f"ready{i}") for p in [*records][:10])
        graph.add_edges_from((f"h{j}", f"blocked{i}") for j in range(10))
        records[f"ready{i}"] = records[f"blocked{i}"] = UNTRIED
    return bank(records), graph, [f"ready{i}" for i in range(n)], [f"blocked{i}" for i in range(n)]


def test_frontier_tries_tasks_whose_prerequisites_are_mastered_before_blocked_ones():
    stats, graph, ready_ids, blocked = ready_and_blocked()
    for seed in range(5):
        ids = make_scheduler("frontier", seed=seed, explore=0.0).select(stats, 20, graph=graph)
        assert not set(ids) & set(blocked)
        assert set(ids) & set(ready_ids)


def test_learnability_cannot_tell_them_apart():
    """The graph's prerequisites make the difference above, not the borrowed solve rates."""
    stats, graph, _, blocked = ready_and_blocked()
    for seed in range(5):
        ids = make_scheduler("learnability", seed=seed).select(stats, 20, graph=graph)
        assert set(ids) & set(blocked)


def test_explore_share_still_tries_tasks_the_graph_holds_back():
    stats, graph, _, blocked = ready_and_blocked()
    ids = make_scheduler("frontier", seed=0, explore=0.5).select(stats, 40, graph=graph)
    assert set(ids) & set(blocked)
    assert len(set(ids)) == 40


def test_the_graph_weighs_only_what_a_task_own_record_does_not_say():
    stats = bank({"untried": UNTRIED, "once": (2, 1), "measured": HALF})
    ready = np.zeros(3, dtype=np.float32)  # as if no prerequisite of any were mastered
    weight = graph_weight(estimate(stats), ready, borrow_cap=4.0)
    # own attempts / borrow_cap of the say is the task's own: 0, a half, all of it
    assert weight.tolist() == pytest.approx([0.0, 0.5, 1.0])
    assert graph_weight(estimate(stats), np.ones(3, dtype=np.float32)).tolist() == [1.0, 1.0, 1.0]


def test_a_task_own_record_outranks_the_graph():
    # `mixed` has a half-solved record of its own although its prerequisites all fail: it is
    # learnable whatever the graph says, and the frontier takes it (a strict frontier would
    # not); the untried tasks behind the same prerequisites wait.
    records = {f"p{i}": FAILING for i in range(5)} | {"mixed": HALF}
    records |= {f"u{i}": UNTRIED for i in range(5)}
    graph = nx.DiGraph([(f"p{i}", "mixed") for i in range(5)])
    graph.add_edges_from((f"p{i}", f"u{i}") for i in range(5))
    stats = bank(records)
    for seed in range(5):
        ids = make_scheduler("frontier", seed=seed, explore=0.0).select(stats, 6, graph=graph)
        assert "mixed" in ids and not {f"u{i}" for i in range(5)} & set(ids)


def test_half_life_hands_an_old_record_back_to_the_graph():
    # Two tasks failed long ago; since then one's prerequisite was mastered and the other's
    # failed. With a half-life the old failures fade and readiness decides between them.
    stats = bank({"pa": MASTERED, "pb": FAILING, "a": (8, 0), "b": (8, 0)})
    stats.loc[["a", "b"], "last_step"] = 0
    stats.loc[["pa", "pb"], "last_step"] = 99
    stats.attrs["step"] = 100
    graph = nx.DiGraph([("pa", "a"), ("pb", "b")])
    edges = compile_edges(graph, stats.index)
    faded_est = estimate(stats, edges, half_life=5.0)
    ready = readiness(faded_est, edges)
    faded = pd.Series(graph_weight(faded_est, ready), index=stats.index)
    assert faded["a"] == pytest.approx(1.0, abs=1e-3) and faded["b"] == pytest.approx(0, abs=1e-3)
    fresh = pd.Series(graph_weight(estimate(stats, edges), ready), index=stats.index)
    assert fresh["a"] == fresh["b"] == 1.0  # without it, 8 failures are 8 failures


def test_a_prerequisite_mastered_long_ago_keeps_its_credit_under_a_half_life():
    # The discount pulls p's old record of 16 successes back to the prior, but the solver has
    # not unlearned it: mastery is judged on the whole record, and x stays ready.
    stats = bank({"p": MASTERED, "x": UNTRIED})
    stats.loc["p", "last_step"] = 0
    stats.attrs["step"] = 100
    edges = compile_edges(nx.DiGraph([("p", "x")]), stats.index)
    est = estimate(stats, edges, half_life=5.0)
    assert est.mean[0] == pytest.approx(0.5, abs=1e-3)  # faded
    assert readiness(est, edges)[1] == 0.0
    judged = judged_pass_rate(stats, est)
    assert judged[0] == pytest.approx(17 / 18)
    assert readiness(est, edges, judged=judged)[1] == 1.0
    assert frontier_mask(stats, edges, half_life=5.0).tolist() == [False, True]


@pytest.mark.parametrize("graph", [None, nx.DiGraph()])
def test_without_prerequisites_the_frontier_is_learnability(graph):
    rng = np.random.default_rng(0)
    attempts = rng.integers(0, 17, 300)
    stats = pd.DataFrame(
        {
            "attempts": attempts,
            "successes": rng.binomial(attempts, 0.5),
            "last_step": np.where(attempts > 0, 3, -1),
        },
        index=[f"t{i}" for i in range(300)],
    )
    for seed in range(3):
        assert make_scheduler("frontier", seed=seed).select(stats, 40, graph=graph) == (
            make_scheduler("learnability", seed=seed).select(stats, 40, graph=graph)
        )


def test_frontier_mask_is_unmastered_tasks_that_are_ready():
    records = {"root": MASTERED, "child": (16, 5), "grandchild": UNTRIED, "loner": UNTRIED}
    records |= {f"q{i}": MASTERED if i < 3 else FAILING for i in range(5)} | {"wide": UNTRIED}
    graph = nx.DiGraph([("root", "child"), ("child", "grandchild")])
    graph.add_edges_from((f"q{i}", "wide") for i in range(5))
    stats = bank(records)
    mask = frontier_mask(stats, compile_edges(graph, stats.index))
    # wide: three of its five prerequisites suffice; q3 and q4: not mastered, waiting for none
    assert set(stats.index[mask]) == {"child", "loner", "wide", "q3", "q4"}
