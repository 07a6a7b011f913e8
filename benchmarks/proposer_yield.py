"""What the proposer yields on the bundled model, and whether training it on its own record
makes it yield more at the solver's frontier.

Part 1, the default round: `selfplay run --rounds 1` on a fresh bank, once per seed. Per
seed: proposals, admitted (by kind), the frontier (admitted tasks the round's solver solved
sometimes but not always over its 8 attempts), the health figures and the wall time,
model load included. Targets: at least 30% admitted, every kind admitted at least once, at
least 25% of the admitted at the frontier, within 10 minutes.

Part 2, the proposer learns (`--train`): `selfplay train --role proposer --method grpo`
(`selfplay.training.proposer_rl`: on-policy RL on Absolute Zero's learnability reward, the
frozen bundled model as solver) trains the bundled proposer for `--steps` steps on a copy of
the first seed's bank. Two copies of that bank as it was before training then run one
round each with the same seed and a fixed count of programs, `--per-kind` a kind (64: 256
proposals an arm; untrained: the bundled model proposes; trained: the trained one). Both
arms' admitted tasks are attempted by the same solver, the bundled model, 8 times each, so
the frontier is measured against one solver. Reported per arm: proposals, admitted,
frontier, frontier per 100 proposals with its Wilson interval, duplicates (exact or near,
as admission counts them) and the other rejection reasons, diversity (distinct program
shapes / admitted); Fisher's exact two-sided p for frontier per proposal, trained against
untrained; and the training curve (mean reward with its 95% interval, frontier share, KL to
the start, seconds per step), drawn in `--figure`.

    python benchmarks/proposer_yield.py --seeds 0,1,2 --train --out benchmarks/figures/proposer_yield.json

With `--keep DIR` every finished piece stays in DIR (the banks, the training run, each
arm's round and its solving), and the same command run again continues where it stopped.
`--train-only --keep DIR` runs part 2 alone on DIR's bank of the first seed (part 1 run before
with `--keep DIR`) and keeps the rounds already in `--out`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from math import comb
from pathlib import Path

from selfplay.admission.normalize import program_shape
from selfplay.config import SolverConfig
from task_bank.store import Bank

KINDS = ("deduction", "abduction", "induction", "codegen")
ATTEMPTS = SolverConfig().samples  # the default round's attempts per task


def selfplay(*args: str) -> subprocess.CompletedProcess:
    res = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True
    )
    if res.returncode != 0:
        sys.exit(f"selfplay {' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return res


def new_tasks(bank: Path, round_id: int) -> list:
    with Bank(bank) as b:
        return [b.get(i) for i in b.new_task_ids(round_id, "selfplay")]


def default_round(seed: int, workdir: Path) -> dict:
    bank = workdir / f"seed-{seed}.db"
    config = workdir / f"seed-{seed}.yaml"
    config.write_text(f"seed: {seed}\n")
    start = time.perf_counter()
    selfplay("run", "--bank", str(bank), "--rounds", "1", "--config", str(config))
    wall = time.perf_counter() - start
    metrics = bank.with_name(bank.stem + ".metrics.jsonl").read_text().splitlines()[-1]
    m = json.loads(metrics)
    with Bank(bank) as b:
        counts = b.round_pass_counts(1)
        by_kind = Counter(b.get(i).kind for i in m["admitted_ids"])
    frontier = [i for i in m["admitted_ids"] if 0 < counts.get(i, (0, 0))[1] < counts[i][0]]
    admitted = m["admitted"]
    row = {
        "seed": seed,
        "wall_s": round(wall, 1),
        "proposed": m["proposed"],
        "admitted": admitted,
        "admitted_by_kind": {k: by_kind.get(k, 0) for k in KINDS},
        "frontier": len(frontier),
        "attempts_per_task": min((counts[i][0] for i in m["admitted_ids"] if i in counts), default=0),
        "rejected": m["rejected"],
        "repaired": m.get("repaired", {}),
        **{k: m.get(k) for k in ("yield_rate", "frontier_yield", "diversity", "distance_within",
                                 "distance_to_bank", "near_duplicate_rate", "solve_rate")},
    }  # fmt: skip
    row["frontier_share"] = round(len(frontier) / admitted, 4) if admitted else None
    row["targets"] = {
        "admitted_30pct": (row["yield_rate"] or 0) >= 0.30,
        "every_kind": all(by_kind.get(k, 0) >= 1 for k in KINDS),
        "frontier_25pct": (row["frontier_share"] or 0) >= 0.25,
        "within_10_min": wall <= 600,
    }
    return row


def wilson(k: int, n: int, z: float = 1.96) -> list[float] | None:
    if not n:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def fisher_p(a: int, n1: int, b: int, n2: int) -> float:
    """Fisher's exact two-sided p for a successes of n1 against b of n2."""
    total, k = n1 + n2, a + b

    def prob(x: int) -> float:
        return comb(n1, x) * comb(n2, k - x) / comb(total, k)

    observed = prob(a)
    lo, hi = max(0, k - n2), min(k, n1)
    return min(1.0, sum(prob(x) for x in range(lo, hi + 1) if prob(x) <= observed * (1 + 1e-9)))


