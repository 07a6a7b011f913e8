"""What the proposer yields on the bundled model, and whether training it on its own record
makes it yield more at the solver's frontier.

Part 1, the default round: `selfplay run --rounds 1` on a fresh bank, once per seed. Per
seed: proposals, admitted (by kind), the frontier (admitted tasks the round's solver solved
sometimes but not always over its 8 attempts), the health figures and the wall time,
model load included. Targets: at least 30% admitted, every kind admitted at least once, at
least 25% of the admitted at the frontier, within 10 minutes.

Part 2, the proposer learns (`--train`): the first seed's bank runs `--data-rounds` more
default rounds, then `selfplay train --role proposer --method sft` reinforces the proposer on
its admitted programs the solver solved sometimes, each repeated by its learnability reward
(`selfplay.training.data.proposer_sft_rows`). Two copies of that bank then run one round
each with the same seed, the same references and a fixed count of programs (untrained: the
bundled model proposes; trained: the trained one does). Both arms' admitted tasks are then
attempted by the same solver, the bundled model, 8 times each, so the frontier is measured
against one solver. Reported per arm: proposals, admitted, frontier, frontier per 100
proposals with its Wilson interval, diversity (distinct program shapes / admitted); and
Fisher's exact two-sided p for frontier per proposal, trained against untrained.

    python benchmarks/proposer_yield.py --seeds 0,1,2 --train --out benchmarks/figures/proposer_yield.json

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
        proposed = len(b.proposals(last))
    return {"arm": name, "bank": bank, "round": last, "proposals": proposed}


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
                tasks = new_tasks(arm["bank"], arm["round"])
                report = solver.attempt(tasks) if tasks else None
                results = report.results if report else []
                arm["admitted"] = len(tasks)
                arm["frontier"] = sum(0 < r.successes < r.attempts for r in results)
                arm["shapes"] = len({program_shape(t.program) for t in tasks})
                arm["admitted_by_kind"] = dict(Counter(t.kind for t in tasks))
    finally:
        backend.close()


def proposer_training(
    workdir: Path, seed: int, data_rounds: int, steps: int, per_kind: int
) -> dict:
    bank = workdir / f"seed-{seed}.db"
    started = time.perf_counter()
    if data_rounds:
        selfplay("run", "--bank", str(bank), "--rounds", str(data_rounds))
    with Bank(bank) as b:
        rows = sum(1 for p in b.proposals() if p.reward and p.reward > 0)
        proposals = len(b.proposals())
    out = workdir / "proposer"
    res = selfplay("train", "--bank", str(bank), "--role", "proposer", "--method", "sft",
                   "--max-steps", str(steps), "--out", str(out), "--json")  # fmt: skip
    trained = json.loads(res.stdout[res.stdout.index("{") :])
    arms = []
    for name, model in (("untrained", None), ("trained", trained["path"])):
        copy = workdir / f"arm-{name}.db"
        shutil.copy(bank, copy)
        arms.append(arm_round(name, copy, model, seed + 100, per_kind))
    solve_with_bundled(arms, seed + 200)
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
        "data_rounds": 1 + data_rounds,
        "training_proposals": proposals,
        "reinforced_proposals": rows,
        "steps": steps,
        "model": trained["path"],
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
    parser.add_argument("--data-rounds", type=int, default=2, help="rounds added before training")
    parser.add_argument("--steps", type=int, default=16, help="proposer training steps")
    parser.add_argument("--per-kind", type=int, default=64, help="programs a kind in each arm")
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
        report["proposer_training"] = proposer_training(
            workdir, seeds[0], args.data_rounds, args.steps, args.per_kind
        )
        print(json.dumps(report["proposer_training"], default=str), flush=True)
    if args.out:
        if "proposer_training" not in report and "proposer_training" in previous:
            report["proposer_training"] = previous["proposer_training"]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
