"""A training step on a CPU with TRL's LM head as TRL runs it there, beside selfplay's
(only the labelled positions projected; `selfplay/training/lm_head.py`).

    python benchmarks/train_step_speed.py                       # bundled model, SFT, 6 steps
    python benchmarks/train_step_speed.py --steps 8 --repeats 2 --out benchmarks/figures/train_step_speed.json

Both arms train the same model (LoRA, selfplay's defaults) on the same rows with the same
seed: `selfplay.training.train(method=sft)` on the sandbox's answers to procedural deduction
tasks of four families at levels 1 and 2, batch 8, the rows of the self-play gain benchmark's
`sft:verified` arm. The arms differ only in the head: `trl` runs with
`labelled_positions_only` switched off (every position projected through the vocabulary),
`selfplay` as shipped. Each run is its own process, the arms alternate; the figure is the
median step after the first (which pays the start-up), and the ratio of the two medians. The
loss of every step is kept: the two arms should train alike (the same up to float rounding).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from phase_clock import in_child, time_train_steps  # noqa: E402


def _bank(folder: Path) -> Path:
    path = folder / "bank.db"
    subprocess.run([sys.executable, "-m", "pipelines.cli", "bank", "generate", "--bank", str(path),
                    "--family", "arith,lists,strings,bits", "--levels", "1,2",
                    "--per-level", "40", "--json"],
                   check=True, capture_output=True, cwd=ROOT)  # fmt: skip
    return path


def run(runner: str, bank_path: Path, model: str, steps: int, out: Path) -> dict:
    import selfplay.training.trl_job as trl_job
    from selfplay.config import TrainConfig
    from selfplay.training import train
    from task_bank.store import Bank

    if runner == "trl":  # TRL's own choice of path on a CPU
        trl_job.labelled_positions_only = contextlib.nullcontext
    times = time_train_steps()
    config = TrainConfig(method="sft", model=model, max_steps=steps, batch_size=8,
                         save_steps=10_000, max_length=512, seed=0,
                         data={"references": True, "held_out_fraction": 0.0})  # fmt: skip
    with Bank(bank_path) as bank:
        result = train(bank, config, out)
    losses = [round(e["loss"], 4) for e in result.log if "loss" in e]
    return {"runner": runner, "step_s": [round(t, 2) for t in times], "loss": losses,
            "rows": result.rows}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=1, help="alternating runs of each")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    ap.add_argument("--one", nargs=3, metavar=("RUNNER", "BANK", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    from pipelines.train import quiet_libraries

    quiet_libraries()
    if args.one:
        runner, bank, out = args.one
        print(json.dumps(run(runner, Path(bank), args.model, args.steps, Path(out))))
        return
    folder = Path(tempfile.mkdtemp(prefix="train-step-speed-"))
    bank = _bank(folder)
    runs = []
    for i in range(args.repeats):
        for runner in ("trl", "selfplay"):
            one = ["--one", runner, str(bank), str(folder / f"{runner}-{i}")]
            runs.append(
                in_child(__file__, ["--model", args.model, "--steps", str(args.steps), *one])
            )
            print(json.dumps(runs[-1]), flush=True)
    median = {r: statistics.median(s for x in runs if x["runner"] == r for s in x["step_s"][1:])
              for r in ("trl", "selfplay")}  # fmt: skip
    from selfplay.backends.auto import isa

    report = {"model": args.model, "steps": args.steps, "batch": 8, "cpus": os.cpu_count(),
              "isa": isa(), "load_average_end": round(os.getloadavg()[0], 2), "runs": runs,
              "median_step_s": median,
              "speed_up": round(median["trl"] / median["selfplay"], 2)}  # fmt: skip
    print(f"{args.model}, SFT batch 8, {args.steps} steps x {args.repeats}: median step "
          f"TRL's head {median['trl']:.2f} s, selfplay's {median['selfplay']:.2f} s: "
          f"{report['speed_up']}x")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