def arm_round(name: str, bank: Path, model: str | None, seed: int, per_kind: int) -> dict:
    config = bank.with_suffix(".yaml")
    config.write_text(
        f"seed: {seed}\nproposer:\n  proposals_per_kind: {per_kind}\n  probe_tasks: 0\n"
        "solver:\n  tasks: 0\n  samples: 1\n"
    )
    args = ["run", "--bank", str(bank), "--rounds", "1", "--config", str(config)]
    selfplay(*args, *(["--model", model] if model else []))
    with Bank(bank) as b:
        last = max(r["id"] for r in b.rounds() if r["finished_at"])
        proposals = b.proposals(last)
    outcomes = Counter(p.outcome for p in proposals if p.outcome != "admitted")
    return {"arm": name, "bank": str(bank), "round": last, "proposals": len(proposals),
            "rejected": dict(outcomes.most_common()),
            "duplicates": sum(outcomes.get(k, 0) for k in ("duplicate", "near_duplicate"))}  # fmt: skip


def solve_with_bundled(arms: list[dict], seed: int) -> None:
    """Each arm's admitted tasks, ATTEMPTS attempts each by the bundled model."""
    from selfplay.config import RunConfig
    from selfplay.engine.build import make_run_backend, make_run_verifier
    from selfplay.solver.solver import Solver

    cfg = RunConfig.model_validate({"seed": seed, "solver": {"samples": ATTEMPTS}})
    backend = make_run_backend(cfg)
    try:
        with make_run_verifier(cfg) as verifier:
            solver = Solver(backend, verifier, cfg.solver, name="bundled-judge", seed=seed)
            for arm in arms:
                tasks = new_tasks(Path(arm["bank"]), arm["round"])
                report = solver.attempt(tasks) if tasks else None
                results = report.results if report else []
                arm["admitted"] = len(tasks)
                arm["frontier"] = sum(0 < r.successes < r.attempts for r in results)
                arm["shapes"] = len({program_shape(t.program) for t in tasks})
                arm["admitted_by_kind"] = dict(Counter(t.kind for t in tasks))
    finally:
        backend.close()


def train_proposer(workdir: Path, bank: Path, steps: int, lr: float, group: int) -> Path:
    """`selfplay train --role proposer --method grpo` on a copy of `bank`; run again after a
    kill, the same command continues from its last checkpoint. Its progress goes to
    `train.log` in `workdir`, one line a step to stdout."""
    out = workdir / "proposer"
    if (out / "selfplay-trained.json").exists():
        return out
    train_bank = workdir / "train.db"
    if not train_bank.exists():
        shutil.copy(bank, train_bank)
    config = workdir / "train.yaml"
    config.write_text(
        f"method: grpo\nrole: proposer\nmax_steps: {steps}\nlearning_rate: {lr}\n"
        f"save_steps: 2\nproposer_grpo:\n  group_size: {group}\n"
    )
    args = [sys.executable, "-m", "pipelines.cli", "train", "--bank", str(train_bank),
            "--config", str(config), "--out", str(out)]  # fmt: skip
    with (workdir / "train.log").open("a") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        seen = 0
        while proc.poll() is None:
            time.sleep(10)
            seen = _report_steps(out, seen)
        _report_steps(out, seen)
    if proc.returncode != 0:
        sys.exit(f"proposer training failed; see {workdir / 'train.log'}")
    return out


def _report_steps(out: Path, seen: int) -> int:
    metrics = out / "metrics.jsonl"
    lines = metrics.read_text().splitlines() if metrics.exists() else []
    for line in lines[seen:]:
        r = json.loads(line)
        print(f"step {r['step']}: reward {r['reward']:+.3f}, frontier {r['frontier']}/"
              f"{r['proposals']}, KL {r['kl']:.4f}, {sum(r['seconds'].values()):.0f} s",
              flush=True)  # fmt: skip
    return max(seen, len(lines))


