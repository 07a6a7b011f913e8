"""What selfplay adds to a GRPO step, and what LoRA training takes in memory on a CPU.

    python benchmarks/train_overhead.py                      # overhead on SmolLM2-135M
    python benchmarks/train_overhead.py --memory             # peak RSS, bundled model
    python benchmarks/train_overhead.py --model bundled --steps 4 --json

Overhead: the same model, data and GRPO settings (LoRA, batch 2, 2 generations, 48 new
tokens), trained for `--steps` steps twice, alternating in one run:
- `trl`: TRL's GRPOTrainer with a trivial reward (the completion's length parity) and TRL's
  own sampler: the peer;
- `selfplay`: `selfplay.training.train(method=grpo)`: the curriculum scheduler picks every
  batch from the bank's counters, every rollout is graded in the sandbox and written to the
  bank.
Step time is the median over steps after the first (which pays the start-up); selfplay's
own seconds (grading, bank writes, scheduler picks) come from the run's overhead report.

Memory: peak resident memory (ru_maxrss) of a fresh process that trains LoRA adapters on
the model for two steps with SFT and with GRPO. Each configuration runs in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from phase_clock import in_child, time_train_steps  # noqa: E402

GRPO = {"num_generations": 2, "max_completion_length": 48, "scheduler": "learnability"}


def _bank(folder: Path) -> Path:
    """A bank of the bundled seeds, imported through admission."""
    from selfplay.admission import Admission, import_source
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    path = folder / "bank.db"
    with Bank(path) as bank, Verifier(workers=2) as verifier:
        import_source("seeds", Admission(bank, verifier))
    return path


def _step_times() -> tuple[object, list[float]]:
    from transformers import TrainerCallback

    times: list[float] = []

    class Clock(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            times.append(time.perf_counter() - self.started)

    return Clock(), times


def run_trl(bank_path: Path, model: str, steps: int, out: Path) -> dict:
    """The peer: TRL's GRPOTrainer as its documentation shows it, a trivial reward."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from selfplay.backends.models import local_model_dir
    from selfplay.config import TrainConfig
    from selfplay.export.select import ExportOptions, select
    from selfplay.training import data, trainer
    from task_bank.store import Bank

    config = TrainConfig(method="grpo", model=model, max_steps=steps, grpo=GRPO)
    with Bank(bank_path) as bank:
        items = select(bank, ExportOptions(split="none")).items
        rows = data.grpo_rows(bank, items)

    def parity(completions, **kwargs):
        return [float(len(str(c)) % 2) for c in completions]

    args = GRPOConfig(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        num_generations=2,
        max_completion_length=48,
        beta=0.0,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
        model_init_kwargs={"dtype": "float32"},
    )
    clock, times = _step_times()
    t = GRPOTrainer(
        model=local_model_dir(model),
        reward_funcs=[parity],
        args=args,
        train_dataset=Dataset.from_list(rows),
        peft_config=trainer._peft(config),
        callbacks=[clock],
    )
    t.train()
    import torch

    return {"runner": "trl", "step_s": times, "threads": torch.get_num_threads()}


def run_selfplay(bank_path: Path, model: str, steps: int, out: Path) -> dict:
    from selfplay.config import TrainConfig
    from selfplay.training import train
    from task_bank.store import Bank

    times = time_train_steps()
    config = TrainConfig(method="grpo", model=model, max_steps=steps, save_steps=10_000,
                         grpo=GRPO)  # fmt: skip
    with Bank(bank_path) as bank:
        result = train(bank, config, out)
    import torch

    return {"runner": "selfplay", "step_s": times, "overhead_s": result.overhead,
            "rollouts": result.rollouts, "threads": torch.get_num_threads()}  # fmt: skip


def run_memory(bank_path: Path, model: str, method: str, out: Path) -> dict:
    from selfplay.config import TrainConfig
    from selfplay.training import train
    from task_bank.store import Bank

    config = TrainConfig(method=method, model=model, max_steps=2, save_steps=10_000,
                         grpo=GRPO, max_length=512)  # fmt: skip
    started = time.perf_counter()
    with Bank(bank_path) as bank:
        train(bank, config, out)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"runner": f"memory-{method}", "peak_rss_mb": round(peak_mb),
            "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--model", default=None, help="default: smollm2-135m (overhead), bundled (memory)"
    )
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=2, help="alternating runs of each")
    ap.add_argument("--memory", action="store_true", help="peak RSS instead of overhead")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", nargs=3, metavar=("RUNNER", "BANK", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    from pipelines.train import quiet_libraries

    quiet_libraries()
    if args.one:
        runner, bank, out = args.one
        if runner.startswith("memory-"):
            result = run_memory(Path(bank), args.model, runner.split("-", 1)[1], Path(out))
        else:
            run = run_trl if runner == "trl" else run_selfplay
            result = run(Path(bank), args.model, args.steps, Path(out))
        print(json.dumps(result))
        return

    folder = Path(tempfile.mkdtemp(prefix="train-overhead-"))
    bank = _bank(folder)
    model = args.model or ("bundled" if args.memory else "smollm2-135m")
    runs = []
    if args.memory:
        for method in ("sft", "grpo"):
            one = ["--one", f"memory-{method}", str(bank), str(folder / f"m-{method}")]
            runs.append(in_child(__file__, ["--model", model, *one]))
    else:
        for i in range(args.repeats):
            for runner in ("trl", "selfplay"):
                copy = folder / f"{runner}-{i}.db"
                copy.write_bytes(bank.read_bytes())
                one = ["--one", runner, str(copy), str(folder / f"{runner}-{i}")]
                runs.append(
                    in_child(__file__, ["--model", model, "--steps", str(args.steps), *one])
                )
    report = {"model": model, "steps": args.steps, "cpus": os.cpu_count(),
              "load_average": round(os.getloadavg()[0], 2), "runs": runs}  # fmt: skip
    if not args.memory:
        median = {}
        for runner in ("trl", "selfplay"):
            steps = [s for r in runs if r["runner"] == runner for s in r["step_s"][1:]]
            median[runner] = statistics.median(steps)
        ours = [r for r in runs if r["runner"] == "selfplay"]
        added = {k: sum(r["overhead_s"][k] for r in ours) / sum(len(r["step_s"]) for r in ours)
                 for k in ours[0]["overhead_s"]}  # fmt: skip
        report |= {"median_step_s": median, "ratio": median["selfplay"] / median["trl"],
                   "selfplay_s_per_step": added}  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=2))
    elif args.memory:
        for r in runs:
            print(
                f"{model} LoRA {r['runner'][7:]}: peak RSS {r['peak_rss_mb']} MB, {r['seconds']} s"
            )
    else:
        m = report["median_step_s"]
        print(f"{model}, {args.steps} steps x {args.repeats}: median step TRL {m['trl']:.2f} s, "
              f"selfplay {m['selfplay']:.2f} s, ratio {report['ratio']:.3f}")  # fmt: skip
        print("selfplay's own seconds per step: "
              + ", ".join(f"{k} {v:.3f}" for k, v in report["selfplay_s_per_step"].items()))  # fmt: skip
    print(f"load average {report['load_average']}", file=sys.stderr)


if __name__ == "__main__":
    main()
