"""A simulated learner, trained under each scheduler, to compare rollouts-to-target.

The world (one per seed), as a fair model of self-play RL on code:
- `n_skills` skills; the solver has a latent ability per skill (starts at 0).
- Tasks grow as the proposer grows them: a few roots per skill, every other task derived from
  a random earlier task of its skill (lineage). A derived task's difficulty is its parent's
  plus Normal(`drift`, `spread`): proposers asked for variations tend to make them a little
  harder, but not reliably. Its embedding is its parent's plus noise, so the bank's kNN
  neighbours are textual relatives, which is what a real embedding index returns.
- A share of tasks is trivial (always solved) and a share impossible (never solved: wrong
  or unsatisfiable specs), picked at random regardless of lineage, so lineage and
  similarity do not reveal them.
- P(solve) = sigmoid(ability[skill] - difficulty). A step attempts `batch_tasks` tasks with
  `group_size` rollouts each. As in GRPO, a group whose rollouts all agree carries no
  gradient; a mixed group with pass fraction q moves the skill's ability by
  `lr * 2 * sqrt(q (1 - q))` (the mean absolute group-normalised advantage) and the other
  skills by `transfer` times that.
- Held-out success: expected success on a fresh set of tasks drawn the same way, excluding
  the trivial and impossible ones (they would only add a constant). A run needs the
  rollouts it took to first reach `target`; runs that never do are reported as not reached.

Every scheduler sees the same inputs a real run would: the per-task attempt statistics and
the difficulty graph (lineage, kNN similarity, and observed difficulty order, refreshed
every `graph_every` steps), never the latent difficulties or the trivial/impossible flags.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from curricula.base import make_scheduler
from curricula.graph import DifficultyGraph

# The targets: rollouts to target as a fraction of what uniform needs (medians).
TARGETS = {"learnability": 0.8, "frontier": 0.6}


@dataclass(slots=True)
class SimConfig:
    n_tasks: int = 4000
    n_heldout: int = 1000
    n_skills: int = 8
    roots_per_skill: int = 5
    share_trivial: float = 0.25
    share_impossible: float = 0.25
    drift: float = 0.4
    spread: float = 0.8
    root_difficulty: float = -1.0
    embed_dim: int = 32
    embed_noise: float = 0.35
    knn: int = 5
    group_size: int = 8
    batch_tasks: int = 64
    lr: float = 0.0005
    transfer: float = 0.1
    target: float = 0.6
    max_rollouts: int = 2_000_000
    graph_every: int = 20
    schedulers: tuple[str, ...] = (
        "uniform",
        "easy_to_hard",
        "dapo_filter",
        "learnability",
        "plr",
        "frontier",
    )


@dataclass(slots=True)
class World:
    skill: np.ndarray
    difficulty: np.ndarray
    trivial: np.ndarray
    impossible: np.ndarray
    parent: np.ndarray  # -1 for roots
    vectors: np.ndarray
    heldout_skill: np.ndarray
    heldout_difficulty: np.ndarray


@dataclass(slots=True)
class RunResult:
    scheduler: str
    seed: int
    rollouts_to_target: int | None
    curve_rollouts: list[int] = field(default_factory=list)
    curve_success: list[float] = field(default_factory=list)
    useful_share: float = 0.0  # share of groups with mixed outcomes


def make_world(cfg: SimConfig, rng: np.random.Generator) -> World:
    """Grow a bank of `n_tasks` tasks by lineage (and a held-out set the same way)."""
    n = cfg.n_tasks + cfg.n_heldout
    skill = rng.integers(0, cfg.n_skills, n)
    skill[: cfg.n_skills * cfg.roots_per_skill] = np.repeat(
        np.arange(cfg.n_skills), cfg.roots_per_skill
    )
    centroids = rng.standard_normal((cfg.n_skills, cfg.embed_dim))
    difficulty = np.empty(n)
    parent = np.full(n, -1)
    vectors = np.empty((n, cfg.embed_dim))
    members: list[list[int]] = [[] for _ in range(cfg.n_skills)]
    for i in range(n):
        s = skill[i]
        if len(members[s]) < cfg.roots_per_skill:
            difficulty[i] = cfg.root_difficulty + rng.normal(0.0, cfg.spread)
            vectors[i] = centroids[s] + cfg.embed_noise * rng.standard_normal(cfg.embed_dim)
        else:
            p = members[s][rng.integers(len(members[s]))]
            parent[i] = p
            difficulty[i] = difficulty[p] + rng.normal(cfg.drift, cfg.spread)
            vectors[i] = vectors[p] + cfg.embed_noise * rng.standard_normal(cfg.embed_dim)
        members[s].append(i)
    # Held-out tasks are a random sample of everything grown; the bank never contains them,
    # and lineage edges into the held-out set are unknown to the bank.
    order = rng.permutation(n)
    held, bank = order[: cfg.n_heldout], np.sort(order[cfg.n_heldout :])
    position = np.full(n, -1)
    position[bank] = np.arange(cfg.n_tasks)
    bank_parent = np.where(parent[bank] >= 0, position[np.maximum(parent[bank], 0)], -1)
    flags = rng.random(cfg.n_tasks)
    return World(
        skill=skill[bank],
        difficulty=difficulty[bank],
        trivial=flags < cfg.share_trivial,
        impossible=(flags >= cfg.share_trivial)
        & (flags < cfg.share_trivial + cfg.share_impossible),
        parent=bank_parent,
        vectors=vectors[bank],
        heldout_skill=skill[held],
        heldout_difficulty=difficulty[held],
    )


def task_ids(n: int) -> pd.Index:
    return pd.Index([f"t{i:06d}" for i in range(n)], dtype=object, name="task_id")


def build_graph(world: World, cfg: SimConfig, ids: list[str]) -> DifficultyGraph:
    """The graph a real bank would have: task records, lineage and kNN neighbour lists."""
    graph = DifficultyGraph()
    graph.add_tasks({"id": tid, "kind": "codegen"} for tid in ids)
    graph.add_lineage((ids[p], ids[c]) for c, p in enumerate(world.parent.tolist()) if p >= 0)
    unit = (world.vectors / np.linalg.norm(world.vectors, axis=1, keepdims=True)).astype(np.float32)
    neighbours = {}
    for lo in range(0, len(ids), 2048):  # blocks of rows keep memory flat for big banks
        sims = unit[lo : lo + 2048] @ unit.T
        sims[np.arange(sims.shape[0]), np.arange(lo, lo + sims.shape[0])] = -np.inf
        near = np.argpartition(-sims, cfg.knn, axis=1)[:, : cfg.knn]
        for r, row in enumerate(near.tolist()):
            neighbours[ids[lo + r]] = [(ids[j], float(sims[r, j])) for j in row]
    graph.add_neighbours(neighbours)
    return graph


def heldout_success(world: World, ability: np.ndarray) -> float:
    return float(np.mean(_sigmoid(ability[world.heldout_skill] - world.heldout_difficulty)))


def train(
    world: World, cfg: SimConfig, scheduler: str, seed: int, graph: DifficultyGraph | None = None
) -> RunResult:
    """Train a fresh simulated solver under one scheduler until target or budget."""
    rng = np.random.default_rng([seed, 1])  # same rollout noise stream for every scheduler
    sched = make_scheduler(scheduler, seed=seed)
    ids = task_ids(cfg.n_tasks)
    base = graph if graph is not None else build_graph(world, cfg, ids.tolist())
    graph = DifficultyGraph(base.graph.copy())  # each run adds its own order edges
    attempts = np.zeros(cfg.n_tasks, dtype=np.int64)
    successes = np.zeros(cfg.n_tasks, dtype=np.int64)
    last_step = np.full(cfg.n_tasks, -1, dtype=np.int64)
    ability = np.zeros(cfg.n_skills)
    result = RunResult(scheduler=scheduler, seed=seed, rollouts_to_target=None)
    rollouts, mixed, groups, step = 0, 0, 0, 0
    while rollouts < cfg.max_rollouts:
        stats = pd.DataFrame(
            {"attempts": attempts, "successes": successes, "last_step": last_step}, index=ids
        )
        if step % cfg.graph_every == 0 and step > 0:
            graph.update_stats(stats, annotate=False)
        chosen = ids.get_indexer(sched.select(stats, cfg.batch_tasks, graph=graph.graph))
        p = _sigmoid(ability[world.skill[chosen]] - world.difficulty[chosen])
        p = np.where(world.trivial[chosen], 1.0, np.where(world.impossible[chosen], 0.0, p))
        wins = rng.binomial(cfg.group_size, p)
        attempts[chosen] += cfg.group_size
        successes[chosen] += wins
        last_step[chosen] = step
        q = wins / cfg.group_size
        signal = np.where((wins > 0) & (wins < cfg.group_size), 2.0 * np.sqrt(q * (1.0 - q)), 0.0)
        per_skill = np.bincount(world.skill[chosen], weights=signal, minlength=cfg.n_skills)
        ability += cfg.lr * ((1.0 - cfg.transfer) * per_skill + cfg.transfer * per_skill.sum())
        mixed += int(np.count_nonzero(signal))
        groups += len(chosen)
        rollouts += len(chosen) * cfg.group_size
        step += 1
        success = heldout_success(world, ability)
        result.curve_rollouts.append(rollouts)
        result.curve_success.append(success)
        if success >= cfg.target:
            result.rollouts_to_target = rollouts
            break
    result.useful_share = mixed / max(groups, 1)
    return result


def run_simulation(
    cfg: SimConfig, seeds: int = 5, progress: Callable[[int, str], None] | None = None
) -> list[RunResult]:
    """Every scheduler on the same `seeds` worlds (world s is grown from seed s)."""
    runs = []
    for seed in range(seeds):
        world = make_world(cfg, np.random.default_rng([seed, 0]))
        graph = build_graph(world, cfg, task_ids(cfg.n_tasks).tolist())
        for name in cfg.schedulers:
            if progress is not None:
                progress(seed, name)
            runs.append(train(world, cfg, name, seed, graph))
    return runs


def summarize(runs: list[RunResult], cfg: SimConfig) -> dict:
    """Median and spread of rollouts-to-target per scheduler, and the ratio to uniform."""
    out: dict = {"config": asdict(cfg), "schedulers": {}}
    for name in cfg.schedulers:
        mine = [r for r in runs if r.scheduler == name]
        reached = [r.rollouts_to_target for r in mine if r.rollouts_to_target is not None]
        # Runs that never reach the target count as the budget: a lower bound, so the median
        # is only reported when at least half the runs reached it.
        values = np.array([r.rollouts_to_target or cfg.max_rollouts for r in mine], dtype=float)
        med = float(np.median(values)) if len(reached) * 2 > len(mine) else None
        out["schedulers"][name] = {
            "runs": [r.rollouts_to_target for r in mine],
            "reached": len(reached),
            "median": med,
            "q25": float(np.percentile(values, 25)),
            "q75": float(np.percentile(values, 75)),
            "min": float(values.min()),
            "max": float(values.max()),
            "useful_share": float(np.mean([r.useful_share for r in mine])),
        }
    base = out["schedulers"].get("uniform", {}).get("median")
    for stats in out["schedulers"].values():
        stats["ratio_to_uniform"] = (
            stats["median"] / base if base and stats["median"] is not None else None
        )
    out["targets"] = {
        name: {
            "max_ratio": limit,
            "ratio": out["schedulers"][name]["ratio_to_uniform"],
            "met": out["schedulers"][name]["ratio_to_uniform"] is not None
            and out["schedulers"][name]["ratio_to_uniform"] <= limit,
        }
        for name, limit in TARGETS.items()
        if name in out["schedulers"] and "uniform" in out["schedulers"]
    }
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))
