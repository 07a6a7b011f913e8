"""The kernel's part of a row: what forking a row's two processes costs, without any grading.

A process with the zygote's modules loaded (and its heap frozen and trimmed, as the zygote's
is) forks two children per "row" and reaps them, in two modes: `fork` (the children exit at once)
and `python` (each child compiles and runs a three-line function first, the least interpreter
work a row's process does). The namespaces a row's pair gets cost more on top. CPU per row is this process's and its children's. Run inside bubblewrap, as the
workers are:

    python benchmarks/fork_floor.py [--rows 1000]

The verifier's CPU per HumanEval row (benchmarks/verify_humaneval.py) less this floor is what
grading itself costs; the floor bounds what any design with two fresh processes per row can
reach on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def inside(mode: str, rows: int) -> dict:
    import gc
    import resource

    sys.path.insert(0, str(ROOT))
    from selfplay.verifier.inside import osutil, preload

    fork = preload.load()
    from selfplay.verifier.inside import harness, server, solution, testproc, zygote  # noqa: F401

    gc.collect()
    gc.freeze()
    osutil.trim_heap()

    def child(gate: int, other: int) -> None:
        os.close(other)
        os.read(gate, 1)  # both children alive at once, as a row's are
        if mode == "python":
            exec(compile("def f(x):\n    return x + 1\nassert f(1) == 2\n", "<row>", "exec"), {})
        os._exit(0)

    def cpu() -> float:
        s = resource.getrusage(resource.RUSAGE_SELF)
        c = resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

    import time

    t0, c0 = time.monotonic(), cpu()
    for _ in range(rows):
        r, w = os.pipe()
        pids = []
        for _ in range(2):
            pid = fork()
            if pid == 0:
                child(r, w)
            pids.append(pid)
        os.close(w)
        os.close(r)
        for pid in pids:
            os.waitpid(pid, 0)
    t1, c1 = time.monotonic(), cpu()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"mode": mode, "cpu_ms_per_row": 1000 * (c1 - c0) / rows,
            "wall_ms_per_row": 1000 * (t1 - t0) / rows, "rss_mb": round(rss, 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        print(json.dumps(inside(args.inside, args.rows)))
        return
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        sys.exit("fork_floor needs bubblewrap (apt-get install bubblewrap).")
    out = []
    for mode in ("fork", "python"):
        cmd = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net",
               "--cap-add", "ALL", "--dev-bind", "/", "/", "--proc", "/proc", "--tmpfs", "/tmp",
               sys.executable, "-S", __file__, "--inside", mode, "--rows", str(args.rows)]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            sys.exit(f"fork_floor: the {mode} run failed: {run.stderr.strip()[-300:]}")
        out.append(json.loads(run.stdout))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
