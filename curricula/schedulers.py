"""Five of the six built-in schedulers (the sixth, `frontier`, has its own module). Each is a
few vectorised passes over `stats` (no Python loop over tasks), so that choosing 512 tasks
from a bank of a million stays well under 100 ms.

- uniform: every task equally likely (the baseline).
- easy_to_hard: the unmastered tasks with the highest estimated pass rate first.
- dapo_filter: uniform over tasks whose record is not all-solved or never-solved (DAPO's
  dynamic-sampling filter, applied from history instead of after paying for the rollouts);
  filtered tasks come back after `retry_after` steps, since the solver changes.
- learnability: Thompson-style: draw a plausible pass rate p from each task's posterior (normal
  approximation), score p(1-p), take the top k. Unknown tasks win by their uncertainty,
  measured tasks by their learnability (Foster & Foerster 2025 sample by p(1-p)).
- plr: Prioritized Level Replay (Jiang et al. 2021): rank-based priority on learnability with
  temperature `temperature`, mixed with a staleness distribution with weight `staleness_weight`
  (defaults 0.1 and 0.1 as in the paper; batches keep the mixture's proportions).
- frontier (curricula.frontier): learnability, with tasks not yet tried weighted by how ready
  their prerequisites are.

Graph-aware ones (all but uniform and dapo_filter) read the graph through the posterior: every
edge lends its neighbour's outcomes to tasks with little record of their own
(curricula.posterior).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from curricula.base import (
    Scheduler,
    check_stats,
    ids_at,
    register_scheduler,
    top_k,
    weighted_sample,
)
from curricula.edges import EdgeArrays, EdgeCache
from curricula.posterior import Estimates, current_step, estimate

if TYPE_CHECKING:
    import networkx as nx


class PosteriorScheduler(Scheduler):
    """Shared plumbing of the schedulers that read the posterior (`curricula.posterior`):
    its options (`prior`, `borrow_cap`, `half_life`), the compiled-graph cache and the
    Thompson draw."""

    def __init__(
        self,
        seed: int = 0,
        *,
        prior: tuple[float, float] = (1.0, 1.0),
        borrow_cap: float = 4.0,
        half_life: float | None = None,
    ) -> None:
        super().__init__(seed)
        self.prior = prior
        self.borrow_cap = borrow_cap
        self.half_life = half_life
        self._edges = EdgeCache()

    def estimates(
        self, stats: pd.DataFrame, graph: nx.DiGraph | None, edges: EdgeArrays | None = None
    ) -> Estimates:
        edges = edges if edges is not None else self._edges.get(graph, stats.index)
        return estimate(
            stats, edges, prior=self.prior, borrow_cap=self.borrow_cap, half_life=self.half_life
        )

    def sampled_learnability(self, est: Estimates) -> np.ndarray:
        """p(1-p) for one draw of p per task from a normal approximation of its posterior."""
        one = np.float32(1.0)
        total = est.alpha + est.beta
        mean = est.alpha / total
        # Posterior sd of p: sqrt(mean (1 - mean) / (total + 1)); in place, as this runs on
        # every task of the bank on every call.
        sd = one - mean
        sd *= mean
        total += one
        sd /= total
        np.sqrt(sd, out=sd)
        p = self.rng.standard_normal(mean.shape[0], dtype=np.float32)
        p *= sd
        p += mean
        np.clip(p, np.float32(0.0), one, out=p)
        sd[:] = one - p  # reuse the buffer for 1 - p
        p *= sd
        return p


@register_scheduler("uniform")
class Uniform(Scheduler):
    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        k = check_stats(stats, k)
        return ids_at(stats, self.rng.choice(len(stats), k, replace=False))


@register_scheduler("easy_to_hard")
class EasyToHard(PosteriorScheduler):
    def __init__(self, seed: int = 0, *, mastery: float = 0.8, **options) -> None:
        super().__init__(seed, **options)
        self.mastery = mastery

    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        k = check_stats(stats, k)
        mean = self.estimates(stats, graph).mean
        # Mastered tasks go last; among the rest the easiest first; ties broken at random.
        jitter = self.rng.random(mean.shape[0], dtype=np.float32) * 1e-6
        score = np.where(mean >= self.mastery, mean - 2.0, mean) + jitter
        return ids_at(stats, top_k(score, k))


@register_scheduler("dapo_filter")
class DapoFilter(Scheduler):
    def __init__(self, seed: int = 0, *, retry_after: int | None = 50) -> None:
        super().__init__(seed)
        self.retry_after = retry_after

    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        k = check_stats(stats, k)
        attempts = stats["attempts"].to_numpy()
        successes = stats["successes"].to_numpy()
        uniform_record = (attempts > 0) & ((successes == 0) | (successes == attempts))
        if self.retry_after is not None:
            stale = current_step(stats) - stats["last_step"].to_numpy() > self.retry_after
            uniform_record &= ~stale
        # Uniform over kept tasks; filtered ones only fill a short batch.
        kept = np.flatnonzero(~uniform_record)
        if kept.shape[0] >= k:
            return ids_at(stats, self.rng.choice(kept, k, replace=False))
        rest = np.flatnonzero(uniform_record)
        fill = self.rng.choice(rest, k - kept.shape[0], replace=False)
        return ids_at(stats, np.concatenate([self.rng.permutation(kept), fill]))


@register_scheduler("learnability")
class Learnability(PosteriorScheduler):
    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        k = check_stats(stats, k)
        score = self.sampled_learnability(self.estimates(stats, graph))
        return ids_at(stats, top_k(score, k))


@register_scheduler("plr")
class PrioritizedReplay(PosteriorScheduler):
    def __init__(
        self, seed: int = 0, *, temperature: float = 0.1, staleness_weight: float = 0.1, **options
    ) -> None:
        super().__init__(seed, **options)
        self.temperature = temperature
        self.staleness_weight = staleness_weight

    def select(self, stats: pd.DataFrame, k: int, graph: nx.DiGraph | None = None) -> list:
        k = check_stats(stats, k)
        n = len(stats)
        if k == 0:
            return []
        est = self.estimates(stats, graph)
        # PLR draws each replay from (1 - rho) P_score + rho P_stale. For a batch of distinct
        # tasks we keep those proportions: a Binomial(k, rho) share is drawn by staleness and
        # the rest by rank (drawing all k from the mixture would let its long tail of staleness
        # mass take most of the batch once the few top ranks are used up).
        n_stale = int(self.rng.binomial(k, self.staleness_weight))
        # Random tie-break, in float64 because 1e-9 vanishes next to a float32 variance.
        score = est.expected_variance.astype(np.float64) + self.rng.random(n) * 1e-9
        # Rank weights (1/rank)^(1/T) beyond the top m ranks are negligible for the temperatures
        # PLR uses, so only those ranks are sorted: O(n) instead of a full sort.
        m = min(n, max(16 * k, 4096))
        best = top_k(score, m)
        rank_weight = (1.0 / np.arange(1, m + 1)) ** (1.0 / self.temperature)
        by_rank = best[weighted_sample(rank_weight, k - n_stale, self.rng)]
        by_stale = _draw_distinct(est.staleness, n_stale, by_rank, self.rng)
        return ids_at(stats, np.concatenate([by_rank, by_stale]))


def _draw_distinct(
    weights: np.ndarray, m: int, taken: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """m distinct positions not in `taken`, drawn one after another with probability
    proportional to `weights`, repeats rejected: sampling without replacement, done as
    draws with replacement on the cumulative weights, which for a few draws from a big bank
    is far cheaper than keying every position."""
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    cdf = np.cumsum(weights, dtype=np.float64)
    blocked = set(taken.tolist())
    out: list[int] = []
    if cdf[-1] > 0:
        for _ in range(8):  # each round draws twice what is missing; rarely more than one
            draws = np.searchsorted(cdf, rng.random(2 * (m - len(out)) + 8) * cdf[-1], "right")
            for pos in np.minimum(draws, len(cdf) - 1).tolist():
                if pos not in blocked and weights[pos] > 0:
                    blocked.add(pos)
                    out.append(pos)
                    if len(out) == m:
                        return np.asarray(out, dtype=np.int64)
    # Too few positions with weight left: fill uniformly from the rest.
    free = np.setdiff1d(np.arange(len(cdf)), np.fromiter(blocked, dtype=np.int64))
    fill = rng.choice(free, min(m - len(out), len(free)), replace=False)
    return np.concatenate([np.asarray(out, dtype=np.int64), fill])
