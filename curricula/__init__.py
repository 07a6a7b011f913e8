"""Curricula: which tasks to practise and which to build on.

`make_scheduler(name, seed=0).select(stats, k, graph=None)` returns k distinct task ids;
`DifficultyGraph` holds the structure between tasks (lineage, similarity, difficulty order);
`estimate` gives per-task Beta posteriors, learnability, uncertainty and staleness.
"""

from curricula import schedulers as _builtin  # noqa: F401  (registers the built-in schedulers)
from curricula.base import Scheduler, make_scheduler, register_scheduler, scheduler_names
from curricula.posterior import Estimates, estimate

__all__ = [
    "Estimates",
    "Scheduler",
    "estimate",
    "make_scheduler",
    "register_scheduler",
    "scheduler_names",
]
