"""Does training on the bank teach? Held-out pass@1 before and after, on tasks at the frontier.

    python benchmarks/frontier_gain.py                                   # CPU, about an hour
    python benchmarks/frontier_gain.py --arms grpo:uniform,grpo:learnability,grpo:frontier
    python benchmarks/frontier_gain.py --preset gpu                      # benchmarks/gpu_loop.sh
    python benchmarks/frontier_gain.py --preset gpu --dry-run --model smollm2-135m

1. Tasks: procedural deduction tasks (`selfplay.procedural`) of the depths where the model
   sometimes succeeds, admitted into a fresh bank by the real chain: the held-out set first
   (its own seed, 1000 + `--seed`), then the training pool (`--seed`); no pool task's
   program is a held-out program after normalisation, under any input, so no held-out
   program is ever trained on. Superseded by `selfplay_gain.py` (families never trained on,
   the model's own proposals, all of HumanEval, expert iteration on its own attempts).
2. Before: greedy pass@1 on the held-out set and on HumanEval's first `--humaneval` problems.
3. Warm-up (`selfplay.solver.warmup`): the starting model attempts every pool task a few
   times; these attempts are every scheduler's first estimates and the first self-generated
   solutions the SFT arm can keep.
4. Arms, each from the starting model, on the same pool and the same warm-up:
   - `sft`: expert iteration: `train --method sft` on the pool's verified solutions (the
     model's passing attempts, and with `--sft-data verified` also the answers the sandbox
     computed when the task was admitted), then the model attempts the pool again and the
     next iteration trains on what it now solves;
   - `grpo:<scheduler>`: `train --method grpo`, the scheduler picking every batch from the
     bank's record (warm-up and rollouts), every rollout graded by the exported reward.
5. After: the same evaluations per arm, paired with Before problem by problem (McNemar's
   exact test), and the gain per CPU-minute of the arm's own work (sampling and training).

Writes benchmarks/figures/frontier_gain.json (with --out) and frontier_gain.png.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from phase_clock import START, Clock, say  # noqa: E402

PRESETS: dict[str, dict[str, Any]] = {
    # 2 CPU cores: the bundled 0.5B model, answers of a few tokens, tasks of depth 1 and 2.
    "cpu": {
        "model": "bundled",
        "backend": "transformers",
        "depths": "1,2",
        "held_out": 300,
        "pool": 240,
        "humaneval": 20,
        "warmup_samples": 2,
        "arms": "sft,grpo:uniform,grpo:learnability,grpo:frontier",
        "iterations": 1,
        "sft_steps": 32,
        "sft_batch": 8,
        "sft_data": "verified",
        "grpo_steps": 8,
        "arm_held_out": 150,
        "grpo_batch": 8,
        "generations": 4,
        "learning_rate": 3e-4,
        "temperature": 1.0,
    },
    # One large GPU: a 1.5B coder, vLLM generation, deeper tasks, all of HumanEval.
    "gpu": {
        "model": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
        "backend": "vllm",
        "depths": "1,2,3,4",
        "held_out": 800,
        "pool": 2000,
        "humaneval": 164,
        "warmup_samples": 4,
        "arms": "sft,grpo:uniform,grpo:learnability,grpo:frontier",
        "iterations": 3,
        "sft_steps": 60,
        "sft_data": "attempts",
        "arm_held_out": 800,
        "sft_batch": 32,
        "grpo_steps": 60,
        "grpo_batch": 64,
        "generations": 8,
        "learning_rate": 1e-4,
        "temperature": 1.0,
    },
}
HELD_OUT_SEED = 1000
# The two families this benchmark was first measured on: integer and list chains.
FAMILIES = ("arith", "lists")


def build_bank(bank: Any, verifier: Any, depths: list[int], held_out: int, pool: int,
               seed: int = 0):  # fmt: skip
    """(held-out tasks, pool tasks, held-out ids): each set has the same number of tasks of
    every depth; a third more are drawn since dedup drops some repeats. No pool task's
    program is a held-out program after normalisation, under any input (admission's dedup
    key holds the input, so it alone would let one through). `seed` draws other tasks for
    both sets."""
    from selfplay import procedural
    from selfplay.admission import Admission, AdmissionConfig
    from selfplay.admission.normalize import ast_hash

    admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))

    def draw(total: int, seed: int, taken: set[str], programs: set[str]) -> list[Any]:
        per = -(-total // len(depths))
        admission.admit(procedural.candidates("deduction", depths, 2 * per + 4, seed=seed,
                                              families=FAMILIES))  # fmt: skip
        fresh = [t for t in bank.tasks(source="procedural")
                 if t.id not in taken and ast_hash(t.program) not in programs]  # fmt: skip
        by_depth = {d: [t for t in fresh if t.metadata["level"] == d][:per] for d in depths}
        out = [t for d in depths for t in by_depth[d]]
        return out[:total]

    held = draw(held_out, HELD_OUT_SEED + seed, set(), set())
    held_ids = {t.id for t in bank.tasks(source="procedural")}  # drawn extras stay out too
    held_programs = {ast_hash(t.program) for t in bank.tasks(source="procedural")}
    return held, draw(pool, seed, held_ids, held_programs), held_ids


def items_of(bank: Any, ids: set[str]) -> list[Any]:
    from selfplay.export.select import ExportOptions, select

    chosen = select(bank, ExportOptions(sources=["procedural"], split="none")).items
    return [i for i in chosen if i.task.id in ids]


class Evaluator:
    """Greedy pass@1 of a model on the held-out items and on HumanEval's first problems."""

    def __init__(self, args: Any, verifier: Any, held: list[Any]) -> None:
        self.args, self.verifier, self.held = args, verifier, held

    def __call__(self, model: str, held: int | None = None, humaneval: bool = True) -> dict:
        """`held`: only that many held-out tasks, spread evenly over the set (every depth)."""
        from selfplay.backends import Sampling, make_backend
        from selfplay.evaluate import evaluate_bank, evaluate_humaneval

        out = {}
        with make_backend(self.args.backend, model) as backend:
            out["held_out"] = evaluate_bank(
                backend,
                self.verifier,
                spread(self.held, held),
                sampling=Sampling(temperature=0.0, max_new_tokens=24),
                benchmark="held-out",
            )
            if self.args.humaneval and humaneval:
                out["humaneval"] = evaluate_humaneval(
                    backend, self.verifier, limit=self.args.humaneval
                )
        return out


