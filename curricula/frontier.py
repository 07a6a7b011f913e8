"""The frontier: learnability, with tasks not yet tried ranked by how ready their prerequisites are.

Real difficulty graphs (lineage, similarity, observed order) are dense and noisy: a task may
list twenty prerequisites where two would do, some of them impossible, some wrong, some
missing. A rule that waits until every prerequisite is mastered, on each one's own record,
keeps such a task off the frontier for good. So the frontier reads the graph softly:

1. A prerequisite's *credit* is how far its estimated solve rate (the posterior with the
   graph's evidence, so a prerequisite never tried but whose neighbours are solved counts;
   one with a record of its own on all of it, see `judged_pass_rate`) sits between the prior
   mean (no evidence: no credit) and `mastery` (full credit), in steps of 1/32.
2. A task's *readiness* is the edge-weighted mean credit of its prerequisites, divided by
   `enough` and capped at 1: ready once half (by default) of its prerequisites' weight is
   mastered, whatever their number. Tasks without prerequisites are ready.
3. The score is the Thompson learnability draw (as `learnability`) times a weight that moves
   from readiness to 1 as the task's own record grows: `w = s + (1 - s) * readiness`, with
   `s = min(own attempts / borrow_cap, 1)` (attempts discounted by `half_life` if set).
   A task's own outcomes always outrank what the graph suggests about it.
4. A share `explore` of the batch is chosen by learnability alone, so a task the graph
   wrongly holds back is still tried in time.

Why this holds on any graph: readiness is a weighted *mean*, so fan-in does not matter and
each wrong, impossible or missing prerequisite moves it by its share of the weight only; it
reaches 1 before all prerequisites are mastered, so a minority of bad edges cannot block a
task; and the graph only reorders tasks without a record of their own. With no graph, or a
graph without prerequisite edges, the frontier is `learnability`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from curricula.base import check_stats, ids_at, register_scheduler, top_k
from curricula.edges import EdgeArrays
from curricula.posterior import Estimates, estimate
from curricula.schedulers import PosteriorScheduler

if TYPE_CHECKING:
    import networkx as nx


CREDIT_STEPS = 32


def readiness(
    est: Estimates,
    edges: EdgeArrays | None,
    *,
    mastery: float = 0.8,
    enough: float = 0.5,
    prior: tuple[float, float] = (1.0, 1.0),
    judged: np.ndarray | None = None,
) -> np.ndarray:
    """Per task, in [0, 1]: the share of its prerequisites' weight that is mastered, over
    `enough` (see the module docstring); 1 for tasks without prerequisites. Mastery is judged
    on `judged` (default: the posterior means; see `judged_pass_rate`), which is consumed."""
    n = est.alpha.shape[0]
    if edges is None or not edges.has_prerequisite_edges:
        return np.ones(n, dtype=np.float32)
    floor = np.float32(prior[0] / (prior[0] + prior[1]))
    # A fresh array, worked on in place: this runs over the whole bank.
    credit = est.mean if judged is None else judged
    credit -= floor
    credit *= np.float32(1.0 / max(mastery - floor, 1e-6))
    np.clip(credit, np.float32(0.0), np.float32(1.0), out=credit)
    # In steps of 1/CREDIT_STEPS: with a half-life the borrowed part of a posterior drifts a
    # little every step, and unrounded credits would cost the prerequisite sums more pushes.
    credit *= np.float32(CREDIT_STEPS)
    np.rint(credit, out=credit)
    credit *= np.float32(1.0 / CREDIT_STEPS)
    ready = edges.prerequisite_mean(credit)
    ready *= np.float32(1.0 / enough)
    np.minimum(ready, np.float32(1.0), out=ready)
    np.maximum(ready, edges.without_prerequisites, out=ready)
    return ready


def judged_pass_rate(
    stats: pd.DataFrame,
    est: Estimates,
    *,
    prior: tuple[float, float] = (1.0, 1.0),
    borrow_cap: float = 4.0,
) -> np.ndarray:
    """The pass rate a prerequisite's mastery is judged on: its posterior mean, except that a
    task with a record of its own (`borrow_cap` attempts or more) is judged on all of that
    record, undiscounted. Without a half-life the two agree (such a task borrows nothing).
    With one, the discount pulls every old record back to the prior, which would take the
    credit from prerequisites mastered long ago; but a solver keeps what it has mastered
    (only old failures go stale, and those earn no credit either way)."""
    mean = est.mean
    attempts = stats["attempts"].to_numpy(dtype=np.float32)
    own = stats["successes"].to_numpy(dtype=np.float32) + np.float32(prior[0])
    own /= attempts + np.float32(prior[0] + prior[1])
    np.copyto(mean, own, where=attempts >= np.float32(borrow_cap))
    return mean


def graph_weight(est: Estimates, ready: np.ndarray, *, borrow_cap: float = 4.0) -> np.ndarray:
    """The factor on each task's learnability draw: `s + (1 - s) * ready`, where the share
    `s = min(own attempts / borrow_cap, 1)` is how far the task's own record speaks for it
    (`est.attempts` are discounted with a half-life, so an old record hands the say back to
    the graph)."""
    share = est.attempts * np.float32(1.0 / max(borrow_cap, 1.0))
    np.minimum(share, np.float32(1.0), out=share)
    weight = np.float32(1.0) - share
    weight *= ready
    weight += share
    return weight


def frontier_mask(
    stats: pd.DataFrame,
    edges: EdgeArrays | None,
    *,
    mastery: float = 0.8,
    enough: float = 0.5,
    half_life: float | None = None,
) -> np.ndarray:
    """True for tasks not mastered on their own record (posterior mean below `mastery`, all of
    the record, as for prerequisites) that are fully ready: what `selfplay curriculum show`
    lists as the frontier."""
    own = estimate(stats, None)
    est = estimate(stats, edges, half_life=half_life)
    judged = judged_pass_rate(stats, est) if half_life else None
    ready = readiness(est, edges, mastery=mastery, enough=enough, judged=judged)
    return (own.mean < mastery) & (ready >= 1.0)


@register_scheduler("frontier")
class Frontier(PosteriorScheduler):
    def __init__(
        self,
        seed: int = 0,
        *,
        mastery: float = 0.8,
        enough: float = 0.5,
        explore: float = 0.25,
        **options,
    ) -> None:
        super().__init__(seed, **options)
        if not 0.0 < enough <= 1.0:
            raise ValueError(f"enough must be in (0, 1], got {enough}.")
        self.mastery = mastery
        self.enough = enough
        self.explore = explore

    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        k = check_stats(stats, k)
        edges = self._edges.get(graph, stats.index)
        est = self.estimates(stats, graph, edges)
        score = self.sampled_learnability(est)
        if edges is None or not edges.has_prerequisite_edges or k == 0:
            return ids_at(stats, top_k(score, k))
        n_explore = int(round(self.explore * k))
        # The explorers by learnability alone, before the graph reweighs the scores.
        explorers = top_k(score, n_explore) if n_explore else np.zeros(0, dtype=np.int64)
        judged = None
        if self.half_life:
            judged = judged_pass_rate(stats, est, prior=self.prior, borrow_cap=self.borrow_cap)
        ready = readiness(
            est, edges, mastery=self.mastery, enough=self.enough, prior=self.prior, judged=judged
        )
        # A draw clipped to p = 0 or 1 scores 0; the epsilon keeps such a task above the ones
        # the graph holds back entirely (weight 0).
        score += np.float32(1e-6)
        score *= graph_weight(est, ready, borrow_cap=self.borrow_cap)
        score[explorers] = -np.inf
        ranked = top_k(score, k - n_explore)
        return ids_at(stats, np.concatenate([ranked, explorers]))
