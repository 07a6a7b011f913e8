"""The curriculum inside GRPO: the same budget of steps under `uniform`, `learnability` and
`frontier`, from the same model, bank and seeds.

    python benchmarks/train_curriculum.py                       # bundled model, 10 steps each
    python benchmarks/train_curriculum.py --steps 20 --json
    python benchmarks/train_curriculum.py --model smollm2-135m --steps 4   # a quick look

Set-up, shared by every scheduler: a bank of the bundled seeds (deduction and abduction:
short answers, so a CPU step is affordable), a held-out split (30%, seed 0) that no run
trains on, and a warm-up record: the starting model attempts every training task twice
(temperature 0.8), as a self-play round's solver would, so the schedulers start from the
same evidence. Then, per scheduler, GRPO for `--steps` steps (LoRA, batch 4, 2 generations
per prompt: 2 tasks a step) on a copy of that bank, and greedy pass@1 on the held-out split.

Reported per scheduler: the share of GRPO groups whose rollouts disagreed (the only groups
that move the policy: a group that all passes or all fails has zero advantage), the mean
rollout reward, and held-out pass@1 with its 95% interval and the paired change against the
starting model.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

KINDS = ["deduction", "abduction"]


def held_out_items(bank, fraction: float, seed: int):
    from selfplay.export.select import ExportOptions, select

    options = ExportOptions(split="random", test_fraction=fraction, seed=seed, kinds=KINDS)
    items = select(bank, options).items
    return [i for i in items if i.split == "test"], [i for i in items if i.split == "train"]


def evaluate(model: str, items, verifier) -> dict:
    from selfplay.backends import Sampling, make_backend
    from selfplay.evaluate import evaluate_bank

    with make_backend("transformers", model) as backend:
        report = evaluate_bank(backend, verifier, items,
                               sampling=Sampling(temperature=0.0, max_new_tokens=64))  # fmt: skip
    solved = sorted({r["task_id"] for r in report.rows if r["passed"]})
    return {"pass@1": report.pass_at_k["pass@1"], "interval": report.interval, "solved": solved}


def warm_up(bank, model: str, items, verifier) -> None:
    from selfplay.backends import make_backend
    from selfplay.backends.models import model_label
    from selfplay.config import SolverConfig
    from selfplay.solver.solver import Solver

    config = SolverConfig(samples=2, temperature=0.8, literal_max_new_tokens=64)
    with make_backend("transformers", model) as backend:
        solver = Solver(backend, verifier, config, name=model_label(model), seed=0)
        report = solver.attempt([i.task for i in items], round_id=None, step=0)
    bank.add_attempts(report.attempts)


def groups(bank, model_id: str) -> tuple[float, float, int]:
    """(share of GRPO groups with disagreeing rollouts, mean reward, rollouts) of one run.
    Rollouts of one group share a task and a timestamp (they are graded together)."""
    by_group: dict = {}
    for task_id, created, reward in bank.attempts_by(model_id):
        by_group.setdefault((task_id, created), []).append(reward)
    mixed = sum(len(set(r)) > 1 for r in by_group.values())
    rewards = [x for r in by_group.values() for x in r]
    return mixed / max(1, len(by_group)), sum(rewards) / max(1, len(rewards)), len(rewards)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="bundled")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--schedulers", default="uniform,learnability,frontier")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from loop_gain import paired

    from pipelines.train import quiet_libraries
    from selfplay.admission import Admission, import_source
    from selfplay.config import TrainConfig
    from selfplay.training import train
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    quiet_libraries()
    folder = Path(tempfile.mkdtemp(prefix="train-curriculum-"))
    base_bank = folder / "bank.db"
    started = time.perf_counter()
    result: dict = {"model": args.model, "steps": args.steps, "cpus": os.cpu_count(), "runs": {}}
    with Verifier(workers=2, timeout_s=5.0) as verifier:
        with Bank(base_bank) as bank:
            import_source("seeds", Admission(bank, verifier))
            held_out, train_items = held_out_items(bank, 0.3, args.seed)
            warm_up(bank, args.model, train_items, verifier)
        result["held_out_tasks"] = len(held_out)
        result["train_tasks"] = len(train_items)
        result["before"] = evaluate(args.model, held_out, verifier)
        exclude = {i.task.id for i in held_out}
        for name in args.schedulers.split(","):
            path = folder / f"{name}.db"
            shutil.copy(base_bank, path)
            config = TrainConfig(method="grpo", model=args.model, max_steps=args.steps,
                                 batch_size=4, save_steps=10_000, seed=args.seed,
                                 data={"kinds": KINDS},
                                 grpo={"scheduler": name, "max_completion_length": 64})  # fmt: skip
            with Bank(path) as bank:
                out = train(bank, config, folder / name, exclude=exclude)
                mixed, reward, rollouts = groups(bank, out.model_id)
            after = evaluate(out.path, held_out, verifier)
            result["runs"][name] = {
                "mixed_groups": round(mixed, 3),
                "mean_reward": round(reward, 3),
                "rollouts": rollouts,
                "held_out": after,
                "paired": paired(result["before"], after, len(held_out)),
                "train_seconds": out.seconds,
            }
            print(f"[{time.perf_counter() - started:6.0f} s] {name} done", file=sys.stderr)
    result["seconds"] = round(time.perf_counter() - started)
    result["load_average"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    b = result["before"]
    print(f"{args.model}, GRPO {args.steps} steps x 2 tasks, {len(held_out)} held-out tasks; "
          f"before: pass@1 {b['pass@1']:.3f} {b['interval']}")  # fmt: skip
    print("scheduler     mixed groups  mean reward  held-out pass@1 [95%]     paired change")
    for name, r in result["runs"].items():
        h, p = r["held_out"], r["paired"]
        print(f"{name:<13} {r['mixed_groups']:>12.2f} {r['mean_reward']:>12.3f}  "
              f"{h['pass@1']:.3f} {h['interval']!s:<18} +{p['gained']} -{p['lost']} "
              f"(p = {p['p_value']})")  # fmt: skip


if __name__ == "__main__":
    main()