def spread(items: list[Any], n: int | None) -> list[Any]:
    """`n` of `items` taken at even strides (the held-out set is in depth order)."""
    if n is None or n >= len(items):
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def restrict(report: Any, ids: set[str]) -> Any:
    """`report` on the problems in `ids` only (the paired test needs the same problems)."""
    from dataclasses import replace

    from selfplay.evaluate import pass1_interval

    rows = [r for r in report.rows if r["task_id"] in ids]
    rate = sum(r["passed"] for r in rows) / len(rows)
    return replace(report, problems=len(rows), rows=rows, pass_at_k={"pass@1": rate},
                   interval=pass1_interval([[r["passed"]] for r in rows]))  # fmt: skip


def solver_config(args: Any, samples: int) -> Any:
    from selfplay.config import SolverConfig

    return SolverConfig(samples=samples, temperature=args.temperature, literal_max_new_tokens=24)


def train_config(args: Any, method: str, model: str, steps: int, **extra: Any) -> Any:
    from selfplay.config import TrainConfig

    rate = (
        args.learning_rate if method == "sft" else (args.grpo_learning_rate or args.learning_rate)
    )
    common = {
        "method": method,
        "model": model,
        "max_steps": steps,
        "learning_rate": rate,
        "max_length": 256,
        "save_steps": 10_000,
        "seed": args.seed,
        "data": {
            "sources": ["procedural"],
            "held_out_fraction": 0.0,
            "tasks": list(getattr(args, "pool_ids", [])),
        },  # fmt: skip
    }
    if method == "sft":
        common |= {"batch_size": args.sft_batch}
        common["data"]["references"] = args.sft_data == "verified"
    else:
        common |= {
            "batch_size": args.grpo_batch,
            "grpo": {
                "scheduler": extra["scheduler"],
                "num_generations": args.generations,
                "temperature": args.temperature,
                "warmup_samples": args.warmup_samples,
            },
        }
    return TrainConfig.model_validate(common).check()


