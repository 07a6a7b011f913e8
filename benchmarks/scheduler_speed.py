"""How long `Scheduler.select` takes on a big bank, side by side with uniform.

Target (issue 5): choosing a batch of 512 from a bank of 1,000,000 tasks takes <= 100 ms.

    python benchmarks/scheduler_speed.py                 # 1M tasks, k=512, with a graph
    python benchmarks/scheduler_speed.py --half-life 20  # old records discounted
    python benchmarks/scheduler_speed.py --tasks 100000 --no-graph --json

The bank's statistics are random (0 to 16 attempts per task, a third never attempted). The
graph, when on, has one lineage edge per task and one similarity pair per task (about 3M
directed edges in networkx), the shape a grown bank has. Graph-aware schedulers compile the
graph into numpy arrays on the first call and reuse them while the graph is unchanged; the
first call is reported separately. A peer for weighted selection is pandas'
`DataFrame.sample(k, weights=...)` with learnability weights (the obvious hand-rolled way).
Each figure is the median of `--repeats` timed calls after one warm-up call; before each call
the previous batch's tasks get 8 more attempts and the bank hands out a fresh frame, as in a
run (preparing that frame is not timed). With `--half-life`, the schedulers that take one
(the posterior-based ones) discount old records; the timed steps follow the bank's last
steps (0 to 999) directly, and a full recomputation of the neighbour sums falls due once
every 32 half-lives (a rebase of the discount's scale): on the first call here, reported apart.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import networkx as nx
import numpy as np
import pandas as pd

from curricula import estimate, make_scheduler, scheduler_names


def make_stats(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    attempts = np.where(rng.random(n) < 1 / 3, 0, rng.integers(1, 17, n))
    successes = rng.binomial(attempts, rng.random(n))
    last = np.where(attempts > 0, rng.integers(0, 1000, n), -1)
    ids = pd.Index([f"task-{i:07d}" for i in range(n)], name="task_id")  # str, as the bank gives
    return pd.DataFrame(
        {"attempts": attempts, "successes": successes, "last_step": last}, index=ids
    )


def make_graph(ids: pd.Index, seed: int = 0) -> nx.DiGraph:
    rng = np.random.default_rng(seed)
    n = len(ids)
    ids = ids.tolist()
    parents = (rng.random(n) * np.arange(n)).astype(np.int64)  # a random earlier task
    near = rng.integers(0, n, n)
    graph = nx.DiGraph(version=0)  # as DifficultyGraph keeps it: changes bump the version
    graph.add_nodes_from(ids)
    graph.add_edges_from(
        ((ids[p], ids[c]) for c, p in enumerate(parents.tolist()) if c > 0),
        relation="lineage",
        prerequisite=True,
    )
    for u, v in zip(ids, near.tolist(), strict=True):
        if u != ids[v]:
            graph.add_edge(u, ids[v], relation="similar", prerequisite=False, weight=0.9)
            graph.add_edge(ids[v], u, relation="similar", prerequisite=False, weight=0.9)
    return graph


def next_stats(
    stats: pd.DataFrame, chosen: list, step: int, rng: np.random.Generator
) -> pd.DataFrame:
    """The bank after one step: the chosen tasks got 8 more attempts. A fresh frame with a
    fresh index, as the bank hands out each step."""
    pos = stats.index.get_indexer(chosen)
    attempts = stats["attempts"].to_numpy().copy()
    successes = stats["successes"].to_numpy().copy()
    last = stats["last_step"].to_numpy().copy()
    attempts[pos] += 8
    successes[pos] += rng.binomial(8, 0.5, len(pos))
    last[pos] = step
    index = pd.Index(stats.index.to_numpy().copy(), name="task_id")
    columns = {"attempts": attempts, "successes": successes, "last_step": last}
    return pd.DataFrame(columns, index=index)


def timed(sched, stats: pd.DataFrame, k: int, graph, repeats: int) -> dict[str, float]:
    """First call and the median of the following `repeats` calls, wall and CPU time in ms;
    each call sees the bank as the previous call's batch left it (preparing the frame is not
    timed). On a shared machine wall time includes waiting for a core; CPU time does not
    (these numpy passes are single-threaded, so CPU time is the work itself)."""
    rng = np.random.default_rng(1)
    wall, cpu = time.perf_counter(), time.process_time()
    chosen = sched.select(stats, k, graph=graph)
    first = (time.perf_counter() - wall) * 1000
    first_cpu = (time.process_time() - cpu) * 1000
    walls, cpus = [], []
    for step in range(repeats):
        stats = next_stats(stats, chosen, 1000 + step, rng)
        wall, cpu = time.perf_counter(), time.process_time()
        chosen = sched.select(stats, k, graph=graph)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return {
        "first_ms": first,
        "first_cpu_ms": first_cpu,
        "median_ms": statistics.median(walls),
        "median_cpu_ms": statistics.median(cpus),
    }


class PandasSample:
    """The peer: pandas' weighted sampling without replacement, on the same learnability."""

    def select(self, stats: pd.DataFrame, k: int, graph=None) -> list:
        weights = pd.Series(estimate(stats).expected_variance, index=stats.index)
        return stats.sample(k, weights=weights, random_state=0).index.tolist()


