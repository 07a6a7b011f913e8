"""Curricula: which tasks to practise and which to build on.

`make_scheduler(name, seed=0).select(stats, k, graph=None)` returns k distinct task ids;
`DifficultyGraph` holds the structure between tasks (lineage, similarity, difficulty order);
`estimate` gives per-task Beta posteriors, expected reward variance, uncertainty and staleness.
"""

# Registers the built-in schedulers: five in curricula.schedulers, then the frontier.
from curricula import frontier as _frontier  # noqa: F401
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