def run_sft(args, bank, verifier, clock, pool, held_ids, evaluate, work) -> dict[str, Any]:
    """Expert iteration: train on what is verified, attempt the pool again, repeat."""
    from selfplay.backends import make_backend
    from selfplay.backends.models import model_label
    from selfplay.solver import Solver
    from selfplay.training import train

    model, curve, names = args.model, [], []
    for it in range(1, args.iterations + 1):
        if it > 1:  # the new model's own attempts: what it solves now is the next data
            name = f"sft-sample-{it}"
            with make_backend(args.backend, model) as backend:
                solver = Solver(backend, verifier, solver_config(args, args.warmup_samples),
                                name=model_label(model), seed=args.seed + it)  # fmt: skip
                report = clock.run(name, solver.attempt, pool, step=it)
            bank.add_attempts(report.attempts)
            names.append(name)
        config = train_config(args, "sft", model, args.sft_steps)
        name = f"sft-train-{it}"
        result = clock.run(name, train, bank, config, work / f"sft-{it}", exclude=held_ids)
        names.append(name)
        model = result.path
        scores = clock.run(f"sft-eval-{it}", evaluate, model)
        curve.append({"iteration": it, "rows": result.rows, "cpu_s": clock.cpu_of(*names),
                      "loss": [e.get("loss") for e in result.log if "loss" in e],
                      "scores": scores})  # fmt: skip
    return {"model": model, "curve": curve, "cpu_s": clock.cpu_of(*names)}


def run_grpo(args, bank, clock, scheduler, held_ids, evaluate, work) -> dict[str, Any]:
    from selfplay.training import train

    config = train_config(args, "grpo", args.model, args.grpo_steps, scheduler=scheduler)
    name = f"grpo-{scheduler}"
    result = clock.run(f"{name}-train", train, bank, config, work / name, exclude=held_ids)
    scores = clock.run(f"{name}-eval", evaluate, result.path, held=args.arm_held_out,
                       humaneval=False)  # fmt: skip
    picks = bank.attempted_tasks(result.model_id)
    steps = [
        {k: e[k] for k in ("step", "reward", "frac_reward_zero_std") if k in e}
        for e in result.log
        if "reward" in e
    ]
    return {
        "model": result.path,
        "model_id": result.model_id,
        "cpu_s": clock.cpu_of(f"{name}-train"),
        "rollouts": result.rollouts,
        "steps": steps,
        "picked": picks[:: args.generations],
        "scores": scores,
    }


