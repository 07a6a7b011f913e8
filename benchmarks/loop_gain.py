"""What the self-play loop gains: held-out and HumanEval pass@1 before and after training.

    python benchmarks/loop_gain.py                                  # bundled model, 2 iterations
    python benchmarks/loop_gain.py --iterations 3 --method grpo --json
    python benchmarks/loop_gain.py --model smollm2-135m --humaneval 8   # a quick look

Runs `selfplay loop` (the library, not a subprocess) on a fresh bank of the bundled seeds and
reports, for every iteration, pass@1 on the held-out split (frozen before the first round,
never trained on) and on the first HumanEval problems, each with its 95% interval, and the
change against iteration 0 as a paired test: problems solved after and not before against
the reverse (McNemar's exact test on the discordant pairs), since one greedy answer per
problem on a few dozen problems moves by chance.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from selfplay.evaluate import paired_solved  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--method", default="sft", choices=["sft", "grpo", "dpo"])
    ap.add_argument("--steps", type=int, default=16, help="solver optimizer steps per iteration")
    ap.add_argument("--held-out", type=float, default=0.3, help="share of the bank held out")
    ap.add_argument("--humaneval", type=int, default=16, help="HumanEval problems (0: none)")
    ap.add_argument("--bank", type=Path, default=None, help="bank file (default: a fresh one)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from pipelines.train import quiet_libraries
    from selfplay.config import LoopConfig
    from selfplay.engine.loop import Loop
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    config = LoopConfig.model_validate(
        {
            "iterations": args.iterations,
            "run": {"model": {"spec": args.model}},
            "solver": {"method": args.method, "max_steps": args.steps},
            "eval": {"held_out_fraction": args.held_out, "humaneval_limit": args.humaneval},
        }
    )
    quiet_libraries()
    path = args.bank or Path(tempfile.mkdtemp(prefix="loop-gain-")) / "bank.db"
    started = time.perf_counter()

    def progress(phase: str, done: int, total: int) -> None:
        if done == total:
            print(f"[{time.perf_counter() - started:7.0f} s] {phase} {done}/{total}",
                  file=sys.stderr, flush=True)  # fmt: skip

    with Bank(path) as bank, Verifier(workers=2, timeout_s=5.0) as verifier:
        loop = Loop(bank, verifier, config, progress=progress)
        rows = loop.run()
        evals = {
            i: steps["eval"] for i, steps in bank.journal("loop").all().items() if "eval" in steps
        }
    result = {
        "model": args.model,
        "method": args.method,
        "bank": str(path),
        "seconds": round(time.perf_counter() - started),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "rows": [r.to_dict() for r in rows],
        "paired": {},
    }
    last = max(evals)
    for name in ("held_out", "humaneval"):
        if name in evals[0] and name in evals[last]:
            before, after = (set(evals[i][name].get("solved", [])) for i in (0, last))
            result["paired"][name] = paired_solved(before, after, evals[0][name]["problems"])
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.model}, {args.method}, {len(rows) - 1} iterations, {result['seconds']} s")
    print("iter  held-out pass@1 [95%]    HumanEval pass@1 [95%]  admitted  train")
    for r in rows:
        ho = f"{r.held_out:.3f} {r.held_out_interval}" if r.held_out is not None else "-"
        he = f"{r.humaneval:.3f} {r.humaneval_interval}" if r.humaneval is not None else "-"
        train = r.train_loss if r.train_loss is not None else r.train_reward
        print(f"{r.iteration:>4}  {ho:<24} {he:<23} {r.admitted:>8}  {train}")
    for name, p in result["paired"].items():
        print(f"{name}: {p['before']} -> {p['after']} of {p['problems']} solved "
              f"(+{p['gained']} -{p['lost']}, McNemar p = {p['p_value']})")  # fmt: skip


if __name__ == "__main__":
    main()
