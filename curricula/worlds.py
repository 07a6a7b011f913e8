"""Simulated worlds: what the solver must learn, and how faithfully the bank's graph shows it.

A world is a bank of tasks, each exercising one concept (a skill), the prerequisites each
task lists (the graph's prerequisite edges), embeddings (the graph's kNN similarity edges)
and a held-out set drawn the same way. Two generative models, so that a scheduler is judged
on more than one kind of graph:

- `lineage`: the bank as a proposer grows it (the project's first simulation). A few roots
  per skill; every other task is derived from a random earlier task of its skill, with
  difficulty = parent's + Normal(`drift`, `spread`) and embedding = parent's + noise. The
  listed prerequisite is the parent. Skills do not depend on each other.
- `levels`: concepts in `levels` levels of `width`; a concept above level 0 needs
  `concept_needs` concepts below it: in `chain` layout the one before it in its chain, in
  `layers` layout random ones of the level just below, in `dag` layout random ones of any
  lower level (skips). Each task lists `fan_in` random tasks of its concept's needed
  concepts as prerequisites: a dense, redundant picture of one dependency, as lineage,
  similarity and ordering edges give in a real bank. Then the picture is spoilt: a share
  `wrong` of the listed prerequisites is rewired to random tasks and a share `missing` dropped.

In both, a share of tasks is trivial (always solved) and a share impossible (never solved),
picked regardless of structure, so a listed prerequisite may be either. What the learner
does with a world (and why prerequisites matter to it) is in `curricula.learner`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LAYOUTS = ("lineage", "chain", "layers", "dag")


@dataclass(frozen=True, slots=True)
class Structure:
    """How a world is grown; one named row of the simulation's table."""

    name: str
    layout: str = "layers"  # one of LAYOUTS
    levels: int = 5
    width: int = 8  # concepts per level (chains side by side for `chain`)
    concept_needs: int = 2  # concepts a concept above level 0 needs
    fan_in: int = 5  # prerequisite tasks each task above level 0 lists
    wrong: float = 0.0  # share of listed prerequisites rewired to random tasks
    missing: float = 0.0  # share of listed prerequisites dropped
    share_trivial: float = 0.25
    share_impossible: float = 0.25
    spread: float = 0.8  # sd of task difficulty around its concept's
    # lineage layout only
    n_skills: int = 8
    roots_per_skill: int = 5
    drift: float = 0.4
    root_difficulty: float = -1.0
    # the learner in this world (see curricula.learner)
    lr: float = 0.003
    transfer: float = 0.005

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {self.layout!r}.")
        for share in ("wrong", "missing", "share_trivial", "share_impossible"):
            if not 0.0 <= getattr(self, share) <= 1.0:
                raise ValueError(f"{share} must be between 0 and 1.")


@dataclass(slots=True)
class World:
    """A grown world; bank tasks are rows 0..n-1. Only `prerequisites` and `vectors` (and
    the attempts) ever reach a scheduler; the rest is latent."""

    concept: np.ndarray  # concept of each bank task
    difficulty: np.ndarray
    trivial: np.ndarray
    impossible: np.ndarray
    prerequisites: np.ndarray  # (m, 2) listed edges [prerequisite task, task]
    vectors: np.ndarray
    needs: np.ndarray  # (e, 2) latent edges [needed concept, concept]
    concept_level: np.ndarray  # level of each concept (0: needs nothing)
    heldout_concept: np.ndarray
    heldout_difficulty: np.ndarray

    @property
    def n_concepts(self) -> int:
        return int(self.concept_level.shape[0])


def grow_world(
    structure: Structure, n_tasks: int, n_heldout: int, rng: np.random.Generator
) -> World:
    """A world of `n_tasks` bank tasks and `n_heldout` held-out ones, grown as `structure` says."""
    if structure.layout == "lineage":
        return _grow_lineage(structure, n_tasks, n_heldout, rng)
    return _grow_levels(structure, n_tasks, n_heldout, rng)


