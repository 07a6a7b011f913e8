"""Does self-play teach beyond the generator? Held-out pass@1 before and after, per arm, on
tasks of the training families, families never trained on, the model's own held-out
proposals and all of HumanEval.

    python benchmarks/selfplay_gain.py --proposal-banks a.db,b.db --out benchmarks/figures/selfplay_gain.json
    python benchmarks/selfplay_gain.py --preset gpu --proposal-banks ...     # one large GPU
    python benchmarks/selfplay_gain.py --plot benchmarks/figures/selfplay_gain.json

The proposal banks are banks of `selfplay run` rounds (the model's own admitted proposals);
`python benchmarks/proposer_yield.py --seeds 0,1,2 --train --keep DIR` leaves three of them.

1. Sets (`gain_sets.py`): a training pool (procedural tasks of the training families and half
   of the proposals' normalised programs) and four held-out sets no pool program appears in,
   under any input: `in_family`, `other_families` (families the pool never has),
   `proposals` (the other half) and `humaneval` (all 164 problems).
2. Before: greedy pass@1 of the starting model on every held-out set.
3. Warm-up: the starting model attempts every pool task `--warmup-samples` times; every
   arm's scheduler starts from these estimates, and they count in every arm's budget.
4. Arms, each from the starting model:
   - `ei:<scheduler>`: expert iteration (`selfplay train --method ei`) on the model's own
     verified attempts only, `--iterations` times: the scheduler picks `--ei-tasks` pool
     tasks, the model samples `--ei-samples` answers to each (the same generation budget
     in every ei arm), SFT on the passing ones;
   - `sft:verified`: SFT on the sandbox-computed answers to the pool (and the warm-up's
     passing attempts), as many steps as an ei arm trains: learning the interpreter, for
     comparison;
   - `grpo:<scheduler>`: GRPO with the curriculum (the gpu preset).
   With `--train-average W` below 1 (the cpu preset: 0.7) every arm ends as `selfplay train
   --average W` does, its trained model averaged once with the start; that model is the
   arm's final one, and each raw iteration is scored in-family for the curve.
5. After: the same evaluations, paired with Before problem by problem (McNemar's exact
   test), Wilson intervals; per iteration the in-family curve and the passing samples per
   1,000 generated (what a scheduler buys); gain per CPU-minute, the sandbox workers' and
   the engines' CPU included.

Writes the JSON (with --out) and benchmarks/figures/selfplay_gain.png.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from phase_clock import Clock, say  # noqa: E402

SETS = ("in_family", "other_families", "proposals", "humaneval")
PRESETS: dict[str, dict[str, Any]] = {
    # 2 CPU cores, about 90 minutes: the bundled 0.5B model, levels 1 and 2.
    "cpu": {
        "model": "bundled",
        "backend": "vllm",
        "train_families": "arith,lists,strings,bits",
        "other_families": "counting,nested,recursion,search",
        "levels": "1,2",
        # Their knob is often the input, so levels 1 and 2 hold too few distinct programs.
        "other_levels": "1,2,3",
        "in_family": 300,
        "other_families_n": 300,
        "proposals": 300,
        "pool_procedural": 240,
        "pool_proposals": 240,
        # The bundled seeds (45 of them codegen) as practice at writing programs: with all
        # 104 (`--pool-seeds 104`) SFT on their long rows at batch 8 ran out of 24 GB.
        "pool_seeds": 0,
        "humaneval": 164,
        "warmup_samples": 2,
        "arms": "ei:uniform,ei:learnability,ei:frontier,sft:verified",
        # Three iterations reach +15 in-family under `frontier` (docs/training.md).
        "iterations": 3,
        "ei_tasks": 96,
        "ei_samples": 4,
        "sft_steps": 12,
        "sft_batch": 8,
        # sft:verified's long rows, 36 steps at batch 8 in one pass, ran out of 24 GB.
        "verified_accumulation": 2,
        "learning_rate": 3e-4,
        "temperature": 1.0,
        "value_tokens": 48,
        "program_tokens": 384,
        "grpo_steps": 8,
        # Also report each arm's model averaged with the starting one at these weights
        # (`selfplay/training/average.py`), e.g. "0.5": each an arm `<arm>@0.5`.
        "average": "",
        # Every arm trains as `selfplay train --average 0.7` does: the model it ends with is
        # start + 0.7 x (trained - start). Three raw iterations cost HumanEval 4 to 7 points;
        # averaged at 0.7 they kept the in-family gain (docs/training.md).
        "train_average": 0.7,
    },
    # One large GPU: a 1.5B coder, deeper levels, more of everything, GRPO arms too.
    "gpu": {
        "model": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
        "backend": "vllm",
        "train_families": "arith,lists,strings,bits",
        "other_families": "counting,nested,recursion,search",
        "levels": "1,2,3,4",
        "other_levels": "1,2,3,4",
        "in_family": 800,
        "other_families_n": 800,
        "proposals": 600,
        "pool_procedural": 2000,
        "pool_proposals": 1000,
        "pool_seeds": 104,
        "humaneval": 164,
        "warmup_samples": 4,
        "arms": "ei:uniform,ei:learnability,ei:frontier,sft:verified,grpo:learnability",
        "iterations": 3,
        "ei_tasks": 512,
        "ei_samples": 8,
        "sft_steps": 60,
        "sft_batch": 16,
        "verified_accumulation": 1,
        "learning_rate": 1e-4,
        "temperature": 1.0,
        "value_tokens": 64,
        "program_tokens": 512,
        "grpo_steps": 100,
        "average": "",
        "train_average": 1.0,
    },
}


class Evaluator:
    """Greedy pass@1 of a model on the held-out sets it is asked for."""

    def __init__(self, args: Any, verifier: Any, held: dict[str, list[Any]]) -> None:
        self.args, self.verifier, self.held = args, verifier, held

    def __call__(self, model: str, sets: tuple[str, ...] = SETS) -> dict[str, Any]:
        from selfplay import kinds
        from selfplay.backends import Sampling, make_backend
        from selfplay.evaluate import evaluate_bank, evaluate_humaneval

        out = {}
        with make_backend(self.args.backend, model) as backend:
            for name in sets:
                if name == "humaneval":
                    if self.args.humaneval:
                        out[name] = evaluate_humaneval(backend, self.verifier,
                                                       limit=self.args.humaneval)  # fmt: skip
                    continue
                items = self.held.get(name) or []
                if not items:
                    continue
                parts = []
                for value in (True, False):
                    some = [i for i in items if (kinds.get(i.task.kind).answer == "value") == value]
                    if some:
                        budget = self.args.value_tokens if value else self.args.program_tokens
                        parts.append(evaluate_bank(
                            backend, self.verifier, some, benchmark=name,
                            sampling=Sampling(temperature=0.0, max_new_tokens=budget),
                        ))  # fmt: skip
                out[name] = merge(parts)
        return out


def merge(reports: list[Any]) -> Any:
    """One-sample reports on disjoint problems as one."""
    from dataclasses import replace

    from selfplay.evaluate import pass1_interval

    rows = [r for report in reports for r in report.rows]
    correct = [[r["passed"]] for r in rows]
    rate = sum(r["passed"] for r in rows) / len(rows)
    return replace(reports[0], problems=len(rows), rows=rows, pass_at_k={"pass@1": rate},
                   interval=pass1_interval(correct))  # fmt: skip


def train_config(args: Any, method: str, model: str, **extra: Any) -> Any:
    from selfplay.config import TrainConfig

    common: dict[str, Any] = {
        "method": method,
        "model": model,
        "max_steps": args.sft_steps,
        "batch_size": args.sft_batch,
        "learning_rate": args.learning_rate,
        "max_length": 512,
        "save_steps": 10_000,
        "seed": args.seed,
        "generation_backend": args.backend,
        "data": {"held_out_fraction": 0.0, "tasks": list(getattr(args, "pool_ids", []))},
    }
    if method == "ei":
        # Each iteration is its own `train` call: one seed for all would have `uniform` draw
        # the same tasks every iteration (iteration 1 keeps the run's seed).
        common["seed"] = args.seed + 1000 * (extra.get("iteration", 1) - 1)
        common["ei"] = {"iterations": 1, "scheduler": extra["scheduler"], "tasks": args.ei_tasks,
                        "samples": args.ei_samples, "temperature": args.temperature}  # fmt: skip
    elif method == "sft":
        common["max_steps"] = args.sft_steps * args.iterations  # as many steps as an ei arm
        common["data"]["references"] = True
        # The same batch of sft_batch rows per step, taken in `verified_accumulation` passes.
        common["batch_size"] = max(1, args.sft_batch // args.verified_accumulation)
        common["gradient_accumulation_steps"] = args.verified_accumulation
        common["average"] = args.train_average
    else:
        common |= {"max_steps": args.grpo_steps, "batch_size": 8,
                   "grpo": {"scheduler": extra["scheduler"], "num_generations": 4,
                            "temperature": args.temperature, "warmup_samples": 0}}  # fmt: skip
    return TrainConfig.model_validate(common).check()


def run_ei(args, bank, clock, arm, scheduler, held_ids, evaluate, work) -> dict[str, Any]:
    from selfplay.training import TrainError, train

    model, curve, names = args.model, [], []
    for it in range(1, args.iterations + 1):
        config = train_config(args, "ei", model, scheduler=scheduler, iteration=it)
        name = f"{arm}-train-{it}"
        try:
            result = clock.run(name, train, bank, config, work / f"{arm}-{it}", exclude=held_ids)
            info, path = result.log[0], result.path
        except TrainError as e:  # nothing passed: the model stays as it was
            say(f"{name}: {e}")
            info, path = {"sampled": args.ei_tasks * args.ei_samples, "passed": 0, "rows": 0,
                          "truncated": None, "picked": []}, model  # fmt: skip
        names.append(name)
        # The arm's final model is scored on every set; an averaged run's raw last iteration
        # only in-family, for the curve (its averaged model is scored on every set below).
        final = it == args.iterations and args.train_average == 1.0
        scores = clock.run(f"{arm}-eval-{it}", evaluate, path,
                           SETS if final else ("in_family",))  # fmt: skip
        curve.append({"iteration": it, "sampled": info["sampled"], "passed": info["passed"],
                      "truncated": info.get("truncated"), "rows": info["rows"],
                      "picked_warmup": picked_profile(args, info.get("picked", [])),
                      "passing_per_1000": round(1000 * info["passed"] / max(1, info["sampled"]), 1),
                      "cpu_s": clock.cpu_of(*names), "scores": scores})  # fmt: skip
        if path != model and model != args.model and not args.keep:
            shutil.rmtree(model, ignore_errors=True)  # the previous iteration's model
        model = path
    entry = {"model": model, "curve": curve, "cpu_s": clock.cpu_of(*names)}
    if args.train_average < 1.0:
        entry |= finish_average(args, clock, arm, model, evaluate, work)
        entry["cpu_s"] += clock.cpu_of(f"{arm}-average")
    return entry


def finish_average(args, clock, arm, model, evaluate, work) -> dict[str, Any]:
    """What `selfplay train --method ei --average W` ends with: the last iteration's model
    averaged once with the run's start, scored on every set as the arm's final model."""
    from selfplay.backends.models import local_model_dir, resolve_model
    from selfplay.training.average import average

    start = local_model_dir(resolve_model(args.model))
    # When no iteration passed anything the model is still the start, named as a spec.
    target = copy_model(local_model_dir(resolve_model(model)),
                        work / f"{arm.replace(':', '-')}-averaged")  # fmt: skip
    clock.run(f"{arm}-average", average, start, target, args.train_average)
    scores = clock.run(f"{arm}-eval", evaluate, str(target))
    return {"raw": model, "model": str(target), "scores": scores,
            "averaged": args.train_average}  # fmt: skip


def picked_profile(args: Any, picked: list[str]) -> dict[str, int]:
    """How the warm-up had scored the tasks an iteration picked ('0/2': never solved in two
    tries, ...): what a scheduler had to go on, the reason its picks pass as often as they
    do."""
    from collections import Counter

    warm = getattr(args, "warmup_record", {})
    return dict(sorted(Counter(warm.get(t, "untried") for t in picked).items()))


def run_once(args, bank, clock, arm, method, scheduler, held_ids, evaluate, work) -> dict:
    from selfplay.training import train

    config = train_config(args, method, args.model, scheduler=scheduler)
    result = clock.run(f"{arm}-train", train, bank, config, work / arm.replace(":", "-"),
                       exclude=held_ids)  # fmt: skip
    scores = clock.run(f"{arm}-eval", evaluate, result.path)
    entry = {"model": result.path, "rows": result.rows, "cpu_s": clock.cpu_of(f"{arm}-train"),
             "scores": scores}  # fmt: skip
    if args.train_average < 1.0:  # `train` averaged it (config.average)
        entry["averaged"] = args.train_average
    return entry


def run_averages(args, clock, arm, entry, evaluate, work) -> dict[str, Any]:
    """`<arm>@<w>`: the arm's model averaged with the starting one at each `--average` weight,
    evaluated on every set (the averaging's seconds added to the arm's CPU)."""
    from selfplay.backends.models import local_model_dir, resolve_model
    from selfplay.training.average import average

    start = local_model_dir(resolve_model(args.model))
    rows = entry["rows"] if "rows" in entry else sum(c["rows"] for c in entry["curve"])
    out = {}
    for text in filter(None, args.average.split(",")):
        weight = float(text)
        name = f"{arm}@{weight:g}"
        source = local_model_dir(resolve_model(entry.get("raw", entry["model"])))
        target = copy_model(source, work / name.replace(":", "-"))
        clock.run(f"{name}-average", average, start, target, weight)
        scores = clock.run(f"{name}-eval", evaluate, str(target))
        out[name] = {"model": str(target), "rows": rows, "scores": scores, "averaged": weight,
                     "cpu_s": entry["cpu_s"] + clock.cpu_of(f"{name}-average")}  # fmt: skip
        if args.keep:
            copy_model(target, args.keep / name.replace(":", "-"))
        shutil.rmtree(target, ignore_errors=True)
    return out


def copy_model(source: str | Path, target: Path) -> Path:
    """`source` copied to `target`, whatever was there before."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    return target


