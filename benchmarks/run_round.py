"""The quickstart target: `selfplay run --rounds 1` on an empty bank with the bundled model.

Target: within 10 minutes on 2 CPU cores, at least one new verified task admitted.
Runs the real command in a fresh temporary bank and prints one JSON object: wall time, the
command's CPU time (user + system, children included), the load average before and after
(the machine may be shared: a load above the core count means the run got only part of it),
and the round's metrics line.

    python benchmarks/run_round.py [--keep DIR] [-- extra selfplay run flags]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the bank here instead of a temp dir")
    parser.add_argument("extra", nargs="*", help="more flags for selfplay run")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="selfplay-round-"))
    workdir.mkdir(parents=True, exist_ok=True)
    bank = workdir / "bench.db"
    for leftover in workdir.glob("bench.*"):
        leftover.unlink()
    load_before = os.getloadavg()
    start = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "run", "--bank", str(bank), "--rounds", "1"]
        + args.extra,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    metrics_file = workdir / "bench.metrics.jsonl"
    metrics = json.loads(metrics_file.read_text().splitlines()[-1]) if metrics_file.exists() else {}
    report = {
        "returncode": res.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "cores": os.cpu_count(),
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "admitted": metrics.get("admitted"),
        "proposed": metrics.get("proposed"),
        "rejected": metrics.get("rejected"),
        "solve_rate": metrics.get("solve_rate"),
        "tokens_per_s": metrics.get("tokens_per_s"),
        "round_compute_s": metrics.get("seconds"),
        "target_met": res.returncode == 0 and wall <= 600 and (metrics.get("admitted") or 0) >= 1,
    }
    print(json.dumps(report, indent=2))
    if res.returncode != 0:
        print(res.stderr[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