def _flags(s: Structure, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    u = rng.random(n)
    trivial = u < s.share_trivial
    return trivial, ~trivial & (u < s.share_trivial + s.share_impossible)


def _grow_lineage(s: Structure, n_tasks: int, n_heldout: int, rng: np.random.Generator) -> World:
    n = n_tasks + n_heldout
    skill = rng.integers(0, s.n_skills, n)
    skill[: s.n_skills * s.roots_per_skill] = np.repeat(np.arange(s.n_skills), s.roots_per_skill)
    embed_dim, embed_noise = 32, 0.35
    centroids = rng.standard_normal((s.n_skills, embed_dim))
    difficulty = np.empty(n)
    parent = np.full(n, -1)
    vectors = np.empty((n, embed_dim))
    members: list[list[int]] = [[] for _ in range(s.n_skills)]
    for i in range(n):
        k = skill[i]
        if len(members[k]) < s.roots_per_skill:
            difficulty[i] = s.root_difficulty + rng.normal(0.0, s.spread)
            vectors[i] = centroids[k] + embed_noise * rng.standard_normal(embed_dim)
        else:
            p = members[k][rng.integers(len(members[k]))]
            parent[i] = p
            difficulty[i] = difficulty[p] + rng.normal(s.drift, s.spread)
            vectors[i] = vectors[p] + embed_noise * rng.standard_normal(embed_dim)
        members[k].append(i)
    # Held-out tasks are a random sample of everything grown; the bank never contains them,
    # and lineage edges into the held-out set are unknown to the bank.
    order = rng.permutation(n)
    held, bank = order[:n_heldout], np.sort(order[n_heldout:])
    position = np.full(n, -1)
    position[bank] = np.arange(n_tasks)
    bank_parent = np.where(parent[bank] >= 0, position[np.maximum(parent[bank], 0)], -1)
    child = np.flatnonzero(bank_parent >= 0)
    trivial, impossible = _flags(s, n_tasks, rng)
    return World(
        concept=skill[bank],
        difficulty=difficulty[bank],
        trivial=trivial,
        impossible=impossible,
        prerequisites=np.stack([bank_parent[child], child], axis=1),
        vectors=vectors[bank],
        needs=np.zeros((0, 2), dtype=np.int64),
        concept_level=np.zeros(s.n_skills, dtype=np.int64),
        heldout_concept=skill[held],
        heldout_difficulty=difficulty[held],
    )


def concept_needs(s: Structure, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(needs as [needed, concept] rows, level of each concept); concept c sits at level
    c // width, position c % width."""
    n = s.levels * s.width
    level = np.arange(n) // s.width
    rows = []
    for c in range(s.width, n):
        lv = level[c]
        if s.layout == "chain":
            picks = [c - s.width]
        else:
            lo = 0 if s.layout == "dag" else (lv - 1) * s.width
            pool = np.arange(lo, lv * s.width)
            picks = rng.choice(pool, min(s.concept_needs, pool.shape[0]), replace=False).tolist()
            if s.layout == "dag" and lv > 1 and all(level[p] != lv - 1 for p in picks):
                # at least one need from the level just below, so that levels mean depth
                picks[0] = int(rng.integers((lv - 1) * s.width, lv * s.width))
        rows += [(p, c) for p in picks]
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2), level


def _grow_levels(s: Structure, n_tasks: int, n_heldout: int, rng: np.random.Generator) -> World:
    needs, level = concept_needs(s, rng)
    n_concepts = level.shape[0]
    concept_difficulty = rng.normal(0.0, 0.3, n_concepts)
    concept = rng.permutation(np.arange(n_tasks) % n_concepts)
    difficulty = concept_difficulty[concept] + rng.normal(0.0, s.spread, n_tasks)
    members = [np.flatnonzero(concept == c) for c in range(n_concepts)]
    needed = [needs[needs[:, 1] == c, 0] for c in range(n_concepts)]
    src, dst = [], []
    for t in range(n_tasks):
        pool = needed[concept[t]]
        if pool.shape[0] == 0:
            continue
        candidates = np.concatenate([members[c] for c in pool])
        picks = rng.choice(candidates, min(s.fan_in, candidates.shape[0]), replace=False)
        src.append(picks)
        dst.append(np.full(picks.shape[0], t))
    edges = np.stack([np.concatenate(src), np.concatenate(dst)], axis=1) if src else None
    edges = edges if edges is not None else np.zeros((0, 2), dtype=np.int64)
    edges = _spoil(edges, s, n_tasks, rng)
    # Embeddings: near the concept's centroid, so kNN neighbours share a concept (mostly).
    centroids = rng.standard_normal((n_concepts, 32))
    vectors = centroids[concept] + 0.6 * rng.standard_normal((n_tasks, 32))
    trivial, impossible = _flags(s, n_tasks, rng)
    held_concept = rng.integers(0, n_concepts, n_heldout)
    held_difficulty = concept_difficulty[held_concept] + rng.normal(0.0, s.spread, n_heldout)
    return World(
        concept=concept,
        difficulty=difficulty,
        trivial=trivial,
        impossible=impossible,
        prerequisites=edges,
        vectors=vectors,
        needs=needs,
        concept_level=level,
        heldout_concept=held_concept,
        heldout_difficulty=held_difficulty,
    )


def _spoil(edges: np.ndarray, s: Structure, n_tasks: int, rng: np.random.Generator) -> np.ndarray:
    """Rewire a share `wrong` of the edges to random prerequisites, then drop a share `missing`."""
    edges = edges.copy()
    rewire = rng.random(edges.shape[0]) < s.wrong
    edges[rewire, 0] = rng.integers(0, n_tasks, int(rewire.sum()))
    edges = edges[edges[:, 0] != edges[:, 1]]
    keep = rng.random(edges.shape[0]) >= s.missing
    edges = edges[keep]
    # A rewired edge may duplicate a kept one; the graph holds each pair once anyway.
    return np.unique(edges, axis=0) if edges.shape[0] else edges


# The simulation's worlds: one per row of docs/curricula.md's table. Every knob not named here is
# the default above; `lineage` is the project's first simulation, unchanged.
STRUCTURES = (
    Structure("lineage", layout="lineage", lr=0.0005, transfer=0.1),
    Structure("chains", layout="chain", fan_in=1),
    Structure("layers-5", layout="layers", fan_in=5),
    Structure("layers-20", layout="layers", fan_in=20),
    Structure("layers-30", layout="layers", fan_in=30, concept_needs=3),
    Structure("dag-skips", layout="dag", levels=6, width=6, concept_needs=3, fan_in=10),
    Structure("wrong-40", layout="layers", fan_in=10, wrong=0.4),
    Structure(
        "missing-70", layout="dag", levels=6, width=6, concept_needs=3, fan_in=10, missing=0.7
    ),
    Structure(
        "noisy",
        layout="layers",
        fan_in=10,
        wrong=0.3,
        missing=0.3,
        share_trivial=0.3,
        share_impossible=0.3,
    ),
)


def structure_names() -> list[str]:
    return [s.name for s in STRUCTURES]


def get_structure(name: str) -> Structure:
    for s in STRUCTURES:
        if s.name == name:
            return s
    raise ValueError(f"Unknown structure {name!r}; choose from {', '.join(structure_names())}.")
