"""The verifier on Ray against the local verifier, same rows, same run, same sandbox workers.

Rows: HumanEval's 492 benchmark rows (`verify_humaneval.make_rows`: canonical, empty and
swapped solutions). Graders, one after the other, each with `--workers` sandboxed workers in
all: the local `Verifier`; a `RayVerifier` with 1 actor owning them all; a `RayVerifier` with 2
actors sharing them, on a loopback Ray cluster started here. Each grades the rows `--repeat`
times after a warm-up. Reported per grader: rows/s, the wall-clock overhead per row against
the local verifier (difference of seconds per row), and the driver's own CPU per row (what
bounds the rows one driver can dispatch). Also measured: the round trip of one Ray call to an
actor (no rows), and the pickled size of a row and of its verdict (what crosses the network).

    python benchmarks/ray_verify.py [--workers 2] [--repeat 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_humaneval import load_problems, make_rows, to_verifier_row  # noqa: E402


def _own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(verifier, rows: list[dict], repeat: int) -> dict:
    with verifier as v:
        v.start()
        v.grade(rows[:32])  # warm every worker
        cpu0, t0 = _own_cpu_s(), time.perf_counter()
        for _ in range(repeat):
            verdicts = v.grade(rows)
        elapsed, cpu = time.perf_counter() - t0, _own_cpu_s() - cpu0
    n = repeat * len(rows)
    return {
        "rows_per_s": n / elapsed,
        "s_per_row": elapsed / n,
        "driver_cpu_ms_per_row": 1000 * cpu / n,
        "verdicts": [(x.id, x.status, x.tests_passed, x.detail, x.signals) for x in verdicts],
    }


def ray_call_round_trip_ms(calls: int = 300) -> float:
    import ray

    @ray.remote(num_cpus=0)
    class Echo:
        def ping(self, x):
            return x

    actor = Echo.remote()
    ray.get(actor.ping.remote(0))
    times = []
    for i in range(calls):
        t = time.perf_counter()
        ray.get(actor.ping.remote(i))
        times.append(time.perf_counter() - t)
    ray.kill(actor)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2, help="sandboxed workers, in all")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from selfplay.verifier import Verifier
    from selfplay.verifier.cluster import RayVerifier, connect

    rows = [to_verifier_row(i, p, c) for i, (p, c, _) in enumerate(make_rows(load_problems()))]
    t = time.perf_counter()
    connect("local")
    cluster_start_s = time.perf_counter() - t
    w = args.workers
    graders = {
        "local": lambda: Verifier(w, timeout_s=3.0),
        "ray_1_actor": lambda: RayVerifier(actors=1, workers=w, timeout_s=3.0),
        "ray_2_actors": lambda: RayVerifier(actors=2, workers=max(1, w // 2), timeout_s=3.0),
    }
    results = {name: measure(make(), rows, args.repeat) for name, make in graders.items()}
    local = results["local"]
    same = {
        name: sum(a == b for a, b in zip(r.pop("verdicts"), local["verdicts"], strict=True))
        for name, r in results.items()
        if name != "local"
    }
    local.pop("verdicts")
    for r in results.values():
        r["overhead_ms_per_row"] = 1000 * (r["s_per_row"] - local["s_per_row"])
    from selfplay.verifier import parse_row

    row_bytes = statistics.mean(len(pickle.dumps(parse_row(r))) for r in rows)
    with Verifier(1, timeout_s=3.0) as v:
        verdict_bytes = statistics.mean(len(pickle.dumps(x)) for x in v.grade(rows[:30]))
    result = {
        "rows": len(rows) * args.repeat,
        "workers": w,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "cluster_start_s": cluster_start_s,
        "ray_call_round_trip_ms": ray_call_round_trip_ms(),
        "row_bytes": row_bytes,
        "verdict_bytes": verdict_bytes,
        "same_verdicts_as_local": same,
        "graders": results,
    }
    import ray

    ray.shutdown()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{len(rows)} HumanEval rows x {args.repeat}, {w} sandbox workers in all, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
        f"loopback cluster started in {cluster_start_s:.1f} s"
    )
    for name, r in results.items():
        print(
            f"{name:>13}: {r['rows_per_s']:7.1f} rows/s  overhead {r['overhead_ms_per_row']:+6.2f} "
            f"ms/row  driver CPU {r['driver_cpu_ms_per_row']:5.2f} ms/row"
        )
    print(
        f"same verdicts as local: {same} of {len(rows)}; one Ray call round trip "
        f"{result['ray_call_round_trip_ms']:.2f} ms; a row {row_bytes:.0f} B, a verdict "
        f"{verdict_bytes:.0f} B pickled"
    )


if __name__ == "__main__":
    main()
