"""One RL step of the proposer, its rollouts through vLLM's CPU build against transformers.

`selfplay train --role proposer --method grpo` runs `--steps` steps on a fresh copy of a bank
of the seed tasks, once per engine (`generation_backend`), each in its own process, one
after the other, with the same config and seed. A step's wall time is the sum of its phases
(generate the proposals and their inputs, admit, solve the admitted tasks, the
policy-gradient update, the weight sync into the engine), from the run's `metrics.jsonl`;
model and engine start-up are outside it and reported apart. Reported per engine: each
step's phases, the median step and the median seconds per proposal; and the ratio of the
transformers path's median step to vLLM's. The two engines sample different proposals, so
the admit and solve phases see different tasks: the per-phase figures say where each
engine's time goes.

    python benchmarks/proposer_rl_step.py --steps 2 --out benchmarks/figures/proposer_rl_step.json
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENGINES = ("vllm", "transformers")


def run_engine(engine: str, workdir: Path, steps: int, group: int) -> dict:
    bank = workdir / f"{engine}.db"
    shutil.copy(workdir / "seeds.db", bank)
    config = workdir / f"{engine}.yaml"
    config.write_text(
        f"method: grpo\nrole: proposer\nmax_steps: {steps}\nlearning_rate: 5e-5\n"
        f"generation_backend: {engine}\nproposer_grpo:\n  group_size: {group}\n"
    )
    out = workdir / f"{engine}-model"
    started = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "train", "--bank", str(bank), "--config",
         str(config), "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if res.returncode != 0:
        sys.exit(f"{engine}: selfplay train failed:\n{res.stderr[-2000:]}")
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    step_s = [sum(r["seconds"].values()) for r in rows]
    return {
        "engine": engine,
        "steps": [
            {
                "step": r["step"],
                "proposals": r["proposals"],
                "admitted": r["admitted"],
                "seconds": r["seconds"],
                "wall_s": round(s, 1),
            }
            for r, s in zip(rows, step_s, strict=True)
        ],  # fmt: skip
        "median_step_s": round(statistics.median(step_s), 1),
        "median_s_per_proposal": round(
            statistics.median(s / r["proposals"] for r, s in zip(rows, step_s, strict=True)), 2
        ),
        "run_wall_s": round(wall, 1),
        "startup_s": round(wall - sum(step_s), 1),
    }


def main() -> None:
    from selfplay.backends.auto import isa

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--group", type=int, default=8, help="proposals per prompt")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="selfplay-rl-step-"))
    subprocess.run([sys.executable, "-m", "pipelines.cli", "bank", "import", "seeds", "--bank",
                    str(workdir / "seeds.db")], check=True, capture_output=True)  # fmt: skip
    arms = {}
    for engine in args.engines.split(","):
        arms[engine] = run_engine(engine, workdir, args.steps, args.group)
        print(json.dumps(arms[engine]), flush=True)
    report = {
        "cpu": isa(),
        "machine": platform.processor() or platform.machine(),
        "cores": len(__import__("os").sched_getaffinity(0)),
        "arms": arms,
    }
    if set(ENGINES) <= set(arms):
        report["transformers_over_vllm"] = round(
            arms["transformers"]["median_step_s"] / arms["vllm"]["median_step_s"], 2
        )
    print(json.dumps({k: v for k, v in report.items() if k != "arms"}))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
