"""Does the procedural depth knob set difficulty? The model's pass@1 per depth.

Draws `--per-depth` procedural tasks of each depth (`selfplay.procedural`), admits them
into a temporary bank through the real admission chain, and asks the model each one once,
greedily, with the exported prompt, graded by the exported reward (`selfplay.evaluate`).
Prints pass@1 per depth with its Wilson 95% interval and the reward's reasons, as JSON.

    python benchmarks/procedural_difficulty.py [--model bundled] [--kind deduction]
        [--depths 1,2,4,6] [--per-depth 40] [--families arith,lists] [--max-new-tokens 32]
        [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--kind", default="deduction")
    parser.add_argument("--depths", default="1,2,4,6")
    parser.add_argument("--per-depth", type=int, default=40)
    parser.add_argument("--families", default="arith,lists", help="procedural families")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]

    from selfplay import procedural
    from selfplay.admission import Admission, AdmissionConfig
    from selfplay.backends import Sampling, make_backend
    from selfplay.evaluate import evaluate_bank, pass1_interval
    from selfplay.export.select import ExportOptions, select
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Verifier(workers=2) as verifier:
        with Bank(Path(tmp) / "bank.db") as bank:
            candidates = procedural.candidates(args.kind, depths, args.per_depth, seed=args.seed,
                                               families=args.families.split(","))  # fmt: skip
            report = Admission(bank, verifier, AdmissionConfig(decontaminate=False)).admit(
                candidates
            )
            options = ExportOptions(sources=["procedural"], kinds=[args.kind], split="none")
            items = select(bank, options).items
        with make_backend("transformers", args.model) as backend:
            graded = evaluate_bank(
                backend,
                verifier,
                items,
                sampling=Sampling(temperature=0.0, max_new_tokens=args.max_new_tokens),
            )
    passed = {r["task_id"]: r["passed"] for r in graded.rows}
    reasons = {r["task_id"]: r["reason"] for r in graded.rows}
    out = {"model": args.model, "kind": args.kind, "admitted": report.admitted, "depths": {}}
    for depth in depths:
        correct = [[passed[i.task.id]] for i in items if i.task.metadata["depth"] == depth]
        n = len(correct)
        out["depths"][depth] = {
            "tasks": n,
            "pass@1": round(sum(c[0] for c in correct) / n, 4) if n else None,
            "interval": pass1_interval(correct),
            "reasons": dict(
                Counter(reasons[i.task.id] for i in items if i.task.metadata["depth"] == depth)
            ),
        }
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
