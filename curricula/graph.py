"""The difficulty graph: tasks as nodes, and what we know about how they relate as edges.

Built from plain inputs, so it does not depend on how the bank stores things:
- task records `{"id", "kind"?, "skill"?, "tags"?}` (the skill is `skill`, else the first tag;
  the tags `family:<name>` and `level-<n>` of a procedural task are its family and level),
- lineage pairs `(parent_id, child_id)`: the proposer derived the child from the parent,
- neighbour lists `{id: [(neighbour_id, similarity), ...]}` from the bank's vector index,
- solve statistics (`stats`, as schedulers get them), which add difficulty-order edges.

`graph` is a `networkx.DiGraph` in the form schedulers take: an edge `u -> v` with
`prerequisite=True` means u is easier than or a prerequisite of v. Every edge has a
`relation`: "lineage" (parent -> child), "level" (a task of a procedural family's level n - 1
-> one of level n: each task gets up to `LEVEL_LINKS` of them), "order" (observed: u is solved clearly more often
than v, both well measured) or "similar" (stored both ways, `prerequisite=False`; it lends
posterior evidence but orders nothing). When observed order contradicts an edge, the
contradicted edge stops being a prerequisite: observations outrank assumptions.

Persisted as two tables (`curriculum_nodes`, `curriculum_edges`) in the bank's SQLite file or
any other, and exported as GraphML or as node/edge DataFrames.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from curricula.edges import EdgeArrays, EdgeCache, compile_edges
from curricula.frontier import frontier_mask
from curricula.posterior import estimate

NODE_COLUMNS = ("kind", "skill", "attempts", "successes", "pass_rate", "expected_variance")
EDGE_COLUMNS = ("relation", "prerequisite", "weight", "similarity")
# Prerequisites a procedural task gets from its family's level below: a few, not all, so a
# bank of thousands per level stays sparse, and enough that one odd task does not decide.
LEVEL_LINKS = 3


class DifficultyGraph:
    """A growing networkx DiGraph of tasks; `graph` is what `Scheduler.select` takes."""

    def __init__(self, graph: nx.DiGraph | None = None) -> None:
        self.graph = graph if graph is not None else nx.DiGraph()
        self.graph.graph.setdefault("version", 0)
        self._edges = EdgeCache()

    def _changed(self) -> None:
        # Schedulers cache the compiled graph by this version (see curricula.edges).
        self.graph.graph["version"] = int(self.graph.graph.get("version", 0)) + 1

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    # -- building --------------------------------------------------------------------------

    def add_tasks(self, tasks: Iterable[Mapping[str, Any]]) -> int:
        """Add or update task nodes; returns how many were new."""
        new = 0
        for task in tasks:
            tid = task["id"]
            tags = task.get("tags") or []
            skill = task.get("skill") or (tags[0] if tags else None)
            attrs = {"kind": task.get("kind") or "codegen"}
            if skill:
                attrs["skill"] = str(skill)
            attrs |= _family_level(tags)
            new += tid not in self.graph
            self.graph.add_node(tid, **attrs)
            for parent in task.get("parents") or ():
                self._add_lineage(parent, tid)
        self._link_levels()
        self._changed()
        return new

    def _link_levels(self) -> int:
        """Give each task of a family's level n > 1 up to `LEVEL_LINKS` prerequisite edges
        from that family's level n - 1; which ones is spread by a hash of the task id, so the
        tasks below share the load and the same graph is built in any order of arrival."""
        groups: dict[tuple[str, int], list] = {}
        for tid, data in self.graph.nodes(data=True):
            if data.get("level"):
                groups.setdefault((data["family"], int(data["level"])), []).append(tid)
        added = 0
        for (family, level), ids in groups.items():
            below = sorted(groups.get((family, level - 1), ()), key=str)
            for tid in ids:
                have = sum(
                    d["relation"] == "level" for _, _, d in self.graph.in_edges(tid, data=True)
                )
                start = zlib.crc32(str(tid).encode()) % max(1, len(below))
                for j in range(len(below)):
                    if have >= LEVEL_LINKS:
                        break
                    parent = below[(start + j) % len(below)]
                    if not self.graph.has_edge(parent, tid):
                        self.graph.add_edge(parent, tid, relation="level", prerequisite=True,
                                            weight=1.0)  # fmt: skip
                        have += 1
                        added += 1
        return added

    def add_lineage(self, pairs: Iterable[tuple[Any, Any]]) -> int:
        """Add `parent -> child` edges; returns how many were new."""
        added = sum(self._add_lineage(parent, child) for parent, child in pairs)
        self._changed()
        return added

    def _add_lineage(self, parent: Any, child: Any) -> bool:
        if parent == child:
            return False
        existing = self.graph.get_edge_data(parent, child)
        if existing is not None and existing["relation"] != "similar":
            return False
        sim = existing.get("similarity") if existing else None
        attrs = {"relation": "lineage", "prerequisite": True, "weight": 1.0}
        if sim is not None:
            attrs["similarity"] = sim
        self.graph.add_edge(parent, child, **attrs)
        return existing is None

    def add_neighbours(
        self, neighbours: Mapping[Any, Iterable[tuple[Any, float]]], min_similarity: float = 0.0
    ) -> int:
        """Add similarity edges (both directions) from kNN lists; returns how many pairs were new."""
        added = 0
        for tid, near in neighbours.items():
            for other, sim in near:
                if other == tid or sim < min_similarity:
                    continue
                for u, v in ((tid, other), (other, tid)):
                    data = self.graph.get_edge_data(u, v)
                    if data is None:
                        self.graph.add_edge(
                            u, v, relation="similar", prerequisite=False, weight=float(sim)
                        )
                        added += u == tid
                    data = self.graph.edges[u, v]
                    data["similarity"] = max(float(sim), data.get("similarity", float("-inf")))
        self._changed()
        return added

    def update_stats(
        self,
        stats: pd.DataFrame,
        *,
        margin: float = 0.25,
        min_attempts: int = 4,
        annotate: bool = True,
    ) -> int:
        """Add difficulty-order edges between related tasks whose pass rates differ by at least
        `margin` (both with `min_attempts`), and with `annotate` store the solve statistics on
        the nodes. Returns how many edges changed."""
        known = stats.loc[stats.index.intersection(pd.Index(list(self.graph.nodes), dtype=object))]
        edges = self._edges.get(self.graph, known.index)
        est = estimate(known, edges)
        if annotate:
            rows = zip(
                known.index,
                known["attempts"].to_numpy().tolist(),
                known["successes"].to_numpy().tolist(),
                est.mean.tolist(),
                est.expected_variance.tolist(),
                strict=True,
            )
            for tid, att, suc, pr, ev in rows:
                self.graph.nodes[tid].update(
                    attempts=att, successes=suc, pass_rate=pr, expected_variance=ev
                )
        changed = self._order_edges(known, edges, est.mean, margin, min_attempts)
        if changed:
            self._changed()
        return changed

    def _order_edges(
        self, known: pd.DataFrame, edges: EdgeArrays, mean: np.ndarray, margin: float, min_att: int
    ) -> int:
        n = len(known)
        measured = known["attempts"].to_numpy() >= min_att
        # Each related pair once, oriented easier -> harder where the evidence is clear.
        lo, hi = np.minimum(edges.src, edges.dst), np.maximum(edges.src, edges.dst)
        pairs = np.unique(lo * n + hi)
        a, b = pairs // n, pairs % n
        gap = mean[a] - mean[b]
        clear = measured[a] & measured[b] & (np.abs(gap) >= margin)
        easy = np.where(gap > 0, a, b)[clear]
        hard = np.where(gap > 0, b, a)[clear]
        # Only pairs whose edges disagree with the evidence need a Python-level change.
        keys = edges.src * n + edges.dst
        order = np.argsort(keys)
        keys, prereq = keys[order], edges.prerequisite[order]

        def flag(src: np.ndarray, dst: np.ndarray) -> np.ndarray:  # -1 missing, 0/1 prerequisite
            want = src * n + dst
            at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
            found = (keys[at] == want) if len(keys) else np.zeros(len(want), dtype=bool)
            return np.where(found, prereq[at].astype(np.int64), -1)

        stale = (flag(easy, hard) != 1) | (flag(hard, easy) == 1)
        ids = known.index
        changed = 0
        for e, h in zip(ids[easy[stale]], ids[hard[stale]], strict=True):
            back = self.graph.get_edge_data(h, e)
            if back is not None and back.get("prerequisite"):
                back["prerequisite"] = False  # contradicted by observation
                changed += 1
            data = self.graph.get_edge_data(e, h)
            if data is None:
                self.graph.add_edge(e, h, relation="order", prerequisite=True, weight=1.0)
                changed += 1
            elif not data.get("prerequisite"):
                data["prerequisite"] = True
                if data["relation"] == "similar":
                    data["relation"] = "order"
                changed += 1
        return changed

    # -- reading ---------------------------------------------------------------------------

    def frontier(self, stats: pd.DataFrame, mastery: float = 0.8, enough: float = 0.5) -> list:
        """Tasks in `stats` not mastered on their own record whose prerequisites are mastered
        enough (see `curricula.frontier`)."""
        edges = compile_edges(self.graph, stats.index)
        mask = frontier_mask(stats, edges, mastery=mastery, enough=enough)
        return stats.index[mask].tolist()

    def skill_clusters(self, seed: int = 0) -> dict[str, list]:
        """Tasks grouped by skill; tasks without one are grouped by communities of similarity."""
        clusters: dict[str, list] = {}
        unlabeled = []
        for tid, skill in self.graph.nodes(data="skill"):
            if skill is None:
                unlabeled.append(tid)
            else:
                clusters.setdefault(str(skill), []).append(tid)
        if unlabeled:
            sub = self.graph.subgraph(unlabeled).to_undirected()
            parts = nx.community.louvain_communities(sub, weight="weight", seed=seed)
            for i, part in enumerate(sorted(parts, key=len, reverse=True)):
                clusters[f"cluster-{i}"] = sorted(part, key=str)
        return clusters

    # -- export and persistence ------------------------------------------------------------

    def to_tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(nodes indexed by task_id, edges with src and dst columns)."""
        nodes = pd.DataFrame(
            [
                {"task_id": n, **{c: d.get(c) for c in NODE_COLUMNS}}
                for n, d in self.graph.nodes(data=True)
            ],
            columns=["task_id", *NODE_COLUMNS],
        ).set_index("task_id")
        edges = pd.DataFrame(
            [
                {"src": u, "dst": v, **{c: d.get(c) for c in EDGE_COLUMNS}}
                for u, v, d in self.graph.edges(data=True)
            ],
            columns=["src", "dst", *EDGE_COLUMNS],
        )
        return nodes, edges

    @classmethod
    def from_tables(cls, nodes: pd.DataFrame, edges: pd.DataFrame) -> DifficultyGraph:
        graph = nx.DiGraph()
        for tid, row in nodes.iterrows():
            graph.add_node(tid, **_present(row.to_dict()))
        for row in edges.to_dict("records"):
            attrs = _present({c: row.get(c) for c in EDGE_COLUMNS})
            attrs["prerequisite"] = bool(attrs.get("prerequisite", True))
            graph.add_edge(row["src"], row["dst"], **attrs)
        return cls(graph)

    def write_graphml(self, path: str) -> None:
        """GraphML for Gephi/Cytoscape/networkx; missing attributes are left out."""
        clean = nx.DiGraph()
        clean.add_nodes_from((str(n), _present(d)) for n, d in self.graph.nodes(data=True))
        clean.add_edges_from(
            (str(u), str(v), _present(d)) for u, v, d in self.graph.edges(data=True)
        )
        nx.write_graphml(clean, path)

    @classmethod
    def read_graphml(cls, path: str) -> DifficultyGraph:
        return cls(nx.DiGraph(nx.read_graphml(path)))


def _family_level(tags: Iterable[str]) -> dict[str, Any]:
    """`{"family", "level"}` from a procedural task's tags, else nothing."""
    family = next((t[7:] for t in tags if t.startswith("family:")), None)
    level = next((t[6:] for t in tags if t.startswith("level-") and t[6:].isdigit()), None)
    return {"family": family, "level": int(level)} if family and level else {}


def _present(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes that carry a value (GraphML and networkx have no use for None or NaN)."""
    out = {}
    for key, value in attrs.items():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        out[key] = value.item() if isinstance(value, np.generic) else value
    return out
