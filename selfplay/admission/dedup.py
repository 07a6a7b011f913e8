"""Duplicate keys and near-duplicate search: task vectors in a faiss index.

The exact-duplicate key (`dedup_key`) is the kind plus the normalized-AST hash of the
program (plus the question, for kinds that show one).

The default vectorizer needs no model: signed hashed n-grams (1 to 3) of the
normalized program tokens plus the prompt's words, L2-normalized, so the inner
product is the cosine similarity. Renamed or reformatted copies land on nearly the
same vector. A sentence-transformers model can be configured instead
(`Vectorizer(model="path/or/name")`).

A high similarity is only a suspect: admission then checks behaviour (each
reference program against the other task's tests and examples), so look-alikes that
compute different things (sum of evens, sum of odds) are both kept.

The index itself (`task_bank.vectors.NearDupIndex`) is the bank's: it searches the
vectors the bank stores, for admission and for the curriculum's inspection alike.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from selfplay import kinds
from selfplay.admission.normalize import ast_hash, code_tokens, word_tokens
from selfplay.task import Task

DEFAULT_DIM = 256
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


@dataclass(slots=True)
class Vectorizer:
    """Task -> unit vector. `model` switches to a sentence-transformers model."""

    dim: int = DEFAULT_DIM
    model: str | None = None
    prompt_weight: float = 0.5
    _st: Any = field(default=None, repr=False)
    _cache: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return f"st:{self.model}" if self.model else f"hashed-ngrams-{self.dim}"

    def _hash(self, tokens: list[str]) -> np.ndarray:
        cache = self._cache
        if len(cache) > 200_000:
            cache.clear()
        out = []
        for t in tokens:
            h = cache.get(t)
            if h is None:
                h = cache[t] = zlib.crc32(t.encode()) | (zlib.adler32(t.encode()) << 32)
            out.append(h)
        return np.array(out, dtype=np.uint64)

    def _embed(self, tokens: list[str], vec: np.ndarray, weight: float) -> None:
        if not tokens:
            return
        h = self._hash(tokens)
        grams = [h]
        if len(h) > 1:
            grams.append(h[:-1] * _MIX1 ^ h[1:])
        if len(h) > 2:
            grams.append((h[:-2] * _MIX1 ^ h[1:-1]) * _MIX2 ^ h[2:])
        allh = np.concatenate(grams)
        idx = (allh % np.uint64(self.dim)).astype(np.int64)
        sign = np.where((allh >> np.uint64(40)) & np.uint64(1), 1.0, -1.0)
        part = np.bincount(idx, weights=sign, minlength=self.dim)
        norm = np.linalg.norm(part)
        if norm > 0:
            vec += weight * part / norm

    def vectorize(self, tasks: list[Task]) -> np.ndarray:
        """An (n, dim) float32 array of unit vectors."""
        if self.model:
            return self._sentence_transformers(tasks)
        return self.from_tokens(
            [code_tokens(t.program) for t in tasks], [word_tokens(t.prompt) for t in tasks]
        )

    def from_tokens(self, code: list[list[str]], prompt: list[list[str]]) -> np.ndarray:
        """Unit vectors from already normalized code tokens and prompt words."""
        out = np.zeros((len(code), self.dim), dtype=np.float32)
        for i, (code_toks, prompt_toks) in enumerate(zip(code, prompt, strict=True)):
            vec = np.zeros(self.dim)
            self._embed(code_toks, vec, 1.0)
            self._embed(prompt_toks, vec, self.prompt_weight)
            norm = np.linalg.norm(vec)
            out[i] = vec / norm if norm > 0 else vec
        return out

    def _sentence_transformers(self, tasks: list[Task]) -> np.ndarray:
        if self._st is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise RuntimeError(
                    "the sentence-transformers vectorizer needs `pip install sentence-transformers`"
                ) from e
            self._st = SentenceTransformer(self.model)
        texts = [f"{t.prompt}\n{t.program}" for t in tasks]
        vecs = self._st.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
        self.dim = int(vecs.shape[1])
        return vecs.astype(np.float32)


def dedup_key(task: Task, program_hash: str) -> str:
    """Exact-duplicate key: same kind and normalized program, and for deduction and
    abduction the same question (the shown input, resp. output)."""
    key = f"{task.kind}:{program_hash}"
    kind = kinds.KINDS.get(task.kind)  # an unknown kind is refused when its row is parsed
    shown = kind.shown(task) if kind is not None else None
    if shown is not None:
        key += f":{shown}"
    return key


def keys(tasks: list[Task]) -> tuple[list[str], list[str]]:
    """Each task's normalized-AST hash and exact-duplicate key, as the bank stores them."""
    hashes = [ast_hash(t.program) for t in tasks]
    return hashes, [dedup_key(t, h) for t, h in zip(tasks, hashes, strict=True)]
