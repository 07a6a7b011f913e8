"""Train a simulated solver under each scheduler and count the rollouts it needs.

One run: a fresh `Learner` in a grown `World` (see `curricula.worlds` and
`curricula.learner`), a scheduler choosing `batch_tasks` tasks per step with `group_size`
rollouts each, until the held-out success first reaches `target` or the budget
`max_rollouts` is spent (then the run did not reach it).

Every scheduler sees the same inputs a real run would: the per-task attempt statistics and
the difficulty graph (the tasks' listed prerequisites as lineage edges, kNN similarity from
the embeddings, and observed difficulty order, refreshed every `graph_every` steps), never
the latent abilities, difficulties, needs or the trivial/impossible flags. Every scheduler
runs with its defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from curricula.base import make_scheduler
from curricula.graph import DifficultyGraph
from curricula.learner import Learner
from curricula.worlds import Structure, World, grow_world

SCHEDULERS = ("uniform", "easy_to_hard", "dapo_filter", "learnability", "plr", "frontier")


@dataclass(slots=True)
class SimConfig:
    """What the worlds of one simulation share: bank size, the learner's gate (see
    `curricula.learner`), the steps and the target; the rest is each `Structure`'s."""

    n_tasks: int = 4000
    n_heldout: int = 1000
    knn: int = 5
    group_size: int = 8
    batch_tasks: int = 64
    lr: float | None = None  # None: each structure's own
    ready_at: float = 0.7
    unready_penalty: float = 5.0
    target: float = 0.6
    max_rollouts: int = 2_000_000
    graph_every: int = 20
    schedulers: tuple[str, ...] = SCHEDULERS


@dataclass(slots=True)
class RunResult:
    scheduler: str
    seed: int
    rollouts_to_target: int | None
    curve_rollouts: list[int] = field(default_factory=list)
    curve_success: list[float] = field(default_factory=list)
    useful_share: float = 0.0  # share of groups with mixed outcomes


def make_world(cfg: SimConfig, structure: Structure, seed: int) -> World:
    """World `seed` of `structure` (the same world for every scheduler)."""
    return grow_world(structure, cfg.n_tasks, cfg.n_heldout, np.random.default_rng([seed, 0]))


def task_ids(n: int) -> pd.Index:
    return pd.Index([f"t{i:06d}" for i in range(n)], dtype=object, name="task_id")


def build_graph(world: World, cfg: SimConfig, ids: list[str]) -> DifficultyGraph:
    """The graph a real bank would have: task records, listed prerequisites (as lineage) and
    kNN neighbour lists."""
    graph = DifficultyGraph()
    graph.add_tasks({"id": tid, "kind": "codegen"} for tid in ids)
    graph.add_lineage((ids[u], ids[v]) for u, v in world.prerequisites.tolist())
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


def train(
    world: World,
    structure: Structure,
    cfg: SimConfig,
    scheduler: str,
    seed: int,
    graph: DifficultyGraph | None = None,
) -> RunResult:
    """Train a fresh simulated solver under one scheduler until target or budget."""
    rng = np.random.default_rng([seed, 1])  # same rollout noise stream for every scheduler
    sched = make_scheduler(scheduler, seed=seed)
    ids = task_ids(cfg.n_tasks)
    base = graph if graph is not None else build_graph(world, cfg, ids.tolist())
    graph = DifficultyGraph(base.graph.copy())  # each run adds its own order edges
    learner = Learner(
        world,
        lr=cfg.lr if cfg.lr is not None else structure.lr,
        transfer=structure.transfer,
        ready_at=cfg.ready_at,
        unready_penalty=cfg.unready_penalty,
    )
    attempts = np.zeros(cfg.n_tasks, dtype=np.int64)
    successes = np.zeros(cfg.n_tasks, dtype=np.int64)
    last_step = np.full(cfg.n_tasks, -1, dtype=np.int64)
    result = RunResult(scheduler=scheduler, seed=seed, rollouts_to_target=None)
    rollouts, mixed, groups, step = 0, 0, 0, 0
    while rollouts < cfg.max_rollouts:
        stats = pd.DataFrame(
            {"attempts": attempts, "successes": successes, "last_step": last_step}, index=ids
        )
        if step % cfg.graph_every == 0 and step > 0:
            graph.update_stats(stats, annotate=False)
        chosen = ids.get_indexer(sched.select(stats, cfg.batch_tasks, graph=graph.graph))
        wins = rng.binomial(cfg.group_size, learner.solve_prob(chosen))
        attempts[chosen] += cfg.group_size
        successes[chosen] += wins
        last_step[chosen] = step
        signal = learner.learn(chosen, wins, cfg.group_size)
        mixed += int(np.count_nonzero(signal))
        groups += len(chosen)
        rollouts += len(chosen) * cfg.group_size
        step += 1
        success = learner.heldout_success()
        result.curve_rollouts.append(rollouts)
        result.curve_success.append(success)
        if success >= cfg.target:
            result.rollouts_to_target = rollouts
            break
    result.useful_share = mixed / max(groups, 1)
    return result


def run_seed(
    cfg: SimConfig,
    structure: Structure,
    seed: int,
    progress: Callable[[int, str], None] | None = None,
) -> list[RunResult]:
    """Every scheduler of `cfg` on world `seed` of `structure`."""
    world = make_world(cfg, structure, seed)
    graph = build_graph(world, cfg, task_ids(cfg.n_tasks).tolist())
    runs = []
    for name in cfg.schedulers:
        if progress is not None:
            progress(seed, name)
        runs.append(train(world, structure, cfg, name, seed, graph))
    return runs


def run_simulation(
    cfg: SimConfig,
    seeds: int = 5,
    progress: Callable[[int, str], None] | None = None,
    structure: Structure | None = None,
) -> list[RunResult]:
    """Every scheduler on `seeds` worlds of one structure (default: `lineage`)."""
    from curricula.worlds import get_structure

    structure = structure if structure is not None else get_structure("lineage")
    return [r for seed in range(seeds) for r in run_seed(cfg, structure, seed, progress)]


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
    return out