def build(name: str, half_life: float | None):
    """The scheduler, with the half-life if it takes one; and the half-life it got."""
    if half_life is not None:
        try:
            return make_scheduler(name, seed=0, half_life=half_life), half_life
        except TypeError:  # uniform and dapo_filter have no posterior to discount
            pass
    return make_scheduler(name, seed=0), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--graph", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--half-life", type=float, default=None, help="Steps; default none.")
    parser.add_argument("--schedulers", default=",".join(scheduler_names()), help="Comma list.")
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout.")
    args = parser.parse_args()

    stats = make_stats(args.tasks)
    graph = None
    build_s = None
    if args.graph:
        start = time.perf_counter()
        graph = make_graph(stats.index)
        build_s = time.perf_counter() - start
    rows = []
    names = [n for n in args.schedulers.split(",") if n]
    for name in dict.fromkeys(["uniform", *names]):
        for with_graph in (False, True) if graph is not None else (False,):
            sched, half_life = build(name, args.half_life)  # a fresh graph cache each time
            times = timed(sched, stats, args.k, graph if with_graph else None, args.repeats)
            rows.append({"scheduler": name, "graph": with_graph, "half_life": half_life, **times})
    times = timed(PandasSample(), stats, args.k, None, args.repeats)
    peer = "pandas sample(weights=learnability)"
    rows.append({"scheduler": peer, "graph": False, "half_life": None, **times})
    base = next(r for r in rows if r["scheduler"] == "uniform" and not r["graph"])
    for r in rows:
        r["x_uniform_cpu"] = r["median_cpu_ms"] / base["median_cpu_ms"]
        r["within_100ms_cpu"] = r["median_cpu_ms"] <= 100.0
    result = {
        "tasks": args.tasks,
        "k": args.k,
        "repeats": args.repeats,
        "graph_edges": graph.number_of_edges() if graph is not None else 0,
        "graph_build_s": build_s,
        "half_life": args.half_life,
        "rows": rows,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"select {args.k} from {args.tasks:,} tasks; median of {args.repeats} calls"
        + (f"; graph {result['graph_edges']:,} edges" if graph is not None else "")
        + (f"; half-life {args.half_life:g} steps" if args.half_life else "")
    )
    head = ("scheduler", "graph", "median cpu ms", "median wall ms", "x uniform", "first wall ms")
    print(
        f"{head[0]:36s} {head[1]:>5s} {head[2]:>14s} {head[3]:>15s} {head[4]:>10s} {head[5]:>14s}"
    )
    for r in rows:
        print(
            f"{r['scheduler']:36s} {'yes' if r['graph'] else 'no':>5s} {r['median_cpu_ms']:14.1f} "
            f"{r['median_ms']:15.1f} {r['x_uniform_cpu']:10.1f} {r['first_ms']:14.1f}"
        )


if __name__ == "__main__":
    main()
