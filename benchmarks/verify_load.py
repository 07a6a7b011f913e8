"""The verifier under load: 10,000 rows of which 10% time out or blow memory.

Reports the healthy rows' throughput with and without the bad rows in the batch, and checks
that nothing leaked: child processes, file descriptors, scratch directories, cgroups.

    python benchmarks/verify_load.py [--rows 10000] [--workers 2] [--bad-timeout 0.5]
"""

from __future__ import annotations

import argparse
import os
import time

from selfplay.verifier import Verifier

HEALTHY = "def f(xs):\n    return sorted(xs)[len(xs) // 2]\n"
SLOW = "def f(xs):\n    while True:\n        pass\n"
GREEDY = "def f(xs):\n    return len(bytearray(8 * 1024 ** 3))\n"


def rows(n: int, bad_timeout: float, with_bad: bool) -> list[dict]:
    out = []
    for i in range(n):
        program = HEALTHY
        if with_bad and i % 10 == 0:
            program = SLOW if i % 20 == 0 else GREEDY
        out.append(
            {
                "id": str(i),
                "program": program,
                "timeout_s": bad_timeout,
                "tests": ["assert f([3, 1, 2]) == 2", "assert f([5]) == 5"],
            }
        )
    return out


def snapshot() -> dict:
    children = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                        children.add(p)
            except (OSError, ValueError, IndexError):
                pass
    cgroups = set()
    for root in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory"):
        if os.path.isdir(root):
            cgroups |= {d for d in os.listdir(root) if d.startswith(f"selfplay-{os.getpid()}-")}
    return {
        "children": children,
        "fds": set(os.listdir("/proc/self/fd")),
        "tmp": {n for n in os.listdir("/tmp") if n.startswith("selfplay")},
        "cgroups": cgroups,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bad-timeout", type=float, default=0.5)
    args = ap.parse_args()
    before = snapshot()
    with Verifier(workers=args.workers) as v:
        results = {}
        for label, with_bad in (("healthy only", False), ("with 10% bad", True)):
            batch = rows(args.rows, args.bad_timeout, with_bad)
            t = time.perf_counter()
            verdicts = v.grade(batch)
            elapsed = time.perf_counter() - t
            statuses: dict[str, int] = {}
            for x in verdicts:
                statuses[x.status] = statuses.get(x.status, 0) + 1
            healthy = sum(1 for r in batch if r["program"] == HEALTHY)
            results[label] = (elapsed, statuses, healthy)
            print(
                f"{label:>13}: {len(batch)} rows in {elapsed:6.1f} s, statuses {statuses}, "
                f"healthy rows/s {healthy / elapsed:6.1f}"
            )
    after = snapshot()
    leaks = {k: sorted(after[k] - before[k]) for k in before if after[k] - before[k]}
    # The floor for the mixed batch: bad rows hold a worker for their time limit.
    bad_time = (args.rows // 20) * args.bad_timeout / args.workers
    print(f"time the timeouts alone must take: {bad_time:.1f} s")
    print("leaks:", leaks or "none")


if __name__ == "__main__":
    main()
