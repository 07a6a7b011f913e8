"""`measure`: how healthy a round's proposing was, in the figures every view shows.

Self-play fails quietly: the proposer can keep writing tasks that are admitted but that the
solver always or never solves (no learning signal), or drift to variations of one program
(outside replications of Absolute Zero saw the proposer's tasks lose diversity over
training). A round therefore reports, besides what was admitted and why the rest was not:

- `yield_rate`: admitted / proposed;
- `frontier`: admitted tasks the solver solved sometimes but not always (0 < p < 1 over the
  round's attempts), and `frontier_yield`: frontier / proposed;
- `shapes`: distinct program shapes among the admitted (the normalized AST with every
  constant replaced by its type, so `x + 1` and `x + 2` are one shape), and `diversity`:
  shapes / admitted;
- `distance_within`: the mean cosine distance between the round's admitted tasks, and
  `distance_to_bank`: the mean distance from each to its nearest task admitted before
  (the bank's stored vectors, the ones near-duplicate search uses);
- `near_duplicate_rate`: proposals turned away as exact or near duplicates / proposed.

`falling` says whether a figure fell two rounds running, which the commands warn about.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from selfplay.admission.normalize import program_shape
from task_bank.store import Bank

FIELDS = (
    "yield_rate",
    "frontier",
    "frontier_yield",
    "shapes",
    "diversity",
    "distance_within",
    "distance_to_bank",
    "near_duplicate_rate",
)
WATCHED = ("diversity", "frontier_yield")  # a fall of either two rounds running is warned of


def _distances(bank: Bank, new_ids: list[str]) -> tuple[float | None, float | None]:
    keys, vectors = bank.vectors()
    if not len(keys) or not new_ids:
        return None, None
    by_id = {tid: k for k, tid in bank.task_ids_by_key().items()}
    new_keys = {by_id[i] for i in new_ids if i in by_id}
    mask = np.isin(keys, list(new_keys))
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    new, old = unit[mask], unit[~mask]
    within = None
    if len(new) > 1:
        sims = new @ new.T
        n = len(new)
        within = float(1 - (sims.sum() - np.trace(sims)) / (n * (n - 1)))
    to_bank = float(np.mean(1 - (new @ old.T).max(axis=1))) if len(old) and len(new) else None
    return within, to_bank


def measure(
    bank: Bank,
    new_ids: list[str],
    proposed: int,
    rejected: dict[str, int],
    pass_counts: dict[str, tuple[int, int]],
) -> dict[str, Any]:
    """The round's health figures (see the module's docstring); rates are None where
    nothing was proposed or admitted."""
    admitted = len(new_ids)
    frontier = 0
    for i in new_ids:
        attempts, successes = pass_counts.get(i, (0, 0))
        frontier += 0 < successes < attempts
    shapes = len({program_shape(t.program) for t in (bank.get(i) for i in new_ids) if t})
    within, to_bank = _distances(bank, new_ids)
    dups = rejected.get("duplicate", 0) + rejected.get("near_duplicate", 0)

    def rate(n: int, d: int) -> float | None:
        return round(n / d, 4) if d else None

    return {
        "yield_rate": rate(admitted, proposed),
        "frontier": frontier,
        "frontier_yield": rate(frontier, proposed),
        "shapes": shapes,
        "diversity": rate(shapes, admitted),
        "distance_within": None if within is None else round(within, 4),
        "distance_to_bank": None if to_bank is None else round(to_bank, 4),
        "near_duplicate_rate": rate(dups, proposed),
    }


def falling(history: list[dict[str, Any]], field: str) -> bool:
    """Whether `field` fell in each of the last two rounds of `history` (oldest first)."""
    values = [row.get(field) for row in history[-3:]]
    if len(values) < 3 or any(v is None for v in values):
        return False
    return values[0] > values[1] > values[2]
