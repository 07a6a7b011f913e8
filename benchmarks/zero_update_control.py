"""A control for selfplay_gain's HumanEval figures: the bundled model put through the whole
training pipeline (LoRA, merge, save in float32, load) with a learning rate too small to
change a weight, then evaluated on all of HumanEval exactly as selfplay_gain evaluates a
trained arm. A drop here would be the pipeline's (precision, loading), not training's.

    python benchmarks/zero_update_control.py --bank BANK [--out FILE]

BANK: any bank with tasks to build one SFT step from (the seeds will do:
`selfplay bank import seeds --bank seeds.db`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bank", required=True)
    ap.add_argument("--backend", default="vllm")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from selfplay.backends import make_backend
    from selfplay.config import TrainConfig
    from selfplay.evaluate import evaluate_humaneval, paired
    from selfplay.training import train
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    config = TrainConfig.model_validate({
        "method": "sft", "model": "bundled", "max_steps": 1, "batch_size": 2,
        "learning_rate": 1e-30, "max_length": 512, "save_steps": 10_000, "seed": 0,
        "data": {"held_out_fraction": 0.0, "references": True},
    }).check()  # fmt: skip
    out: dict = {"backend": args.backend}
    with tempfile.TemporaryDirectory() as tmp, Verifier(workers=2) as verifier:
        start = time.perf_counter()
        with Bank(args.bank) as bank:
            train(bank, config, Path(tmp) / "model", resume=False)
        out["train_s"] = round(time.perf_counter() - start, 1)
        reports = {}
        for name, model in (("base", "bundled"), ("control", str(Path(tmp) / "model"))):
            start = time.perf_counter()
            with make_backend(args.backend, model) as backend:
                reports[name] = evaluate_humaneval(backend, verifier, limit=164)
            out[name] = reports[name].to_dict() | {"wall_s": round(time.perf_counter() - start)}
            print(name, reports[name].pass_at_k, flush=True)
        out["paired"] = paired(reports["base"], reports["control"])
    print(json.dumps(out["paired"]))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
