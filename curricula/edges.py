"""A networkx graph compiled to numpy edge arrays aligned with the rows of `stats`.

Schedulers run on banks of a million tasks, where a Python loop over nodes per call is too
slow; walking the graph once and keeping integer arrays makes every later call a few
vectorised passes (`np.bincount` over edges). The compiled form is cached and rebuilt only
when the graph or the task index changes (`DifficultyGraph` bumps `graph.graph["version"]` on
every change; for other graphs the node and edge counts stand in for a version).

Edge attributes read: `weight` (default 1.0; similarity edges carry their cosine similarity)
and `prerequisite` (default True, False for `relation == "similar"`): only prerequisite edges
order tasks; all edges lend evidence to the posterior.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import networkx as nx


@dataclass(slots=True)
class EdgeArrays:
    """Edges `src[i] -> dst[i]` as row positions in `stats`; nodes outside `stats` are dropped."""

    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    prerequisite: np.ndarray

    def unmet_prerequisites(self, mastered: np.ndarray) -> np.ndarray:
        """For every task, how many of its prerequisite predecessors are not mastered."""
        keep = self.prerequisite & ~mastered[self.src]
        return np.bincount(self.dst[keep], minlength=mastered.shape[0])


def is_prerequisite(data: dict) -> bool:
    """Whether an edge orders its endpoints (see the module docstring)."""
    if "prerequisite" in data:
        return bool(data["prerequisite"])
    return data.get("relation") != "similar"


def compile_edges(graph: nx.DiGraph, index: pd.Index) -> EdgeArrays:
    """Walk `graph` once and return its edges as positions in `index`."""
    rows = [
        (u, v, float(d.get("weight", 1.0)), is_prerequisite(d))
        for u, v, d in graph.edges(data=True)
    ]
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return EdgeArrays(empty, empty, np.zeros(0), np.zeros(0, dtype=bool))
    us, vs, ws, ps = zip(*rows, strict=True)
    src = index.get_indexer(pd.Index(us, dtype=object))
    dst = index.get_indexer(pd.Index(vs, dtype=object))
    keep = (src >= 0) & (dst >= 0) & (src != dst)
    return EdgeArrays(
        src=src[keep].astype(np.int64),
        dst=dst[keep].astype(np.int64),
        weight=np.asarray(ws, dtype=np.float64)[keep],
        prerequisite=np.asarray(ps, dtype=bool)[keep],
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
        key = (
            id(graph),
            graph.graph.get("version"),
            graph.number_of_nodes(),
            graph.number_of_edges(),
        )
        same_index = self._index is not None and (index is self._index or index.equals(self._index))
        if key != self._key or not same_index:
            self._edges = compile_edges(graph, index)
            self._key = key
            self._index = index
        return self._edges
