"""The simulated solver: an ability per concept, held back by the concepts it needs.

- P(solve task t) = sigmoid(ability[c] - difficulty[t] - penalty[c]) for t's concept c;
  trivial tasks are always solved, impossible ones never.
- A concept's mastery is its expected success on a task of average difficulty. A concept
  that needs others is ready once the mean mastery of those reaches `ready_at`; below that,
  its penalty grows linearly to `unready_penalty` (at mastery 0). So a task is learnable
  only once enough of its prerequisites' skill is acquired, which is what makes a
  prerequisite graph worth reading; one weak needed concept of several slows a concept
  down without locking it.
- As in GRPO, a group of rollouts that all agree teaches nothing; a mixed group with pass
  fraction q raises its concept's ability by `lr * 2 sqrt(q (1 - q))` (the mean absolute
  group-normalised advantage) and every other concept's by `transfer` times that.
- Held-out success is the expected success on the world's held-out tasks (never trivial or
  impossible, which would only add a constant), penalties included.

Worlds without needs (the `lineage` layout) reduce to the first simulation's learner.
"""

from __future__ import annotations

import numpy as np

from curricula.worlds import World


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class Learner:
    """The latent state of one simulated solver in one world."""

    def __init__(
        self,
        world: World,
        *,
        lr: float,
        transfer: float,
        ready_at: float = 0.7,
        unready_penalty: float = 5.0,
    ) -> None:
        self.world = world
        self.lr = lr
        self.transfer = transfer
        self.ready_at = ready_at
        self.unready_penalty = unready_penalty
        self.ability = np.zeros(world.n_concepts)
        n = world.n_concepts
        counts = np.bincount(world.concept, minlength=n)
        self.mean_difficulty = np.bincount(
            world.concept, weights=world.difficulty, minlength=n
        ) / np.maximum(counts, 1)
        self.penalty = np.zeros(n)
        self._levels = int(world.concept_level.max()) + 1 if n else 0
        self._needs_of = np.bincount(world.needs[:, 1], minlength=n) if world.needs.size else None
        self._refresh()

    def _refresh(self) -> None:
        """Penalties level by level: a concept's needs all sit below it."""
        if self._needs_of is None:
            return
        w = self.world
        src, dst = w.needs[:, 0], w.needs[:, 1]
        for lv in range(1, self._levels):
            mastery = sigmoid(self.ability - self.mean_difficulty - self.penalty)
            at = w.concept_level[dst] == lv
            total = np.bincount(dst[at], weights=mastery[src[at]], minlength=w.n_concepts)
            mine = w.concept_level == lv
            ready = np.minimum(total[mine] / np.maximum(self._needs_of[mine], 1), self.ready_at)
            self.penalty[mine] = self.unready_penalty * (1.0 - ready / self.ready_at)

    def solve_prob(self, tasks: np.ndarray) -> np.ndarray:
        w = self.world
        c = w.concept[tasks]
        p = sigmoid(self.ability[c] - w.difficulty[tasks] - self.penalty[c])
        return np.where(w.trivial[tasks], 1.0, np.where(w.impossible[tasks], 0.0, p))

    def learn(self, tasks: np.ndarray, wins: np.ndarray, group_size: int) -> np.ndarray:
        """Update the abilities from one step's groups; returns each group's signal."""
        q = wins / group_size
        mixed = (wins > 0) & (wins < group_size)
        signal = np.where(mixed, 2.0 * np.sqrt(q * (1.0 - q)), 0.0)
        n = self.world.n_concepts
        own = np.bincount(self.world.concept[tasks], weights=signal, minlength=n)
        self.ability += self.lr * ((1.0 - self.transfer) * own + self.transfer * own.sum())
        self._refresh()
        return signal

    def heldout_success(self) -> float:
        w = self.world
        c = w.heldout_concept
        return float(np.mean(sigmoid(self.ability[c] - w.heldout_difficulty - self.penalty[c])))
