"""The verifier on Ray against the local verifier, same rows, same run, same sandbox workers.

Rows: HumanEval's 492 benchmark rows (`verify_humaneval.make_rows`: canonical, empty and
swapped solutions). Graders, each with `--workers` sandboxed workers in all: the local
`Verifier`; a `RayVerifier` with 1 actor owning them all; one with 2 actors sharing them (both
with the default chunks); 1 actor with 4-row and with 64-row chunks; on a loopback Ray cluster
started here. All are started and
warmed, then each grades the rows once in turn, `--repeat` rounds (the median pass counts), so
that the load of a shared machine falls on all alike. Reported per grader: rows/s, the
wall-clock overhead per row against the local verifier (difference of seconds per row), and
the driver's own CPU per row (what bounds the rows one driver can dispatch). Also measured: the round trip of one Ray call to an
actor (no rows), and the pickled size of a row and of its verdict (what crosses the network).

    python benchmarks/ray_verify.py [--workers 2] [--repeat 3] [--json]
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


def one_pass(verifier, rows: list[dict]) -> tuple[float, float, list]:
    """Seconds, driver CPU seconds and verdicts of one pass over the rows."""
    cpu0, t0 = _own_cpu_s(), time.perf_counter()
    verdicts = verifier.grade(rows)
    return time.perf_counter() - t0, _own_cpu_s() - cpu0, verdicts


def measure(graders: dict, rows: list[dict], repeat: int) -> dict:
    """Every grader started and warmed, then passes taken in turn, round after round, so that
    a change in the machine's load falls on all of them alike; the median pass counts."""
    for v in graders.values():
        v.start()
        v.grade(rows[:32])
    passes: dict[str, list] = {name: [] for name in graders}
    for _ in range(repeat):
        for name, v in graders.items():
            passes[name].append(one_pass(v, rows))
    out = {}
    for name, runs in passes.items():
        seconds = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        out[name] = {
            "rows_per_s": len(rows) / seconds,
            "s_per_row": seconds / len(rows),
            "driver_cpu_ms_per_row": 1000 * cpu / len(rows),
            "verdicts": [
                (x.id, x.status, x.tests_passed, x.detail, x.signals) for x in runs[-1][2]
            ],
        }
    return out


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
    ap.add_argument("--repeat", type=int, default=3, help="passes per grader, taken in turn")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from selfplay.verifier import Verifier
    from selfplay.verifier.cluster import RayVerifier
    from selfplay.verifier.connect import connect

    rows = [to_verifier_row(i, p, c) for i, (p, c, _) in enumerate(make_rows(load_problems()))]
    t = time.perf_counter()
    connect("local")
    cluster_start_s = time.perf_counter() - t
    w = args.workers
    graders = {
        "local": Verifier(w, timeout_s=3.0),
        "ray_1_actor": RayVerifier(actors=1, workers=w, timeout_s=3.0),
        "ray_2_actors": RayVerifier(actors=2, workers=max(1, w // 2), timeout_s=3.0),
        # Other chunk sizes: the driver's cost per Ray call and per row, apart.
        "ray_1_actor_chunk_4": RayVerifier(actors=1, workers=w, timeout_s=3.0, chunk_rows=4),
        "ray_1_actor_chunk_64": RayVerifier(actors=1, workers=w, timeout_s=3.0, chunk_rows=64),
    }
    try:
        results = measure(graders, rows, args.repeat)
    finally:
        for v in graders.values():
            v.close()
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
        "rows": len(rows),
        "rounds": args.repeat,
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
        f"{len(rows)} HumanEval rows, median of {args.repeat} passes each, {w} sandbox workers in all, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
        f"loopback cluster started in {cluster_start_s:.1f} s"
    )
    for name, r in results.items():
        print(
            f"{name:>20}: {r['rows_per_s']:7.1f} rows/s  overhead {r['overhead_ms_per_row']:+6.2f} "
            f"ms/row  driver CPU {r['driver_cpu_ms_per_row']:5.2f} ms/row"
        )
    print(
        f"same verdicts as local: {same} of {len(rows)}; one Ray call round trip "
        f"{result['ray_call_round_trip_ms']:.2f} ms; a row {row_bytes:.0f} B, a verdict "
        f"{verdict_bytes:.0f} B pickled"
    )


if __name__ == "__main__":
    main()
