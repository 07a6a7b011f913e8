"""Strengthened tests on HumanEval, the bundled seeds and KodCode-shaped float tasks.

    python benchmarks/strengthen_humaneval.py [--completions FILE] [--out FILE]

1. Each source is imported into a fresh bank (`selfplay bank import`), then strengthened
   (`selfplay bank strengthen --json`, timed: the command a user runs). The KodCode-shaped
   float-tolerance tasks, which the degenerate-answer probe turns away as they come, are
   imported with `--strengthen` instead.
2. Per source: tasks, tasks strengthened, tests added, the mutation score of the original and
   of all the tests (over mutants of the reference that fail its tests or change its output
   on some input), the share of the mutants surviving the original tests that the added ones
   kill, and how many references pass all their tests (every one must). Degenerate answers
   (`selfplay.admission.degenerate.PROBES`) graded through `compute_score_batch` on every
   strengthened task: how many score above 0 (none may).
3. With `--completions` (a `selfplay eval humaneval` completions file): each completion
   graded on HumanEval's own tests and on all of them; every one that passes the first and
   fails the second is checked against the canonical solution on the input of the first added
   test it fails: the strengthened verdict stands where the completion's answer there differs
   from the canonical solution's.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.degenerate_probe import KODCODE  # noqa: E402  the same float tasks


def selfplay(*args: str) -> tuple[dict, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", *args, "--json"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"selfplay {' '.join(args)} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout), time.perf_counter() - start


def source_figures(name: str, source: str, workdir: Path, verifier, strengthen_on_import: bool):
    from selfplay.admission.degenerate import PROBES, program
    from selfplay.rewards import GroundTruth, compute_score_batch
    from task_bank.store import Bank

    bank = workdir / f"{name}.db"
    extra = ["--strengthen"] if strengthen_on_import else []
    imported, import_s = selfplay("bank", "import", source, "--bank", str(bank), *extra)
    report, strengthen_s = selfplay("bank", "strengthen", "--bank", str(bank))
    with Bank(bank) as store:
        tasks = list(store.tasks(kind="codegen", include_contaminated=True))
    refs = verifier.grade([{"id": t.id, "program": t.program, "tests": t.all_tests}
                           for t in tasks])  # fmt: skip
    strong = [t for t in tasks if t.strengthened]
    labels = [GroundTruth.from_task(t).to_json() for t in strong]
    answers = [(label, f"```python\n{program(p, t.entry_point)}```")
               for t, label in zip(strong, labels, strict=True) for p in PROBES]  # fmt: skip
    scores = compute_score_batch(["selfplay"] * len(answers), [a for _, a in answers],
                                 [label for label, _ in answers]) if answers else []  # fmt: skip
    return {
        "imported": imported.get("admitted"),
        "import_s": round(import_s, 1),
        "strengthen_s": round(strengthen_s, 1),
        "report": report,
        "tasks": len(tasks),
        "strengthened": len(strong),
        "tests_added": sum(len(t.strengthened["tests"]) for t in strong),
        "survivors_killed_share": _share(report),
        "references_pass_all_tests": sum(v.passed for v in refs),
        "degenerate_answers_graded": len(answers),
        "degenerate_answers_scoring": sum(s["score"] > 0 for s in scores),
    }, tasks


def _share(report: dict) -> float | None:
    """Of the wrong mutants the original tests let through, the share the added ones kill
    (over every task of the source, those that got no test included)."""
    r = next(iter(report.values()))
    left = r["mutants"] - r["killed_before"]
    return round((r["killed_after"] - r["killed_before"]) / left, 4) if left else None


def completion_programs(path: Path, tasks) -> tuple[list[dict], list[str]]:
    by_id = {t.id: t for t in tasks}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["task_id"] in by_id]
    return rows, [by_id[r["task_id"]].prompt.rstrip(" ") + r["completion"] for r in rows]


def completions_check(path: Path, tasks, verifier) -> dict:
    by_id = {t.id: t for t in tasks}
    rows, programs = completion_programs(path, tasks)
    original = verifier.grade([{"id": str(i), "program": p, "tests": by_id[r["task_id"]].tests}
                               for i, (r, p) in enumerate(zip(rows, programs, strict=True))])  # fmt: skip
    full = verifier.grade([{"id": str(i), "program": p, "tests": by_id[r["task_id"]].all_tests}
                           for i, (r, p) in enumerate(zip(rows, programs, strict=True))])  # fmt: skip
    flipped = [i for i, (o, f) in enumerate(zip(original, full, strict=True))
               if o.passed and not f.passed]  # fmt: skip
    checks = []
    for i in flipped:
        task = by_id[rows[i]["task_id"]]
        added = task.strengthened["tests"]
        alone = verifier.grade([{"id": str(k), "program": programs[i], "tests": [t]}
                                for k, t in enumerate(added)])  # fmt: skip
        test = added[next(k for k, v in enumerate(alone) if not v.passed)]
        call = next(n for n in ast.walk(ast.parse(test)) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name) and n.func.id == task.entry_point)  # fmt: skip
        expr = ast.unparse(call)
        canon, mine = verifier.grade([{"id": "c", "program": task.program, "tests": [], "calls": [expr]},
                                      {"id": "m", "program": programs[i], "tests": [], "calls": [expr]}])  # fmt: skip
        agrees = mine.outputs is None or mine.outputs[0] != canon.outputs[0]
        checks.append({"task_id": task.id, "call": expr, "canonical": canon.outputs[0],
                       "completion": mine.outputs[0] if mine.outputs else None,
                       "verdict_matches_canonical": agrees})  # fmt: skip
    return {
        "completions": len(rows),
        "pass_original": sum(v.passed for v in original),
        "pass_strengthened": sum(v.passed for v in full),
        "pass_original_fail_strengthened": len(flipped),
        "checked_against_canonical": len(checks),
        "verdict_matches_canonical": sum(c["verdict_matches_canonical"] for c in checks),
        "disagreements": checks,
    }


def as_attempts(path: Path, work: Path, verifier) -> dict:
    from task_bank.attempts import Attempt
    from task_bank.store import Bank

    bank = work / "humaneval.db"
    with Bank(bank) as store:
        tasks = list(store.tasks(kind="codegen", include_contaminated=True))
        rows, programs = completion_programs(path, tasks)
        store.add_attempts([Attempt(r["task_id"], "bundled", f"```python\n{p}\n```",
                                    "passed" if r["passed"] else "failed", bool(r["passed"]))
                            for r, p in zip(rows, programs, strict=True)])  # fmt: skip
    report, seconds = selfplay("bank", "strengthen", "--bank", str(bank))
    with Bank(bank) as store:
        tasks = list(store.tasks(kind="codegen", include_contaminated=True))
    return {"strengthen_s": round(seconds, 1), "report": report,
            **completions_check(path, tasks, verifier)}  # fmt: skip


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--completions", type=Path, help="a `selfplay eval humaneval` output")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from selfplay.verifier import Verifier

    out: dict = {"machine": {"cores": os.cpu_count()}, "sources": {}}
    with tempfile.TemporaryDirectory() as tmp, Verifier(workers=2) as verifier:
        work = Path(tmp)
        kod = work / "kodcode-float.jsonl"
        kod.write_text("".join(json.dumps(r) + "\n" for r in KODCODE))
        he_tasks = None
        for name, source, on_import in (("humaneval", "humaneval", False),
                                        ("seeds", "seeds", False),
                                        ("kodcode_float", str(kod), True)):  # fmt: skip
            figures, tasks = source_figures(name, source, work, verifier, on_import)
            out["sources"][name] = figures
            print(name, json.dumps({k: v for k, v in figures.items() if k != "report"}),
                  flush=True)  # fmt: skip
            if name == "humaneval":
                he_tasks = tasks
        if args.completions:
            out["completions"] = completions_check(args.completions, he_tasks, verifier)
            print("completions", json.dumps({k: v for k, v in out["completions"].items()
                                             if k != "disagreements"}))  # fmt: skip
            # Then as solver attempts in the bank: strengthening again keeps tests that catch
            # the ones that pass HumanEval's tests and answer a new input unlike the
            # canonical solution (the tests are chosen against these very completions; the
            # check against the canonical solution is what says each verdict is right).
            out["completions_as_attempts"] = as_attempts(args.completions, work, verifier)
            print(
                "completions_as_attempts",
                json.dumps(
                    {
                        k: v
                        for k, v in out["completions_as_attempts"].items()
                        if k != "disagreements"
                    }
                ),
            )
    if args.out:
        args.out.write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
