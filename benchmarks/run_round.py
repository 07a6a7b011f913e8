"""The quickstart target: `selfplay run --rounds 1` on an empty bank with the bundled model.

Target: within 10 minutes on 2 CPU cores, at least one new verified task admitted.
Runs the real command in a fresh temporary bank per arm and prints one JSON object per arm:
wall time, the command's CPU time (user + system, children included), the load average
before and after (the machine may be shared: a load above the core count means the run got
only part of it), proposals per minute and the round's metrics line.

An arm is a backend, optionally with a fixed number of programs per kind in one wave and
one probe task a kind (`vllm@3`: the vllm backend proposing 3 a kind, the transformers
backend's wave); the arms run one after the other in the same call, so they are side by side:

    python benchmarks/run_round.py                                   # the default round
    python benchmarks/run_round.py --arms transformers@3,vllm@3,auto --out benchmarks/figures/run_round.json
    python benchmarks/run_round.py --keep DIR -- --config run.yaml   # extra selfplay run flags
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


def run_arm(arm: str, workdir: Path, extra: list[str]) -> dict:
    backend, _, per_kind = arm.partition("@")
    bank = workdir / f"bench-{arm.replace('@', '-')}.db"
    for leftover in workdir.glob(bank.stem + ".*"):
        leftover.unlink()
    flags = ["--backend", backend] if backend != "default" else []
    if per_kind:
        config = workdir / f"{bank.stem}.yaml"
        # The same work on every engine: the count fixed, one probe task a kind.
        config.write_text(f"proposer:\n  proposals_per_kind: {int(per_kind)}\n  probe_tasks: 1\n")
        flags += ["--config", str(config)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()
    start = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "run", "--bank", str(bank), "--rounds", "1"]
        + flags
        + extra,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime - before.ru_utime) + (usage.ru_stime - before.ru_stime)
    metrics_file = bank.with_name(bank.stem + ".metrics.jsonl")
    metrics = json.loads(metrics_file.read_text().splitlines()[-1]) if metrics_file.exists() else {}
    said = [line for line in res.stderr.splitlines() if line.startswith("backend: ")]
    if res.returncode != 0:
        print(res.stderr[-2000:], file=sys.stderr)
    proposed = metrics.get("proposed") or 0
    return {
        "arm": arm,
        "returncode": res.returncode,
        "engine": said[0] if said else backend,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cores": os.cpu_count(),
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "proposed": proposed,
        "proposals_per_minute": round(60 * proposed / wall, 2),
        "admitted": metrics.get("admitted"),
        "attempts": metrics.get("attempts"),
        "frontier": metrics.get("frontier"),
        "yield_rate": metrics.get("yield_rate"),
        "rejected": metrics.get("rejected"),
        "solve_rate": metrics.get("solve_rate"),
        "tokens": metrics.get("tokens"),
        "tokens_per_s": metrics.get("tokens_per_s"),
        "round_compute_s": metrics.get("seconds"),
        "target_met": res.returncode == 0 and wall <= 600 and (metrics.get("admitted") or 0) >= 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arms",
        default="default",
        help="backends, comma-separated ('default' passes no --backend; 'vllm@3' fixes 3 "
        "programs a kind)",
    )
    parser.add_argument("--keep", type=Path, help="write the banks here instead of a temp dir")
    parser.add_argument("--out", type=Path, help="write the reports as JSON here")
    parser.add_argument("extra", nargs="*", help="more flags for selfplay run")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="selfplay-round-"))
    workdir.mkdir(parents=True, exist_ok=True)
    reports = []
    for arm in args.arms.split(","):
        reports.append(run_arm(arm, workdir, args.extra))
        print(json.dumps(reports[-1], indent=2), flush=True)
    if len(reports) > 1:
        base = reports[0]
        for r in reports[1:]:
            print(f"{r['arm']}: wall {r['wall_s'] / base['wall_s']:.2f}x {base['arm']}'s, "
                  f"{r['proposals_per_minute'] / max(base['proposals_per_minute'], 1e-9):.2f}x "
                  f"its proposals per minute")  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(reports, indent=2) + "\n")


if __name__ == "__main__":
    main()
