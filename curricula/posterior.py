"""Per-task Beta posteriors on the solve rate, borrowing strength from graph neighbours.

The solver changes while we watch it, and most tasks in a growing bank have few or no
attempts. So each task's posterior is

    Beta(a0 + borrowed_successes + own_successes, b0 + borrowed_failures + own_failures)

where the borrowed counts are the (edge-weighted) outcomes of the task's graph neighbours,
scaled down so that own plus borrowed attempts are worth at most `borrow_cap` attempts: a
task with no attempts of its own inherits its neighbours' solve rate with modest confidence,
and a task with `borrow_cap` attempts or more stands on its own record alone. With `half_life` (in steps), old records
count less, because an old failure says little about today's solver.

Learnability is the expected p(1 - p) under the posterior (the variance of one rollout's
reward, i.e. how much signal a group of rollouts carries); uncertainty is the posterior
standard deviation of p; staleness is the number of steps since the last attempt.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from curricula.edges import EdgeArrays


@dataclass(slots=True)
class Estimates:
    """Posterior parameters and derived measures, aligned with the rows of `stats`."""

    alpha: np.ndarray
    beta: np.ndarray
    staleness: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        return self.alpha / (self.alpha + self.beta)

    @property
    def learnability(self) -> np.ndarray:
        """E[p(1-p)] = alpha * beta / ((alpha + beta) (alpha + beta + 1))."""
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total * (total + np.float32(1.0)))

    @property
    def uncertainty(self) -> np.ndarray:
        total = self.alpha + self.beta
        return np.sqrt(self.alpha * self.beta / (total * total * (total + np.float32(1.0))))

    def frame(self, index: pd.Index) -> pd.DataFrame:
        """The estimates as a DataFrame indexed like `stats`."""
        return pd.DataFrame(
            {
                "alpha": self.alpha,
                "beta": self.beta,
                "pass_rate": self.mean,
                "learnability": self.learnability,
                "uncertainty": self.uncertainty,
                "staleness": self.staleness,
            },
            index=index,
        )


def current_step(stats: pd.DataFrame) -> int:
    """The step being scheduled: `stats.attrs["step"]` if set, else one past the latest attempt."""
    if "step" in stats.attrs:
        return int(stats.attrs["step"])
    if len(stats) == 0:
        return 0
    return int(stats["last_step"].to_numpy().max()) + 1


def staleness(stats: pd.DataFrame) -> np.ndarray:
    """Steps since each task's last attempt; never-attempted tasks count as attempted at -1."""
    last = stats["last_step"].to_numpy(dtype=np.float32)
    return np.maximum(np.float32(current_step(stats)) - last, np.float32(0.0))


def discount(stale: np.ndarray, half_life: float) -> np.ndarray:
    """Weight of a record last extended `stale` steps ago: 1 for last step's attempts, halved
    every `half_life` steps before that. Counters hold no per-attempt times, so a task's whole
    record is discounted by the age of its latest attempt."""
    return np.exp2(-np.maximum(stale - np.float32(1.0), np.float32(0.0)) / np.float32(half_life))


# With a half-life every task's discount changes every step, which would cost the graph's
# incremental neighbour sums (curricula.sparse) a full pass per call. But the discount of a
# record last extended at step l is 2^(-(now - 1 - l) / h) = 2^(-(now - 1 - ref) / h) *
# 2^((l - ref) / h): the second factor changes only when the task is attempted again, so the
# sums run on it and are rescaled by the first. `ref` moves every REBASE_HALF_LIVES half-lives
# (one full pass then), which keeps 2^((l - ref) / h) within float64 range.
REBASE_HALF_LIVES = 32


def _discounted_sums(
    stats: pd.DataFrame, edges: EdgeArrays, successes: np.ndarray, failures: np.ndarray, h: float
) -> np.ndarray:
    """Neighbour sums of discounted (successes, failures), from the raw counts."""
    now = current_step(stats)
    last = np.minimum(stats["last_step"].to_numpy(dtype=np.float64), now - 1)
    span = REBASE_HALF_LIVES * h
    ref = np.floor((now - 1) / span) * span
    scale = np.exp2((last - ref) / h)
    values = np.stack([successes * scale, failures * scale], axis=1)
    return edges.neighbour_sums(values) * np.exp2(-(now - 1 - ref) / h)


def estimate(
    stats: pd.DataFrame,
    edges: EdgeArrays | None = None,
    *,
    prior: tuple[float, float] = (1.0, 1.0),
    borrow_cap: float = 4.0,
    half_life: float | None = None,
) -> Estimates:
    """Beta posteriors for every row of `stats` (see the module docstring)."""
    # float32 halves the memory traffic on big banks; counts stay exact up to 2**24.
    attempts = stats["attempts"].to_numpy(dtype=np.float32)
    successes = stats["successes"].to_numpy(dtype=np.float32)
    # successes >= 0 and successes <= attempts imply attempts >= 0: two passes, not three.
    if (successes < 0).any() or (successes > attempts).any():
        raise ValueError("stats must have 0 <= successes <= attempts in every row.")
    stale = staleness(stats)
    decays = half_life is not None and half_life > 0
    raw_successes, raw_failures = successes, attempts - successes
    if decays:
        weight = discount(stale, half_life)
        successes = successes * weight
        attempts = attempts * weight
    failures = attempts - successes
    alpha = successes + np.float32(prior[0])
    beta = failures + np.float32(prior[1])
    if edges is not None and edges.src.size and borrow_cap > 0:
        if decays:
            sums = _discounted_sums(stats, edges, raw_successes, raw_failures, half_life)
        else:
            sums = edges.neighbour_sums(np.stack([successes, failures], axis=1))
        bs, bf = sums[:, 0], sums[:, 1]
        total = bs + bf
        room = np.maximum(np.float32(borrow_cap) - attempts, 0.0)  # own evidence comes first
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(total > room, room / total, 1.0)
        alpha += (bs * scale).astype(np.float32)
        beta += (bf * scale).astype(np.float32)
    return Estimates(alpha=alpha, beta=beta, staleness=stale)
