"""The difficulty graph: built from plain inputs, ordered by observation, persisted and exported."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest

from curricula import make_scheduler
from curricula.graph import DifficultyGraph
from curricula.graph_store import load_graph, save_graph

TASKS = [
    {"id": "root", "kind": "codegen", "tags": ["strings", "easy"]},
    {"id": "child", "kind": "deduction", "tags": ["strings"], "parents": ["root"]},
    {"id": "grandchild", "kind": "codegen", "skill": "strings", "parents": ["child"]},
    {"id": "loner", "kind": "induction"},
    {"id": "loner2", "kind": "abduction"},
]
NEIGHBOURS = {"child": [("loner", 0.91), ("root", 0.8)], "loner": [("loner2", 0.7)]}


def stats_for(rows: dict[str, tuple[int, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(a, s, 5 if a else -1) for a, s in rows.values()],
        index=list(rows),
        columns=["attempts", "successes", "last_step"],
    )


@pytest.fixture
def graph() -> DifficultyGraph:
    g = DifficultyGraph()
    g.add_tasks(TASKS)
    g.add_neighbours(NEIGHBOURS)
    return g


def test_nodes_carry_kind_and_skill_and_lineage_edges_are_prerequisites(graph):
    g = graph.graph
    assert g.nodes["root"] == {"kind": "codegen", "skill": "strings"}
    assert g.nodes["loner"] == {"kind": "induction"}
    assert g.edges["root", "child"]["relation"] == "lineage"
    assert g.edges["root", "child"]["prerequisite"] is True
    assert g.edges["root", "child"]["similarity"] == pytest.approx(0.8)


def test_similarity_edges_go_both_ways_and_order_nothing(graph):
    g = graph.graph
    for u, v in (("child", "loner"), ("loner", "child")):
        assert g.edges[u, v] == {
            "relation": "similar",
            "prerequisite": False,
            "weight": pytest.approx(0.91),
            "similarity": pytest.approx(0.91),
        }


def test_building_is_incremental(graph):
    before = graph.graph.graph["version"]
    assert graph.add_tasks([{"id": "root"}, {"id": "new", "parents": ["grandchild"]}]) == 1
    assert graph.add_lineage([("root", "child"), ("loner", "new")]) == 1
    assert graph.add_neighbours({"new": [("loner2", 0.5)]}) == 1
    assert graph.graph.graph["version"] > before
    assert len(graph) == 6


def test_observed_order_adds_edges_and_overrules_lineage(graph):
    # The child turned out easier than its parent; loner clearly easier than loner2.
    stats = stats_for(
        {
            "root": (16, 2),
            "child": (16, 15),
            "grandchild": (0, 0),
            "loner": (16, 14),
            "loner2": (16, 1),
        }
    )
    changed = graph.update_stats(stats)
    g = graph.graph
    assert changed >= 3
    assert g.edges["child", "root"]["prerequisite"] is True
    assert g.edges["child", "root"]["relation"] == "order"
    assert g.edges["root", "child"]["prerequisite"] is False  # contradicted
    assert g.edges["root", "child"]["relation"] == "lineage"  # provenance kept
    assert g.edges["loner", "loner2"]["relation"] == "order"
    assert g.nodes["child"]["attempts"] == 16 and g.nodes["child"]["successes"] == 15
    assert g.nodes["child"]["pass_rate"] == pytest.approx(16 / 18)
    assert graph.update_stats(stats) == 0  # nothing new to learn from the same numbers


def test_close_or_thin_evidence_adds_no_order(graph):
    stats = stats_for({"root": (16, 9), "child": (16, 7), "loner": (2, 2), "loner2": (2, 0)})
    assert graph.update_stats(stats) == 0


def test_frontier_is_unmastered_tasks_with_mastered_prerequisites(graph):
    stats = stats_for(
        {
            "root": (16, 16),
            "child": (16, 5),
            "grandchild": (0, 0),
            "loner": (16, 16),
            "loner2": (0, 0),
        }
    )
    assert sorted(graph.frontier(stats)) == ["child", "loner2"]


def test_schedulers_take_the_graph_as_is(graph):
    # The root fails, so its untried descendants wait on the frontier; loner2, linked by
    # similarity only, waits for nothing. Without the graph the untried tasks compete.
    stats = stats_for(
        {
            "root": (16, 0),
            "child": (0, 0),
            "grandchild": (0, 0),
            "loner": (16, 16),
            "loner2": (0, 0),
        }
    )
    waiting = {"child", "grandchild"}
    for seed in range(5):
        ids = make_scheduler("frontier", seed=seed, explore=0.0).select(stats, 1, graph=graph.graph)
        assert not set(ids) & waiting
    blind = {i for s in range(5) for i in make_scheduler("frontier", seed=s).select(stats, 2)}
    assert blind & waiting


def test_skill_clusters_use_skills_then_similarity_communities(graph):
    clusters = graph.skill_clusters()
    assert sorted(clusters["strings"]) == ["child", "grandchild", "root"]
    rest = [sorted(v) for k, v in clusters.items() if k != "strings"]
    assert rest == [["loner", "loner2"]]


def annotated(graph: DifficultyGraph) -> DifficultyGraph:
    graph.update_stats(
        stats_for({"root": (16, 2), "child": (16, 15), "loner": (16, 14), "loner2": (16, 1)})
    )
    return graph


def same_attrs(got: dict, want: dict) -> bool:
    """Same keys and values, floats to float32 precision (approx only where it applies:
    recent pytest refuses a relative tolerance on text values)."""
    if set(got) != set(want):
        return False
    return all(
        got[k] == pytest.approx(want[k], rel=1e-6)
        if isinstance(want[k], float)
        else got[k] == want[k]
        for k in want
    )


def same_graph(a: nx.DiGraph, b: nx.DiGraph) -> None:
    """Same nodes, edges and attributes (floats to float32 precision)."""
    assert set(a.nodes) == set(b.nodes)
    for n, data in a.nodes(data=True):
        assert same_attrs(data, b.nodes[n]), (n, data, b.nodes[n])
    assert set(a.edges) == set(b.edges)
    for u, v, data in a.edges(data=True):
        assert same_attrs(data, b.edges[u, v]), (u, v, data, b.edges[u, v])


def test_sqlite_round_trip_keeps_every_node_and_edge(graph, tmp_path):
    graph = annotated(graph)
    save_graph(graph, tmp_path / "bank.db")
    same_graph(load_graph(tmp_path / "bank.db").graph, graph.graph)


def test_saving_again_replaces_the_previous_graph(graph, tmp_path):
    save_graph(graph, tmp_path / "bank.db")
    graph.graph.remove_node("loner2")
    save_graph(graph, tmp_path / "bank.db")
    assert "loner2" not in load_graph(tmp_path / "bank.db").graph


def test_loading_from_a_bank_without_a_graph_gives_an_empty_one(tmp_path):
    from task_bank.store import Bank

    Bank(tmp_path / "other.db").close()
    assert len(load_graph(tmp_path / "other.db")) == 0


def test_the_graph_lives_beside_the_bank_tables_without_touching_them(graph, tmp_path):
    from task_bank.store import Bank

    path = tmp_path / "bank.db"
    with Bank(path) as bank:
        version = bank.schema_version
        save_graph(graph, bank)
    with Bank(path, create=False) as bank:
        assert bank.schema_version == version and bank.count() == 0
        same_graph(load_graph(bank).graph, graph.graph)


def test_graphml_round_trip(graph, tmp_path):
    graph = annotated(graph)
    graph.write_graphml(tmp_path / "g.graphml")
    same_graph(DifficultyGraph.read_graphml(tmp_path / "g.graphml").graph, graph.graph)


def test_node_and_edge_tables_round_trip(graph):
    graph = annotated(graph)
    nodes, edges = graph.to_tables()
    assert set(nodes.columns) >= {"kind", "skill", "attempts", "successes", "pass_rate"}
    assert set(edges.columns) >= {"src", "dst", "relation", "prerequisite", "weight"}
    assert len(edges) == graph.graph.number_of_edges()
    same_graph(DifficultyGraph.from_tables(nodes, edges).graph, graph.graph)
