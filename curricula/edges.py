"""A networkx graph compiled to numpy edge arrays aligned with the rows of `stats`.

Schedulers run on banks of a million tasks, where a Python loop over nodes per call is too
slow; walking the graph once and keeping integer arrays makes every later call a few
vectorised passes (`np.bincount` over edges). The compiled form is cached and rebuilt only
when the graph or the task index changes (`DifficultyGraph` bumps `graph.graph["version"]` on
every change; for other graphs the node and edge counts stand in for a version, and counting
edges walks every node, so on big graphs of your own set and bump `graph.graph["version"]`).

Edge attributes read: `weight` (default 1.0; similarity edges carry their cosine similarity)
and `prerequisite` (default True, False for `relation == "similar"`): only prerequisite edges
order tasks; all edges lend evidence to the posterior.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from curricula.sparse import SparseSum

if TYPE_CHECKING:
    import networkx as nx


@dataclass(slots=True)
class EdgeArrays:
    """Edges `src[i] -> dst[i]` as row positions in `stats`; nodes outside `stats` are dropped.

    The sums below are kept by `SparseSum`, so repeated calls with inputs that changed for a
    few tasks only cost in proportion to those tasks' edges.
    """

    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    prerequisite: np.ndarray
    n: int
    _neighbours: SparseSum | None = field(default=None, repr=False)
    _prerequisites: SparseSum | None = field(default=None, repr=False)
    _prerequisite_weight: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _any_prerequisite: bool | None = field(default=None, repr=False)

    def neighbour_sums(self, values: np.ndarray) -> np.ndarray:
        """Edge-weighted sums of `values` over each task's neighbours, edges taken both ways."""
        if self._neighbours is None:
            both_src = np.concatenate([self.src, self.dst])
            both_dst = np.concatenate([self.dst, self.src])
            weight = np.concatenate([self.weight, self.weight])
            self._neighbours = SparseSum(both_src, both_dst, weight, self.n)
        return self._neighbours(values)

    def prerequisite_mean(self, values: np.ndarray) -> np.ndarray:
        """Edge-weighted mean of `values` over each task's prerequisite predecessors, as
        float32 (0 for tasks without any; see `without_prerequisites`)."""
        if self._prerequisites is None:
            keep = self.prerequisite
            w = self.weight[keep]
            self._prerequisites = SparseSum(self.src[keep], self.dst[keep], w, self.n)
        mean = self._prerequisites(values).astype(np.float32)
        mean *= self._prerequisite_weights()[0]
        return mean

    @property
    def without_prerequisites(self) -> np.ndarray:
        """1.0 for tasks without prerequisite edges into them, else 0.0 (float32)."""
        return self._prerequisite_weights()[1]

    def _prerequisite_weights(self) -> tuple[np.ndarray, np.ndarray]:
        if self._prerequisite_weight is None:
            keep = self.prerequisite
            total = np.bincount(self.dst[keep], weights=self.weight[keep], minlength=self.n)
            has = total > 0
            inverse = np.divide(1.0, total, out=np.zeros(self.n), where=has).astype(np.float32)
            self._prerequisite_weight = (inverse, (~has).astype(np.float32))
        return self._prerequisite_weight

    @property
    def has_prerequisite_edges(self) -> bool:
        if self._any_prerequisite is None:
            self._any_prerequisite = bool(self.prerequisite.any())
        return self._any_prerequisite


def is_prerequisite(data: dict) -> bool:
    """Whether an edge orders its endpoints (see the module docstring)."""
    if "prerequisite" in data:
        return bool(data["prerequisite"])
    return data.get("relation") != "similar"


def compile_edges(graph: nx.DiGraph, index: pd.Index) -> EdgeArrays:
    """Walk `graph` once and return its edges as positions in `index`."""
    nodes = list(graph)
    if not nodes:
        empty = np.zeros(0, dtype=np.int64)
        return EdgeArrays(empty, empty, np.zeros(0), np.zeros(0, dtype=bool), len(index))
    lookup = dict(
        zip(nodes, index.get_indexer(pd.Index(nodes, dtype=object)).tolist(), strict=True)
    )
    src, dst, weight, prereq = [], [], [], []
    for u, nbrs in graph.adjacency():
        pu = lookup[u]
        if pu < 0:
            continue
        for v, data in nbrs.items():
            pv = lookup[v]
            if pv < 0 or pv == pu:
                continue
            src.append(pu)
            dst.append(pv)
            weight.append(data.get("weight", 1.0))
            # is_prerequisite(data), inlined: this loop runs once per edge
            prereq.append(data.get("prerequisite", data.get("relation") != "similar"))
    return EdgeArrays(
        src=np.asarray(src, dtype=np.int64),
        dst=np.asarray(dst, dtype=np.int64),
        weight=np.asarray(weight, dtype=np.float64),
        prerequisite=np.asarray(prereq, dtype=bool),
        n=len(index),
    )


class EdgeCache:
    """Remembers the last compiled graph, so repeated `select` calls pay for it once.

    A fresh `stats` frame with the same ids in the same order reuses the compiled arrays
    (`Index.equals` is one vectorised comparison, far cheaper than re-hashing a million ids).
    """

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._index: pd.Index | None = None
        self._edges: EdgeArrays | None = None

    def get(self, graph: nx.DiGraph | None, index: pd.Index) -> EdgeArrays | None:
        if graph is None:
            return None
        version = graph.graph.get("version")
        # number_of_edges() walks every node, so it stands in only for graphs without a version.
        size = graph.number_of_edges() if version is None else None
        key = (id(graph), version, graph.number_of_nodes(), size)
        same_index = self._index is not None and (index is self._index or index.equals(self._index))
        if key != self._key or not same_index:
            self._edges = compile_edges(graph, index)
            self._key = key
            self._index = index
        return self._edges