def summarise(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    from selfplay.evaluate import paired

    return {
        name: {
            "problems": report.problems,
            "pass@1": report.pass_at_k["pass@1"],
            "interval": report.interval,
            "paired": paired(before[name], report),
        }
        for name, report in after.items()
    }


def report_of(args, clock, sets, before, arms, started) -> dict[str, Any]:
    out: dict[str, Any] = {
        "config": {
            k: v
            for k, v in vars(args).items()
            if k not in ("out", "figure", "plot", "tables", "pool_ids", "keep", "warmup_record")
        },  # fmt: skip
        "sets": sets.counts,
        "before": {
            n: {"pass@1": r.pass_at_k["pass@1"], "interval": r.interval} for n, r in before.items()
        },  # fmt: skip
        "arms": {},
        "phases": clock.phases,
    }
    shared = clock.cpu_of("warm-up")
    for name, arm in arms.items():
        final = arm["scores"] if "scores" in arm else arm["curve"][-1]["scores"]
        scores = summarise(before, final)
        cpu_min = (arm["cpu_s"] + shared) / 60
        gain = scores["in_family"]["paired"]["change"] if "in_family" in scores else 0.0
        entry: dict[str, Any] = {
            "scores": scores,
            "cpu_minutes": round(cpu_min, 1),
            "gain_points_per_cpu_minute": round(100 * gain / cpu_min, 3) if cpu_min else None,
        }
        if "curve" in arm:
            curve = arm["curve"]
            entry["passing_per_1000"] = round(
                1000 * sum(c["passed"] for c in curve) / max(1, sum(c["sampled"] for c in curve)), 1
            )
            entry["curve"] = [
                {k: c[k] for k in ("iteration", "sampled", "passed", "truncated", "rows",
                                   "passing_per_1000", "picked_warmup", "cpu_s")}
                | {n: {"pass@1": r.pass_at_k["pass@1"], "interval": r.interval}
                   for n, r in c["scores"].items()}
                for c in curve
            ]  # fmt: skip
        else:
            entry["rows"] = arm["rows"]
        if "averaged" in arm:
            entry["averaged"] = arm["averaged"]
        out["arms"][name] = entry
    out["wall_s"] = round(time.perf_counter() - started)
    return out


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = result["arms"]
    names = [s for s in SETS if s in result["before"]]
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    ax = axes[0]
    width = 0.8 / (len(arms) + 1)
    series = [("before", {n: result["before"][n] for n in names})]
    series += [(a, {n: arms[a]["scores"][n] for n in names if n in arms[a]["scores"]})
               for a in arms]  # fmt: skip
    for j, (label, points) in enumerate(series):
        xs = [i + j * width for i, n in enumerate(names) if n in points]
        ys = [points[n]["pass@1"] for n in names if n in points]
        lo = [
            y - points[n]["interval"][0]
            for y, n in zip(ys, [n for n in names if n in points], strict=True)
        ]
        hi = [
            points[n]["interval"][1] - y
            for y, n in zip(ys, [n for n in names if n in points], strict=True)
        ]
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=label, color=f"C{j}")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))], names, fontsize=8)
    ax.set_ylabel("greedy pass@1 (95% Wilson interval)")
    ax.set_title("held-out sets: before and after each arm")
    ax.set_ylim(0, 1.05)
    # Below the axes: inside, the legend would cover the HumanEval bars.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3)
    ax = axes[1]
    for j, (a, entry) in enumerate(arms.items(), start=1):
        if "curve" not in entry:
            continue
        points = [(0, result["before"]["in_family"])]
        points += [(c["iteration"], c["in_family"]) for c in entry["curve"]]
        ys = [p["pass@1"] for _, p in points]
        ax.errorbar([x for x, _ in points], ys,
                    yerr=[[y - p["interval"][0] for y, (_, p) in zip(ys, points, strict=True)],
                          [p["interval"][1] - y for y, (_, p) in zip(ys, points, strict=True)]],
                    marker="o", capsize=4, color=f"C{j}", label=a)  # fmt: skip
        if "averaged" in entry:  # where the raw last iteration ended, averaged with the start
            ax.plot([points[-1][0]], [entry["scores"]["in_family"]["pass@1"]], marker="*",
                    markersize=12, color=f"C{j}", linestyle="none",
                    label=f"{a} averaged at {entry['averaged']:g}")  # fmt: skip
    ax.set_xlabel("expert iteration")
    ax.set_xticks(range(0, 1 + max([len(e.get("curve", [])) for e in arms.values()] + [1])))
    ax.set_ylabel("in-family held-out pass@1")
    ax.set_title("learning curves (95% intervals)")
    ax.legend(fontsize=7)
    ax = axes[2]
    for j, (a, entry) in enumerate(arms.items(), start=1):
        if "curve" in entry:
            its = [c["iteration"] for c in entry["curve"]]
            ax.plot(its, [c["passing_per_1000"] for c in entry["curve"]], marker="o",
                    color=f"C{j}", label=a)  # fmt: skip
    ax.set_xlabel("expert iteration")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("passing samples per 1,000 generated")
    ax.set_title("what each scheduler's picks bought")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def tables(result: dict[str, Any]) -> str:
    """The result as the markdown tables of docs/training.md: every arm and set with its
    interval, gained/lost and p; then per iteration what the picks bought."""
    names = {"in_family": "in-family", "other_families": "other families",
             "proposals": "proposals", "humaneval": "HumanEval"}  # fmt: skip
    lines = ["| arm | set | before | after [95%] | gained / lost | McNemar p |",
             "|---|---|---:|---|---:|---:|"]  # fmt: skip
    for arm, entry in result["arms"].items():
        for i, (name, score) in enumerate(entry["scores"].items()):
            paired, lo_hi = score["paired"], score["interval"]
            after = f"{score['pass@1']:.3f} [{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]"
            if paired["p_value"] < 0.01:
                after = f"**{after.split(' ')[0]}** " + after.split(" ", 1)[1]
            lines.append(
                f"| {f'`{arm}`' if i == 0 else ''} | {names[name]} | "
                f"{result['before'][name]['pass@1']:.3f} | {after} | "
                f"{paired['gained']} / {paired['lost']} | {paired['p_value']:.2g} |"
            )
    lines += ["", "| arm | iteration | passing per 1,000 | rows | cut off | picked (warm-up score: "
              "tasks) | in-family after it |", "|---|---:|---:|---:|---:|---|---:|"]  # fmt: skip
    for arm, entry in result["arms"].items():
        for c in entry.get("curve", []):
            picked = ", ".join(f"{k}: {v}" for k, v in (c.get("picked_warmup") or {}).items())
            lines.append(f"| `{arm}` | {c['iteration']} | {c['passing_per_1000']} | {c['rows']} | "
                         f"{c['truncated']} | {picked} | {c['in_family']['pass@1']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=list(PRESETS), default="cpu")
    ap.add_argument("--proposal-banks", help="comma list of banks of selfplay run rounds")
    for key, value in PRESETS["cpu"].items():
        flag = "--" + key.replace("_", "-")
        ap.add_argument(flag, type=type(value), help=f"(cpu preset: {value})")
    ap.add_argument("--seed", type=int, default=0, help="draws other tasks for every set")
    ap.add_argument("--keep", type=Path, help="save each arm's trained model under DIR/<arm>")
    ap.add_argument("--out", type=Path, help="write the JSON here as well")
    ap.add_argument("--figure", type=Path, default=ROOT / "benchmarks/figures/selfplay_gain.png")
    ap.add_argument("--plot", type=Path, help="only redraw the figure from a result JSON")
    ap.add_argument("--tables", type=Path, help="only print a result JSON as markdown tables")
    ap.add_argument("--dry-run", action="store_true", help="build the sets and plan, then stop")
    args = ap.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def plan(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(arm, method, scheduler) for every arm, validated before any work."""
    from curricula import scheduler_names
    from selfplay.backends.models import resolve_model

    resolve_model(args.model)
    if not 0.0 <= args.train_average <= 1.0:
        raise SystemExit(f"--train-average {args.train_average} is outside 0 to 1")
    out = []
    for arm in args.arms.split(","):
        method, _, scheduler = arm.partition(":")
        if method == "sft" and scheduler == "verified":
            out.append((arm, "sft", "uniform"))
        elif method in ("ei", "grpo") and scheduler in scheduler_names():
            out.append((arm, method, scheduler))
        else:
            raise SystemExit(f"unknown arm {arm!r}: use ei:<scheduler>, sft:verified or "
                             "grpo:<scheduler>")  # fmt: skip
        train_config(args, out[-1][1], args.model, scheduler=out[-1][2])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.tables:
        result = json.loads(args.tables.read_text(encoding="utf-8"))
        print(tables(result))
        return result
    if args.plot:
        result = json.loads(args.plot.read_text(encoding="utf-8"))
        plot(result, args.figure)
        return result
    started = time.perf_counter()
    arms_plan = plan(args)

    import gain_sets

    from pipelines.train import quiet_libraries
    from selfplay.backends import make_backend
    from selfplay.backends.models import local_model_dir, model_label, resolve_model
    from selfplay.config import SolverConfig
    from selfplay.solver import Solver
    from selfplay.solver.warmup import warm_up
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    quiet_libraries()
    work = Path(tempfile.mkdtemp(prefix="selfplay-gain-"))
    clock = Clock()
    try:
        with Verifier(workers=2, timeout_s=5.0) as verifier, Bank(work / "bank.db") as bank:
            sets = clock.run("sets", gain_sets.build, bank, verifier, args)
            say(f"sets: {sets.counts}")
            args.pool_ids = [t.id for t in sets.pool]
            held_ids = {i.task.id for items in sets.held.values() for i in items}
            if args.dry_run:
                dry = {"sets": sets.counts, "arms": [a for a, _, _ in arms_plan]}
                print(json.dumps(dry, indent=2))
                return dry
            evaluate = Evaluator(args, verifier, sets.held)
            before = clock.run("before", evaluate, args.model)
            solver_config = SolverConfig(samples=args.warmup_samples, temperature=args.temperature)
            with make_backend(args.backend, args.model) as backend:
                solver = Solver(backend, verifier, solver_config, name=model_label(args.model),
                                seed=args.seed)  # fmt: skip
                clock.run("warm-up", warm_up, bank, solver, sets.pool)
            stats = bank.solve_stats(model_label(args.model))
            args.warmup_record = {t: f"{s}/{a}" for t, a, s in zip(
                stats.index, stats["attempts"], stats["successes"], strict=True) if a}  # fmt: skip
            arms: dict[str, Any] = {}
            for arm, method, scheduler in arms_plan:
                if method == "ei":
                    arms[arm] = run_ei(args, bank, clock, arm, scheduler, held_ids, evaluate,
                                       work)  # fmt: skip
                else:
                    arms[arm] = run_once(args, bank, clock, arm, method, scheduler, held_ids,
                                         evaluate, work)  # fmt: skip
                if args.keep:
                    copy_model(local_model_dir(resolve_model(arms[arm]["model"])),
                               args.keep / arm.replace(":", "-"))  # fmt: skip
                arms.update(run_averages(args, clock, arm, arms[arm], evaluate, work))
                if args.out:  # a run cut off later keeps the arms it finished
                    partial = report_of(args, clock, sets, before, arms, started)
                    args.out.with_suffix(".partial.json").write_text(
                        json.dumps(partial, indent=2) + "\n", encoding="utf-8"
                    )
                for entry in arms.values():  # only the last arm's models are still needed
                    for key in ("model", "raw"):
                        if entry.get(key, args.model) != args.model and entry is not arms[arm]:
                            shutil.rmtree(entry[key], ignore_errors=True)
            result = report_of(args, clock, sets, before, arms, started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
        args.out.with_suffix(".partial.json").unlink(missing_ok=True)
    plot(result, args.figure)
    return result


if __name__ == "__main__":
    main()
