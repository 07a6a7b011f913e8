"""Reading a real bank into the curriculum's plain inputs, and summarising it."""

from __future__ import annotations

import numpy as np

from curricula import estimate
from curricula.edges import compile_edges
from curricula.graph_store import load_graph, save_graph
from curricula.inspect import build_graph, read_bank, summarize
from task_bank.store import Bank


def test_read_bank_gives_stats_tasks_neighbours_and_rounds(bank_path):
    with Bank(bank_path, create=False) as bank:
        view = read_bank(bank, knn=3)
        assert list(view.stats.columns[:3]) == ["attempts", "successes", "last_step"]
        assert len(view.stats) == len(view.tasks) == bank.count()
    attempted = view.stats[view.stats["attempts"] > 0]
    assert len(attempted) == 70 and (attempted["attempts"] == 16).all()
    children = {t["id"]: t["parents"] for t in view.tasks if t["parents"]}
    assert children and all(p == [c.removesuffix("-v2")] for c, p in children.items())
    # A derived task's nearest neighbour is its parent (same program plus a helper).
    for child, (parent,) in children.items():
        assert view.neighbours[child][0][0] == parent
        assert all(len(near) <= 3 for near in view.neighbours.values())
    assert view.rounds["attempts"].tolist() == [70 * 8, 70 * 8]


def test_summary_agrees_with_the_bank(bank_path):
    with Bank(bank_path, create=False) as bank:
        view = read_bank(bank)
    graph = build_graph(view)
    data = summarize(view, graph)
    stats = view.stats
    assert data["tasks"] == len(stats)
    assert data["attempted"] == int((stats["attempts"] > 0).sum())
    assert sum(data["expected_variance_histogram"].values()) == len(stats)
    assert sum(s["tasks"] for s in data["skills"].values()) == len(stats)
    assert data["edges"]["lineage"] == sum(1 for t in view.tasks if t["parents"])
    # The frontier is every task not mastered on its own record whose prerequisites carry
    # enough credit: posterior pass rates (with the graph's evidence) placed between 0.5 and
    # 0.8, weighted by edge weight, averaging at least a half.
    ids = {row["id"] for row in data["frontier"]}
    assert len(ids) == data["frontier_size"] > 0
    own = (stats["successes"] + 1) / (stats["attempts"] + 2)
    rate = estimate(stats, compile_edges(graph.graph, stats.index)).frame(stats.index)["pass_rate"]
    credit = (((rate - 0.5) / 0.3).clip(0.0, 1.0) * 32).round() / 32  # in steps of 1/32
    g = graph.graph
    waited = 0
    for tid in stats.index:
        prereqs = [p for p in g.predecessors(tid) if g.edges[p, tid]["prerequisite"]]
        weights = np.array([g.edges[p, tid]["weight"] for p in prereqs])
        ready = not prereqs or np.dot(weights, credit[prereqs]) / weights.sum() >= 0.5 - 1e-6
        assert (tid in ids) == bool(own[tid] < 0.8 and ready), tid
        waited += bool(prereqs) and tid in ids
    assert waited > 0  # some frontier tasks do have prerequisites (and enough of them mastered)


def test_graph_saved_in_the_bank_grows_on_the_next_read(bank_path, tmp_path):
    copy = tmp_path / "bank.db"
    copy.write_bytes(bank_path.read_bytes())
    with Bank(copy, create=False) as bank:
        graph = build_graph(read_bank(bank))
        save_graph(graph, bank)
        before = graph.graph.number_of_edges()
        again = build_graph(read_bank(bank), load_graph(bank))
    assert again.graph.number_of_edges() == before
    assert set(again.graph.nodes) == set(graph.graph.nodes)
