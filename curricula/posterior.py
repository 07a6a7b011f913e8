"""Per-task Beta posteriors on the solve rate, borrowing strength from graph neighbours.

The solver changes while we watch it, and most tasks in a growing bank have few or no
attempts. So each task's posterior is

    Beta(a0 + borrowed_successes + own_successes, b0 + borrowed_failures + own_failures)

where the borrowed counts are the (edge-weighted) outcomes of the task's graph neighbours,
scaled down so that own plus borrowed attempts are worth at most `borrow_cap` attempts: a
task with no attempts of its own inherits its neighbours' solve rate with modest confidence,
and a task with `borrow_cap` attempts or more stands on its own record alone. With
`half_life` (in steps), a record counts `discount` = 2^(-a / half_life), a being the steps from
its latest attempt to the step before the one being scheduled: an old failure says little
about today's solver. A discounted record also lends less to its neighbours.

`expected_variance` is E[p(1 - p)] under the posterior: the variance one rollout's reward is
expected to have, i.e. how much signal a group of rollouts carries (what the `learnability` and
`plr` schedulers rank by; not the proposer's learnability reward, which is the p(1 - p) of one
round's pass rate, `selfplay.solver.learnability`); uncertainty is the posterior standard
deviation of p; staleness is the number of steps since the last attempt.
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
    attempts: np.ndarray  # the task's own attempts (discounted with a half-life)

    @property
    def mean(self) -> np.ndarray:
        return self.alpha / (self.alpha + self.beta)

    @property
    def expected_variance(self) -> np.ndarray:
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
                "expected_variance": self.expected_variance,
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
# record last extended at step l is 2^(-(now - 1 - l) / h) = 2^((l - ref) / h) *
# 2^(-(now - 1 - ref) / h): the first factor changes only when the task is attempted again,
# so the sums run on records scaled by it and are rescaled by the second. `ref` moves every
# REBASE_HALF_LIVES half-lives (one full pass then), which keeps the first factor within
# float32 range (old records underflow to 0, as their discount does).
REBASE_HALF_LIVES = 32


def _decay(last: np.ndarray, now: int, half_life: float) -> tuple[np.ndarray, np.float32]:
    """(2^((l - ref) / h) per task, 2^(-(now - 1 - ref) / h)) for last steps `last` (float32):
    their product is `discount`."""
    h = np.float32(half_life)
    last = np.minimum(last, np.float32(now - 1))
    span = REBASE_HALF_LIVES * half_life
    ref = np.float32(np.floor((now - 1) / span) * span)
    last -= ref
    last /= h
    return np.exp2(last), np.exp2(np.float32(ref - (now - 1)) / h)


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
    last = stats["last_step"].to_numpy(dtype=np.float32)
    now = current_step(stats)
    stale = np.maximum(np.float32(now) - last, np.float32(0.0))  # = staleness(stats)
    failures = attempts - successes
    decays = half_life is not None and half_life > 0
    if decays:
        scale, factor = _decay(last, now, half_life)
        scaled = np.stack([successes * scale, failures * scale], axis=1)
        weight = scale * factor  # = discount(stale, half_life)
        successes, failures, attempts = successes * weight, failures * weight, attempts * weight
    alpha = successes + np.float32(prior[0])
    beta = failures + np.float32(prior[1])
    if edges is not None and edges.src.size and borrow_cap > 0:
        if decays:
            sums, rescale = edges.neighbour_sums(scaled), factor
        else:
            sums, rescale = edges.neighbour_sums(np.stack([successes, failures], axis=1)), None
        _borrow(alpha, beta, sums, attempts, borrow_cap, rescale)
    return Estimates(alpha=alpha, beta=beta, staleness=stale, attempts=attempts)


def _borrow(
    alpha: np.ndarray,
    beta: np.ndarray,
    sums: np.ndarray,
    attempts: np.ndarray,
    cap: float,
    rescale: np.float32 | None = None,
) -> None:
    """Add the neighbours' (successes, failures) in `sums` (times `rescale`) to the
    posteriors, scaled so that own plus borrowed attempts are worth at most `cap` (own
    evidence comes first). In float32 and in place: this runs over the whole bank per call."""
    bs = sums[:, 0].astype(np.float32)
    bf = sums[:, 1].astype(np.float32)
    if rescale is not None:
        bs *= rescale
        bf *= rescale
    room = np.float32(cap) - attempts
    np.maximum(room, np.float32(0.0), out=room)
    # scale = min(1, room / borrowed) = room / max(borrowed, room); the floor keeps 0 / 0
    # (no room, nothing borrowed) at 0.
    total = bs + bf
    np.maximum(total, room, out=total)
    np.maximum(total, np.float32(1e-30), out=total)
    room /= total
    bs *= room
    bf *= room
    alpha += bs
    beta += bf
