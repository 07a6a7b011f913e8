"""Every scheduler on every world structure: medians over seeds, ratios to uniform, targets.

A curriculum has to get better with a graph, never worse, whatever the graph looks like; so
the targets are checked on each structure of `curricula.worlds.STRUCTURES` separately:

- `learnability` needs at most 0.8x the rollouts `uniform` needs (medians over seeds);
- `frontier` at most 0.6x uniform's, and at most 1.05x learnability's.

Worlds are independent, so (structure, seed) jobs run in parallel processes with
`workers > 1`; the results do not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict

from curricula.simulate import RunResult, SimConfig, run_seed, summarize
from curricula.worlds import Structure

# name -> (max ratio to the baseline, baseline)
TARGETS: dict[str, list[tuple[float, str]]] = {
    "learnability": [(0.8, "uniform")],
    "frontier": [(0.6, "uniform"), (1.05, "learnability")],
}


def run_suite(
    cfg: SimConfig,
    structures: list[Structure] | tuple[Structure, ...],
    seeds: int = 5,
    *,
    workers: int = 1,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, list[RunResult]]:
    """Runs per structure name, in seed order then scheduler order."""
    jobs = [(s, seed) for s in structures for seed in range(seeds)]
    done: dict[tuple[str, int], list[RunResult]] = {}
    if workers <= 1:
        for s, seed in jobs:
            if progress is not None:
                progress(s.name, seed)
            done[s.name, seed] = run_seed(cfg, s, seed)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_seed, cfg, s, seed): (s.name, seed) for s, seed in jobs}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                if progress is not None:
                    progress(*futures[future])
    return {s.name: [r for seed in range(seeds) for r in done[s.name, seed]] for s in structures}


def check_targets(schedulers: dict[str, dict]) -> list[dict]:
    """Each target that applies to the schedulers present, with its measured ratio."""
    out = []
    for name, limits in TARGETS.items():
        for limit, baseline in limits:
            if name not in schedulers or baseline not in schedulers:
                continue
            mine, base = schedulers[name]["median"], schedulers[baseline]["median"]
            ratio = mine / base if mine is not None and base else None
            out.append(
                {
                    "scheduler": name,
                    "baseline": baseline,
                    "max_ratio": limit,
                    "ratio": ratio,
                    "met": ratio is not None and ratio <= limit,
                }
            )
    return out


def summarize_suite(
    results: dict[str, list[RunResult]],
    cfg: SimConfig,
    structures: list[Structure] | tuple[Structure, ...],
) -> dict:
    """The whole comparison as plain data: per structure its knobs, every scheduler's
    medians and spread, and the targets."""
    by_name = {s.name: s for s in structures}
    out: dict = {"config": asdict(cfg), "structures": {}}
    for name, runs in results.items():
        summary = summarize(runs, cfg)
        del summary["config"]  # once, at the top
        summary["structure"] = asdict(by_name[name])
        summary["targets"] = check_targets(summary["schedulers"])
        out["structures"][name] = summary
    out["seeds"] = max((len({r.seed for r in runs}) for runs in results.values()), default=0)
    out["all_met"] = all(t["met"] for s in out["structures"].values() for t in s["targets"])
    return out
