"""A search over the task vectors the bank stores (faiss, inner product = cosine).

Admission asks it for near-duplicate suspects (`selfplay.admission.neardup`); the
curriculum's inspection asks it for each task's neighbours (`curricula.inspect`). It lives
with the bank because both read the bank's vectors and neither should import the other.

For small banks the index is exact (`IndexFlatIP`); from `ivf_min` vectors (50,000) on it is
an inverted-file index (`IndexIVFFlat`, trained on a sample), which keeps a
10,000-task check against a million-task bank within seconds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


class NearDupIndex:
    """Task vectors keyed by the task's integer key (its bank rowid)."""

    def __init__(self, dim: int, *, ivf_min: int = 50_000, nprobe: int = 16) -> None:
        self.dim = dim
        self.ivf_min = ivf_min
        self.nprobe = nprobe
        self._index: Any = None
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def _build(self, vectors: np.ndarray) -> Any:
        import faiss

        n = len(vectors)
        if n < self.ivf_min:
            return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
        # About 2 * sqrt(n) lists and 16 probes: each query scans under 1% of a million
        # vectors; k-means on a 40-per-list sample with 10 iterations keeps training short.
        nlist = int(min(65536, max(256, 2 * math.sqrt(n))))
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.niter = 10
        rng = np.random.default_rng(0)
        sample = vectors[rng.choice(n, size=min(n, 40 * nlist), replace=False)]
        index.train(np.ascontiguousarray(sample))
        index.nprobe = self.nprobe
        return index

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(vectors) == 0:
            return
        if self._index is None:
            self._index = self._build(vectors)
        self._index.add_with_ids(vectors, np.asarray(keys, dtype=np.int64))
        self._size += len(vectors)

    def search(
        self, vectors: np.ndarray, threshold: float, k: int = 8
    ) -> list[list[tuple[int, float]]]:
        """For each query, the (key, similarity) pairs at or above `threshold`, best first."""
        if self._index is None or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        sims, keys = self._index.search(np.ascontiguousarray(vectors, dtype=np.float32), k)
        return [
            [
                (int(key), float(s))
                for s, key in zip(srow, krow, strict=True)
                if key >= 0 and s >= threshold
            ]
            for srow, krow in zip(sims, keys, strict=True)
        ]