def summarise(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    from selfplay.evaluate import paired

    out = {}
    for name, report in after.items():
        ids = {r["task_id"] for r in report.rows}
        out[name] = {
            "problems": len(ids),
            "reasons": dict(Counter(r.get("reason", r.get("status")) for r in report.rows)),
            "pass@1": report.pass_at_k["pass@1"],
            "interval": report.interval,
            "paired": paired(restrict(before[name], ids), report),
        }
    return out


def chosen_rates(picked: list[str], warm: dict[str, float]) -> list[float]:
    """The warm-up pass rate of every task a scheduler picked (what it chose among)."""
    return [warm[t] for t in picked if t in warm]


def report_of(args, clock, before, arms, warm, held, pool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "config": {
            k: v for k, v in vars(args).items() if k not in ("out", "figure", "plot", "pool_ids")
        },
        "held_out_tasks": len(held),
        "pool_tasks": len(pool),
        "before": {
            n: {"pass@1": r.pass_at_k["pass@1"], "interval": r.interval} for n, r in before.items()
        },  # fmt: skip
        "warmup": {
            "tasks": len(warm),
            "solved_some": sum(v > 0 for v in warm.values()),
            "mean_pass_rate": round(sum(warm.values()) / max(1, len(warm)), 4),
        },
        "arms": {},
        "phases": clock.phases,
        "wall_s": round(time.perf_counter() - START),
    }
    shared = clock.cpu_of("warm-up")
    for name, arm in arms.items():
        final = arm["curve"][-1]["scores"] if "curve" in arm else arm["scores"]
        summary = summarise(before, final)
        cpu_min = (arm["cpu_s"] + shared) / 60
        gain = summary["held_out"]["paired"]["change"]
        entry = {
            "scores": summary,
            "cpu_minutes": round(cpu_min, 1),
            "gain_points_per_cpu_minute": round(100 * gain / cpu_min, 3) if cpu_min else None,
        }
        if "curve" in arm:
            entry["curve"] = [
                {"iteration": c["iteration"], "rows": c["rows"], "cpu_s": c["cpu_s"],
                 "loss_first_last": [c["loss"][0], c["loss"][-1]] if c["loss"] else None,
                 **{n: {"pass@1": r.pass_at_k["pass@1"], "interval": r.interval}
                    for n, r in c["scores"].items()}}
                for c in arm["curve"]
            ]  # fmt: skip
        else:
            rates = chosen_rates(arm["picked"], warm)
            steps = arm["steps"]
            entry |= {
                "rollouts": arm["rollouts"],
                "steps": steps,
                "groups_with_advantage": round(
                    sum(1 - s.get("frac_reward_zero_std", 1.0) for s in steps) / max(1, len(steps)),
                    4,
                ),
                "mean_reward": round(sum(s["reward"] for s in steps) / max(1, len(steps)), 4),
                "chosen_warmup_rates": rates,
                "chosen_at_frontier": round(sum(0 < r < 1 for r in rates) / max(1, len(rates)), 4),
            }
        out["arms"][name] = entry
    return out


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = result["arms"]
    color = {n: f"C{i}" for i, n in enumerate(arms)}
    grpo = {n: a for n, a in arms.items() if n.startswith("grpo")}
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    ax = axes[0]
    before = result["before"]["held_out"]
    shared = result["phases"].get("warm-up", {}).get("cpu_s", 0.0) / 60
    for n, a in arms.items():
        points = [(0.0, before)]
        if "curve" in a:  # expert iteration: one point per iteration
            points += [(shared + c["cpu_s"] / 60, c["held_out"]) for c in a["curve"]]
        else:  # a spread of the held-out set: its own before, on the same tasks
            from selfplay.evaluate import pass1_interval

            pair = a["scores"]["held_out"]["paired"]
            same = [[True]] * pair["before"] + [[False]] * (pair["problems"] - pair["before"])
            points = [(0.0, {"pass@1": pair["before"] / pair["problems"],
                             "interval": pass1_interval(same)})]  # fmt: skip
            points.append((a["cpu_minutes"], a["scores"]["held_out"]))
        xs = [x for x, _ in points]
        ys = [p["pass@1"] for _, p in points]
        ax.errorbar(xs, ys, yerr=[[y - p["interval"][0] for y, (_, p) in zip(ys, points, strict=True)],
                                  [p["interval"][1] - y for y, (_, p) in zip(ys, points, strict=True)]],
                    marker="o", capsize=4, color=color[n], label=n)  # fmt: skip
    ax.set_xlabel("CPU minutes (warm-up, sampling and training)")
    ax.set_ylabel("held-out pass@1 (95% interval)")
    ax.set_title("held-out pass@1 against compute (grpo: 150-task spread)")
    ax.legend(fontsize=7)
    ax = axes[1]
    for n, a in grpo.items():
        steps = [s["step"] for s in a["steps"]]
        ax.plot(steps, [s["reward"] for s in a["steps"]], marker=".", color=color[n],
                label=f"{n} reward")  # fmt: skip
        ax.plot(steps, [1 - s.get("frac_reward_zero_std", 1.0) for s in a["steps"]],
                color=color[n], ls="--", label=f"{n} groups with advantage")  # fmt: skip
    ax.set_xlabel("GRPO step")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("rollout reward (solid), groups with an advantage (dashed)")
    if grpo:
        ax.legend(fontsize=7)
    ax = axes[2]
    bins = ("never solved", "sometimes", "always")
    width = 0.8 / max(1, len(grpo))
    for j, (n, a) in enumerate(grpo.items()):
        rates = a["chosen_warmup_rates"]
        counts = [sum(r == 0 for r in rates), sum(0 < r < 1 for r in rates),
                  sum(r == 1 for r in rates)]  # fmt: skip
        ax.bar([b + j * width for b in range(3)], counts, width, color=color[n], label=n)
    ax.set_xticks([b + 0.4 - width / 2 for b in range(3)], bins)
    ax.set_xlabel("warm-up record of the tasks each scheduler picked")
    ax.set_title("what each scheduler chose")
    if grpo:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=list(PRESETS), default="cpu")
    ap.add_argument("--model")
    ap.add_argument("--backend", choices=["transformers", "vllm"])
    ap.add_argument("--depths", help="procedural depths, e.g. 1,2")
    ap.add_argument("--held-out", type=int, help="held-out tasks (never trained on)")
    ap.add_argument("--pool", type=int, help="training pool tasks")
    ap.add_argument("--humaneval", type=int, help="HumanEval problems, the first N (0: none)")
    ap.add_argument("--warmup-samples", type=int)
    ap.add_argument("--arms", help="comma list of sft and grpo:<scheduler>")
    ap.add_argument("--iterations", type=int, help="expert iterations of the sft arm")
    ap.add_argument("--sft-steps", type=int)
    ap.add_argument("--sft-batch", type=int)
    ap.add_argument("--sft-data", choices=["attempts", "verified"],
                    help="attempts: the model's passing attempts only (expert iteration); "
                    "verified: also the sandbox's answers to the pool")  # fmt: skip
    ap.add_argument("--grpo-steps", type=int)
    ap.add_argument("--arm-held-out", type=int,
                    help="grpo arms: evaluate on this many held-out tasks (spread over the set)")  # fmt: skip
    ap.add_argument("--grpo-batch", type=int)
    ap.add_argument("--generations", type=int)
    ap.add_argument("--learning-rate", type=float)
    ap.add_argument("--grpo-learning-rate", type=float,
                    help="grpo arms' learning rate (default: --learning-rate)")  # fmt: skip
    ap.add_argument("--temperature", type=float)
    ap.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of training and of the tasks drawn (held out: 1000 + seed)",
    )
    ap.add_argument("--out", type=Path, help="write the JSON here as well")
    ap.add_argument("--figure", type=Path, default=ROOT / "benchmarks/figures/frontier_gain.png")
    ap.add_argument("--plot", type=Path, help="only redraw the figure from a result JSON")
    ap.add_argument("--dry-run", action="store_true",
                    help="build the bank and every arm's configuration, then stop")  # fmt: skip
    args = ap.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def plan(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """Every arm with its training configuration, validated; the dry run stops here."""
    from curricula import scheduler_names
    from selfplay.backends.models import resolve_model

    resolve_model(args.model)  # an unknown model is one clear error before any work
    out = []
    for arm in args.arms.split(","):
        method, _, scheduler = arm.partition(":")
        if method == "sft" and not scheduler:
            out.append((arm, train_config(args, "sft", args.model, args.sft_steps)))
        elif method == "grpo" and scheduler in scheduler_names():
            cfg = train_config(args, "grpo", args.model, args.grpo_steps, scheduler=scheduler)
            out.append((arm, cfg))
        else:
            raise SystemExit(f"unknown arm {arm!r}: use sft or grpo:<scheduler>")
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.plot:
        result = json.loads(args.plot.read_text(encoding="utf-8"))
        plot(result, args.figure)
        return result
    from pydantic import ValidationError

    from selfplay.backends.models import ModelNotFound
    from selfplay.config import ConfigError

    try:
        arms_plan = plan(args)
    except (ModelNotFound, ConfigError, ValidationError) as exc:
        raise SystemExit(f"frontier_gain: {str(exc).splitlines()[0]}") from None
    depths = [int(d) for d in args.depths.split(",")]

    from pipelines.train import quiet_libraries
    from selfplay.backends import make_backend
    from selfplay.backends.models import model_label
    from selfplay.solver import Solver
    from selfplay.solver.warmup import warm_up
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    quiet_libraries()
    work = Path(tempfile.mkdtemp(prefix="frontier-gain-"))
    clock = Clock()
    try:
        with Verifier(workers=2, timeout_s=5.0) as verifier, Bank(work / "bank.db") as bank:
            held, pool, held_ids = clock.run("tasks", build_bank, bank, verifier, depths,
                                             args.held_out, args.pool, args.seed)  # fmt: skip
            held_items = items_of(bank, {t.id for t in held})
            args.pool_ids = [t.id for t in pool]  # training sees the pool and nothing else
            say(f"{len(held_items)} held-out tasks, {len(pool)} pool tasks")
            if args.dry_run:
                dry = {"held_out_tasks": len(held_items), "pool_tasks": len(pool),
                       "arms": {n: c.model_dump() for n, c in arms_plan}}  # fmt: skip
                print(json.dumps(dry, indent=2))
                return dry
            evaluate = Evaluator(args, verifier, held_items)
            before = clock.run("before", evaluate, args.model)
            with make_backend(args.backend, args.model) as backend:
                solver = Solver(backend, verifier, solver_config(args, args.warmup_samples),
                                name=model_label(args.model), seed=args.seed)  # fmt: skip
                warm = clock.run("warm-up", warm_up, bank, solver, pool)
            arms: dict[str, Any] = {}
            for name, _ in arms_plan:
                if name == "sft":
                    arms[name] = run_sft(args, bank, verifier, clock, pool, held_ids,
                                         evaluate, work)  # fmt: skip
                else:
                    arms[name] = run_grpo(args, bank, clock, name.split(":")[1], held_ids,
                                          evaluate, work)  # fmt: skip
                if args.out:  # a run cut off later keeps the arms it finished
                    partial = report_of(args, clock, before, arms, warm.pass_rates, held_items,
                                        pool)  # fmt: skip
                    args.out.with_suffix(".partial.json").write_text(
                        json.dumps(partial, indent=2) + "\n", encoding="utf-8"
                    )
            result = report_of(args, clock, before, arms, warm.pass_rates, held_items, pool)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    plot(result, args.figure)
    return result


if __name__ == "__main__":
    main()
