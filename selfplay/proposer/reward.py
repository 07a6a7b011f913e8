"""The proposer's reinforcement-learning reward for one batch of proposals.

Absolute Zero's proposer reward, with R-Zero's repetition penalty:
- a proposal admission turned away (any reason: unparseable, a duplicate of the bank or of
  another proposal of the batch, a benchmark look-alike) scores `REJECTED` (-1);
- an admitted task the solver passed in a share `acc` of its attempts scores `1 - acc` when
  `0 < acc < 1` (the frontier: it can be learnt), `OUTSIDE` (-0.5) when it always or never
  passed (nothing to learn from it);
- minus `penalty x |cluster| / batch`, where a proposal's cluster is every proposal of the
  batch with the same normalised program, constants abstracted (`program_shape`): a policy
  that writes one program over and over pays for each copy even where admission's
  deduplication (exact and behavioural) lets variants with other constants through.

`group_advantages` turns rewards into GRPO's group-relative advantages: each proposal is
compared only with the others written from the same prompt (the same references).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from selfplay.admission.normalize import program_shape

REJECTED = -1.0
OUTSIDE = -0.5


@dataclass(slots=True)
class ProposalScore:
    """One proposal's reward and what made it."""

    reward: float
    base: float  # before the repetition penalty
    penalty: float
    admitted: bool
    frontier: bool  # admitted, and the solver passed it sometimes but not always
    pass_rate: float | None  # the solver's, over its attempts; None when not admitted


def score_proposals(
    admitted: Sequence[bool],
    counts: Sequence[tuple[int, int] | None],
    programs: Sequence[str | None],
    penalty: float = 1.0,
) -> list[ProposalScore]:
    """The reward of each proposal of one batch: whether admission kept it, the solver's
    (attempts, successes) on the task it became (None when not admitted or not attempted),
    and its program (the repetition penalty's clusters span the whole batch)."""
    if not len(admitted) == len(counts) == len(programs):
        raise ValueError("admitted, counts and programs must have one entry per proposal")
    shapes = [program_shape(p) if p else None for p in programs]
    sizes = Counter(s for s in shapes if s is not None)
    batch = len(programs)
    scores = []
    for kept, count, shape in zip(admitted, counts, shapes, strict=True):
        rate, frontier = None, False
        if not kept or count is None or count[0] == 0:
            base = REJECTED if not kept else OUTSIDE
        else:
            attempts, successes = count
            rate = successes / attempts
            frontier = 0 < successes < attempts
            base = 1.0 - rate if frontier else OUTSIDE
        cut = penalty * sizes[shape] / batch if shape is not None else 0.0
        scores.append(ProposalScore(base - cut, base, cut, bool(kept), frontier, rate))
    return scores


def group_advantages(
    rewards: Sequence[float], groups: Sequence[int], eps: float = 1e-4
) -> list[float]:
    """(reward - the group's mean) / (the group's standard deviation + eps) for each entry;
    a group whose rewards are all equal gives 0 to each (it says nothing about which way
    to move)."""
    if len(rewards) != len(groups):
        raise ValueError("one group id per reward")
    members: dict[int, list[float]] = {}
    for r, g in zip(rewards, groups, strict=True):
        members.setdefault(g, []).append(float(r))
    stats = {}
    for g, values in members.items():
        mean = sum(values) / len(values)
        std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        stats[g] = (mean, std)
    out = []
    for r, g in zip(rewards, groups, strict=True):
        mean, std = stats[g]
        out.append(0.0 if std < 1e-12 else (float(r) - mean) / (std + eps))
    return out
