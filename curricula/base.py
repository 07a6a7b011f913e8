"""The scheduler contract: one small class with one verb, `select`, and a registry.

```python
from curricula import make_scheduler
sched = make_scheduler("learnability", seed=0)
ids = sched.select(stats, k, graph=None)    # -> list of k distinct task ids
```

`stats` is a pandas DataFrame indexed by task id with at least the columns `attempts`,
`successes` and `last_step` (-1 when never attempted). `graph` is an optional
`networkx.DiGraph` whose edge `u -> v` means u is easier than or a prerequisite of v.
A scheduler may keep state between calls (its random generator, a compiled graph).

Users add their own scheduler with `@register_scheduler("name")` on a `Scheduler`
subclass; `make_scheduler` then builds it by name like the built-in ones.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import networkx as nx

REQUIRED_COLUMNS = ("attempts", "successes", "last_step")

_REGISTRY: dict[str, type[Scheduler]] = {}


class Scheduler(ABC):
    """Chooses which tasks to practise (or to build on) next."""

    name: str = "scheduler"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        """Return `min(k, len(stats))` distinct task ids from `stats.index`."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"


def register_scheduler(name: str) -> Callable[[type[Scheduler]], type[Scheduler]]:
    """Class decorator that makes a `Scheduler` subclass available to `make_scheduler`."""

    def add(cls: type[Scheduler]) -> type[Scheduler]:
        if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
            raise TypeError(f"{cls!r} is not a Scheduler subclass.")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return add


def scheduler_names() -> list[str]:
    """Names `make_scheduler` accepts, built-in ones first."""
    return list(_REGISTRY)


def make_scheduler(name: str, seed: int = 0, **options: Any) -> Scheduler:
    """Build the scheduler registered under `name`; options go to its constructor."""
    try:
        cls = _REGISTRY[name]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise ValueError(f"Unknown scheduler {name!r}; choose one of: {known}.") from None
    return cls(seed=seed, **options)


def check_stats(stats: pd.DataFrame, k: int) -> int:
    """Validate the inputs of `select`; return how many ids to choose."""
    if not isinstance(stats, pd.DataFrame):
        raise TypeError("stats must be a pandas DataFrame indexed by task id.")
    missing = [c for c in REQUIRED_COLUMNS if c not in stats.columns]
    if missing:
        raise ValueError(f"stats lacks the column(s) {', '.join(missing)}.")
    # Task ids are assumed unique (the bank's are a primary key): checking costs a hash of
    # every id on every call, more than the whole selection on a big bank.
    if int(k) < 0:
        raise ValueError(f"k must be non-negative, got {k}.")
    return min(int(k), len(stats))


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k largest scores (order: best first), in O(n) plus O(k log k)."""
    n = scores.shape[0]
    if k >= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def weighted_sample(weights: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct positions drawn with probability proportional to `weights`, without replacement.

    Gumbel-top-k (`log w - log E`, E ~ Exp(1), top k; the log form of Efraimidis-Spirakis
    keys, which does not overflow for tiny weights) makes this one vectorised pass. Positions
    with zero weight come last, in random order, so k distinct ids are always returned.
    """
    w = np.asarray(weights, dtype=np.float32)
    positive = w > 0
    keys = np.full(w.shape[0], -np.inf, dtype=np.float32)
    e = rng.standard_exponential(w.shape[0], dtype=np.float32)
    keys[positive] = np.log(w[positive]) - np.log(np.maximum(e[positive], np.float32(1e-30)))
    chosen = top_k(keys, k)
    short = k - int(np.count_nonzero(positive[chosen]))
    if short > 0:  # not enough positive weights: fill uniformly from the rest
        rest = np.flatnonzero(~positive)
        chosen = np.concatenate([chosen[: k - short], rng.choice(rest, short, replace=False)])
    return chosen


def ids_at(stats: pd.DataFrame, positions: np.ndarray) -> list:
    """Task ids at the given row positions, as plain Python objects."""
    return stats.index[np.asarray(positions, dtype=np.int64)].tolist()
