"""Read a task bank into the plain inputs the curriculum needs, and summarise it.

This is the only module that knows the bank: it turns a `task_bank.store.Bank` into a
`BankView` (solve statistics, task records, kNN neighbour lists, per-round solve rates),
from which `DifficultyGraph` and the schedulers work without knowing how the bank stores
anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from curricula.frontier import frontier_mask
from curricula.graph import DifficultyGraph
from curricula.posterior import estimate
from task_bank.vectors import NearDupIndex

if TYPE_CHECKING:
    from task_bank.store import Bank


@dataclass(slots=True)
class BankView:
    """What the curriculum reads from a bank, as plain data."""

    stats: pd.DataFrame  # indexed by task id: attempts, successes, last_step
    tasks: list[dict[str, Any]]  # id, kind, tags, parents
    neighbours: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    rounds: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["round_id", "attempts", "successes"])
    )


def read_bank(
    bank: Bank, *, solver: str | None = None, knn: int = 5, min_similarity: float = 0.3
) -> BankView:
    """Statistics, task records, kNN neighbours (faiss, cosine) and per-round solve rates."""
    stats = bank.solve_stats(solver)
    tasks = [
        {"id": t.id, "kind": t.kind, "tags": list(t.tags), "parents": list(t.parent_ids)}
        for t in bank.tasks()
    ]
    return BankView(
        stats=stats,
        tasks=tasks,
        neighbours=_neighbours(bank, set(stats.index), knn, min_similarity),
        rounds=_rounds(bank, solver),
    )


def _neighbours(
    bank: Bank, known: set[str], knn: int, min_similarity: float
) -> dict[str, list[tuple[str, float]]]:
    keys, vectors = bank.vectors()
    if len(keys) < 2 or knn < 1:
        return {}
    key_to_id = bank.task_ids_by_key()
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1.0)
    index = NearDupIndex(unit.shape[1])
    index.add(keys, unit)
    out: dict[str, list[tuple[str, float]]] = {}
    for key, hits in zip(keys.tolist(), index.search(unit, min_similarity, k=knn + 1), strict=True):
        tid = key_to_id.get(key)
        if tid not in known:
            continue
        near = [(key_to_id[k], s) for k, s in hits if k != key and key_to_id.get(k) in known]
        if near:
            out[tid] = near[:knn]
    return out


def _rounds(bank: Bank, solver: str | None) -> pd.DataFrame:
    """Per-round solve rate of the solver (of every solver when None)."""
    rows = bank.round_totals(solver=solver)
    frame = pd.DataFrame(rows, columns=["round_id", "attempts", "successes"])
    frame["solve_rate"] = frame["successes"] / frame["attempts"].where(frame["attempts"] > 0)
    return frame


def build_graph(view: BankView, graph: DifficultyGraph | None = None) -> DifficultyGraph:
    """Add the view's tasks, lineage and neighbours to `graph` (or a new one), then its stats."""
    graph = graph if graph is not None else DifficultyGraph()
    known = set(view.stats.index)
    graph.add_tasks({**t, "parents": [p for p in t["parents"] if p in known]} for t in view.tasks)
    graph.add_neighbours(view.neighbours)
    graph.update_stats(view.stats)
    return graph


def bank_graph(
    bank: Bank, *, solver: str | None = None, knn: int = 5, save: bool = True
) -> tuple[BankView, DifficultyGraph]:
    """The bank's difficulty graph, grown to its current state: load the saved graph, add new
    tasks, lineage, neighbours and order edges, and (with `save`) store it back in the bank.
    This is what a run calls once per round before `Scheduler.select(..., graph=graph.graph)`."""
    from curricula.graph_store import load_graph, save_graph

    view = read_bank(bank, solver=solver, knn=knn)
    graph = build_graph(view, load_graph(bank))
    if save:
        save_graph(graph, bank)
    return view, graph


def summarize(view: BankView, graph: DifficultyGraph, *, mastery: float = 0.8) -> dict[str, Any]:
    """Frontier tasks, the distribution of expected reward variance E[p(1-p)] and skill
    coverage, as plain data."""
    stats = view.stats
    from curricula.edges import compile_edges

    edges = compile_edges(graph.graph, stats.index)
    est = estimate(stats, edges).frame(stats.index)
    on_frontier = frontier_mask(stats, edges, mastery=mastery)
    mastered = estimate(stats).mean >= mastery
    frontier = est[on_frontier].sort_values("expected_variance", ascending=False)
    skills = {tid: skill for skill, ids in graph.skill_clusters().items() for tid in ids}
    per_task = pd.DataFrame(
        {
            "skill": [skills.get(t, "-") for t in stats.index],
            "attempted": stats["attempts"].to_numpy() > 0,
            "mastered": mastered,
            "frontier": on_frontier,
            "pass_rate": est["pass_rate"].to_numpy(),
        },
        index=stats.index,
    )
    coverage = (
        per_task.groupby("skill")
        .agg(
            tasks=("attempted", "size"),
            attempted=("attempted", "sum"),
            mastered=("mastered", "sum"),
            frontier=("frontier", "sum"),
            pass_rate=("pass_rate", "mean"),
        )
        .sort_values("tasks", ascending=False)
    )
    edges_by_relation = pd.Series(
        [d.get("relation", "?") for _, _, d in graph.graph.edges(data=True)], dtype=object
    ).value_counts()
    hist, bin_edges = np.histogram(est["expected_variance"], bins=10, range=(0.0, 0.25))
    return {
        "tasks": len(stats),
        "attempted": int((stats["attempts"] > 0).sum()),
        "mastered": int(mastered.sum()),
        "frontier_size": int(on_frontier.sum()),
        "frontier": [
            {"id": tid, **{c: _plain(row[c]) for c in ("pass_rate", "expected_variance")}}
            | {"attempts": int(stats.at[tid, "attempts"]), "skill": skills.get(tid, "-")}
            for tid, row in frontier.iterrows()
        ],
        "expected_variance_histogram": {
            f"{lo:.3f}-{hi:.3f}": int(n)
            for lo, hi, n in zip(bin_edges[:-1], bin_edges[1:], hist, strict=True)
        },
        "skills": {
            str(skill): {c: _plain(v) for c, v in row.items()}
            for skill, row in coverage.to_dict("index").items()
        },
        "edges": {str(k): int(v) for k, v in edges_by_relation.items()},
        "rounds": [
            {c: _plain(v) for c, v in row.items()} for row in view.rounds.to_dict("records")
        ],
    }


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars unwrapped, floats rounded, NaN as None."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return None if value != value else round(value, 4)
    return value