def reward_curve(out: Path, figure: Path) -> list[dict]:
    """The mean learnability reward and frontier share per RL step, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    mean = [r["reward"] for r in rows]
    lo = [r["reward_interval"][0] for r in rows]
    hi = [r["reward_interval"][1] for r in rows]
    ax1.plot(steps, mean, marker="o", color="C0")
    ax1.fill_between(steps, lo, hi, color="C0", alpha=0.2, label="95% interval")
    ax1.set(xlabel="RL step", ylabel="mean reward of the step's proposals",
            title="proposer reward")  # fmt: skip
    ax1.legend(loc="lower right")
    share = [r["frontier"] / r["proposals"] for r in rows]
    bounds = [wilson(r["frontier"], r["proposals"]) for r in rows]
    ax2.plot(steps, share, marker="o", color="C2")
    ax2.fill_between(steps, [b[0] for b in bounds], [b[1] for b in bounds], color="C2", alpha=0.2)
    ax2.set(xlabel="RL step", ylabel="frontier tasks / proposals", title="frontier share")
    fig.tight_layout()
    figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(figure, dpi=120)
    keep = ("step", "reward", "reward_interval", "frontier", "proposals", "admitted",
            "duplicates", "diversity", "kl", "seconds")  # fmt: skip
    return [{k: r.get(k) for k in keep} for r in rows]


def proposer_training(workdir: Path, seed: int, steps: int, lr: float, group: int,
                      per_kind: int, figure: Path) -> dict:  # fmt: skip
    """Part 2: RL on the proposer, then both proposers at equal proposals. Each finished
    piece (training, each arm's round, the solving) is kept in `workdir`, so a run cut off
    continues where it stopped."""
    started = time.perf_counter()
    bank = workdir / f"seed-{seed}.db"
    before = workdir / "pre-train.db"  # both arms propose against this same bank
    if not before.exists():
        shutil.copy(bank, before)
    with Bank(before) as b:
        bank_tasks = b.count()
    out = train_proposer(workdir, before, steps, lr, group)
    trained = json.loads((out / "selfplay-trained.json").read_text())["result"]
    arms = []
    for name, model in (("untrained", None), ("trained", str(out))):
        kept = workdir / f"arm-{name}.json"
        if kept.exists():
            arms.append(json.loads(kept.read_text()))
            continue
        copy = workdir / f"arm-{name}.db"
        shutil.copy(before, copy)
        arms.append(arm_round(name, copy, model, seed + 100, per_kind))
        kept.write_text(json.dumps(arms[-1]))
    todo = [a for a in arms if "frontier" not in a]
    if todo:
        solve_with_bundled(todo, seed + 200)
        for arm in todo:
            (workdir / f"arm-{arm['arm']}.json").write_text(json.dumps(arm))
    out_arms = {}
    for arm in arms:
        n, f = arm["proposals"], arm["frontier"]
        out_arms[arm["arm"]] = {
            "proposals": n,
            "admitted": arm["admitted"],
            "admitted_by_kind": arm["admitted_by_kind"],
            "frontier": f,
            "frontier_per_100": round(100 * f / n, 2) if n else None,
            "frontier_per_100_interval": [100 * x for x in wilson(f, n) or []] or None,
            "duplicates": arm["duplicates"],
            "duplicate_share": round(arm["duplicates"] / n, 4) if n else None,
            "rejected": arm["rejected"],
            "diversity": round(arm["shapes"] / arm["admitted"], 4) if arm["admitted"] else None,
            "shapes": arm["shapes"],
        }
    u, t = out_arms["untrained"], out_arms["trained"]
    ratio = (
        (t["frontier"] / t["proposals"]) / (u["frontier"] / u["proposals"])
        if u["frontier"]
        else None
    )
    return {
        "seed": seed,
        "bank_tasks": bank_tasks,
        "method": "grpo",
        "steps": trained["steps"],
        "learning_rate": lr,
        "group_size": group,
        "training_proposals": trained["rows"],
        "training_seconds": trained["seconds"],
        "model": trained["path"],
        "curve": reward_curve(out, figure),
        "untrained": u,
        "trained": t,
        "frontier_ratio": None if ratio is None else round(ratio, 3),
        "p_value": round(fisher_p(t["frontier"], t["proposals"], u["frontier"], u["proposals"]), 5),
        "attempts_per_task": ATTEMPTS,
        "wall_s": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--train", action="store_true", help="also run part 2")
    parser.add_argument("--steps", type=int, default=12, help="proposer RL steps")
    parser.add_argument("--lr", type=float, default=5e-5, help="proposer RL learning rate")
    parser.add_argument("--group", type=int, default=8, help="proposals per prompt in RL")
    parser.add_argument("--per-kind", type=int, default=64, help="programs a kind in each arm")
    parser.add_argument("--figure", type=Path,
                        default=Path("benchmarks/figures/proposer_rl_reward.png"))  # fmt: skip
    parser.add_argument("--keep", type=Path, help="keep the banks here")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--train-only", action="store_true", help="part 2 on --keep's bank")
    args = parser.parse_args()
    if args.train_only and not (args.keep and args.out):
        parser.error("--train-only needs --keep (the banks of part 1) and --out")
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="selfplay-yield-"))
    workdir.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    # What --out already holds: part 1's rounds kept by --train-only, part 2's by a part-1 run.
    previous = json.loads(args.out.read_text()) if args.out and args.out.exists() else {}
    report: dict = {"rounds": previous.get("rounds", []) if args.train_only else []}
    for seed in [] if args.train_only else seeds:
        report["rounds"].append(default_round(seed, workdir))
        print(json.dumps(report["rounds"][-1]), flush=True)
    if args.train or args.train_only:
        if not (workdir / f"seed-{seeds[0]}.db").exists():
            parser.error(f"part 2 needs part 1's bank seed-{seeds[0]}.db in {workdir}")
        report["proposer_training"] = proposer_training(
            workdir, seeds[0], args.steps, args.lr, args.group, args.per_kind, args.figure
        )
        print(json.dumps(report["proposer_training"], default=str), flush=True)
    if args.out:
        if "proposer_training" not in report and "proposer_training" in previous:
            report["proposer_training"] = previous["proposer_training"]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
