"""Task bank at scale: a synthetic bank of N tasks (default 1,000,000).

Measures, in one run:
- normalization + vectorization cost per task (real path, on a sample of raw programs);
- store insert rate (`Bank.add_tasks`, 5,000-task transactions, with vectors);
- attempt insert rate and the curriculum's stats query (`Bank.solve_stats`), plus `stats --json`;
- the near-duplicate check of Q new tasks (default 10,000; half of them renamed copies of
  bank tasks) against the bank: vectorize (real path) + search, with the inverted-file index
  admission uses at this size, side by side with exact search (`IndexFlatIP`) as the baseline,
  and the recall of the IVF index relative to exact search;
- peak resident memory after each phase.

Synthetic bank programs are generated already normalized (identifiers v0, v1, ...), so
building the bank skips AST normalization; its cost is the first figure. Run:

    python benchmarks/bank_scale.py                  # 1M tasks, 10k queries
    python benchmarks/bank_scale.py --tasks 100000   # quicker
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd  # noqa: F401  (imported up front so no timing includes it)

from selfplay.admission.dedup import Vectorizer
from selfplay.admission.normalize import _TOKEN, word_tokens
from selfplay.task import Task
from task_bank.stats import summary
from task_bank.store import Attempt, Bank
from task_bank.vectors import NearDupIndex

TEMPLATES = [
    "def v0(v1):\n    v2 = 0\n    for v3 in v1:\n        if v3 % {a} == {b}:\n            v2 += v3 * {c}\n    return v2",
    "def v0(v1, v2):\n    return [v3 {op} v2 for v3 in v1 if v3 > {a}]",
    "def v0(v1):\n    return v1[::{s}].{str_method}()[:{a}] + {q} * {b}",
    "def v0(v1):\n    v2 = {{}}\n    for v3 in v1:\n        v2[v3 % {a}] = v2.get(v3 % {a}, 0) + {c}\n    return v2",
    "def v0(v1):\n    if v1 < {a}:\n        return v1\n    return v0(v1 - {b}) {op} v0(v1 - {c})",
    "def v0(v1):\n    v2 = sorted(v1, key=lambda v3: (v3 % {a}, -v3))\n    return v2[:{b}]",
    "def v0(v1, v2):\n    v3 = [[0] * (len(v2) + 1) for v4 in range(len(v1) + 1)]\n    for v4 in range(len(v1)):\n        for v5 in range(len(v2)):\n            v3[v4 + 1][v5 + 1] = v3[v4][v5] + {c} if v1[v4] == v2[v5] else max(v3[v4][v5 + 1], v3[v4 + 1][v5])\n    return v3[-1][-1] * {a}",
    "def v0(v1):\n    return sum(int(v2) ** {b} for v2 in str(v1)) % {a} + {c}",
    "def v0(v1):\n    v2 = 0\n    while v1:\n        v1 &= v1 - {b}\n        v2 += {c}\n    return v2 ^ {a}",
    "def v0(v1):\n    return {q}.join(v2.{str_method}() for v2 in v1.split() if len(v2) > {b} or {a} in v2)",
]
WORDS = (
    "return sum list numbers even odd string reverse count words sort key graph path shortest "
    "matrix dynamic programming recursion bits parse dictionary frequency window maximum minimum "
    "prefix suffix palindrome interval merge stack queue tree depth binary search rotate digits"
).split()
OPS = ["+", "-", "*", "//", "%", "|", "^"]
STR_METHODS = ["upper", "lower", "strip", "title", "swapcase", "casefold"]


def synthetic(i: int) -> tuple[str, str]:
    rng = random.Random(i)
    template = TEMPLATES[i % len(TEMPLATES)]
    program = template.format(
        a=i * 1000 + rng.randint(2, 999),  # unique per task, so no synthetic task is a copy
        b=rng.randint(1, 10**4),
        c=rng.randint(1, 10**5),
        s=rng.choice([1, -1, 2, -2]),
        op=rng.choice(OPS),
        str_method=rng.choice(STR_METHODS),
        q=repr(rng.choice(["", "-", "ab", "x y"])),
    )
    prompt = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
    return prompt, program


def _vectors(chunk: range) -> np.ndarray:
    v = Vectorizer()
    pairs = [synthetic(i) for i in chunk]
    return v.from_tokens(
        [_TOKEN.findall(program) for _, program in pairs], [word_tokens(p) for p, _ in pairs]
    ).astype(np.float16)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rename(program: str, rng: random.Random) -> str:
    """A raw copy of a normalized program with fresh identifiers and a comment."""
    names = {f"v{k}": f"{rng.choice(WORDS)}_{k}" for k in range(6)}
    return _TOKEN.sub(lambda m: names.get(m.group(0), m.group(0)), program) + "  # copy\n"


class Clock:
    """Wall and CPU seconds of a phase (CPU = this process, all threads): the machine is
    shared, so wall time alone says more about the neighbours than about the code."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bank", type=Path, default=None, help="default: a temporary file")
    ap.add_argument("--reuse", action="store_true", help="skip the build if --bank exists")
    ap.add_argument("--threshold", type=float, default=0.85)
    args = ap.parse_args()
    figures: dict[str, float | int | str] = {"tasks": args.tasks, "queries": args.queries}
    tmp = tempfile.TemporaryDirectory()
    path = args.bank or Path(tmp.name) / "scale.db"

    def say(name: str, value: float | int | str) -> None:
        figures[name] = value
        print(f"{name}: {value}", file=sys.stderr, flush=True)

    def timed(name: str, clock: Clock) -> float:
        wall, cpu = clock.read()
        say(f"{name}_wall_s", round(wall, 2))
        say(f"{name}_cpu_s", round(cpu, 2))
        return wall

    # 1. Real normalization + vectorization cost, on raw (renamed, commented) programs.
    sample = [
        Task("q", "codegen", p, rename(prog, random.Random(i)), "f", ["assert True"])
        for i, (p, prog) in enumerate(synthetic(i) for i in range(2000))
    ]
    clock = Clock()
    Vectorizer().vectorize(sample)
    wall, cpu = clock.read()
    say("normalize_vectorize_us_per_task_wall", round(wall / len(sample) * 1e6))
    say("normalize_vectorize_us_per_task_cpu", round(cpu / len(sample) * 1e6))

    # 2. Build the bank: vectors in a process pool, inserts in 5,000-task transactions.
    reuse = args.reuse and path.exists()
    bank = Bank(path)
    if not reuse:
        chunk = 5000
        bank.set_meta("vectorizer", Vectorizer().name)
        insert_wall = insert_cpu = 0.0
        build = Clock()
        with Pool(args.workers) as pool:
            ranges = [range(s, min(s + chunk, args.tasks)) for s in range(0, args.tasks, chunk)]
            for r, vecs in zip(ranges, pool.imap(_vectors, ranges), strict=True):
                tasks, hashes = [], []
                for i in r:
                    prompt, program = synthetic(i)
                    tasks.append(
                        Task(
                            f"syn-{i}",
                            "codegen",
                            prompt,
                            program,
                            "v0",
                            [f"assert v0 is not None  # {i}"],
                            source="synthetic",
                            tags=[WORDS[i % len(WORDS)]],
                        )
                    )
                    hashes.append(hashlib.sha256(program.encode()).hexdigest())
                clock = Clock()
                dedup = [f"codegen:{h}" for h in hashes]
                keys = bank.add_tasks(tasks, vectors=vecs, ast_hashes=hashes, dedup_keys=dedup)
                wall, cpu = clock.read()
                insert_wall, insert_cpu = insert_wall + wall, insert_cpu + cpu
                assert None not in keys, "synthetic tasks must all be distinct"
        timed("build", build)
        say("insert_tasks_per_s_wall", round(args.tasks / insert_wall))
        say("insert_tasks_per_s_cpu", round(args.tasks / insert_cpu))
    assert bank.count() == args.tasks, "the bank holds a different number of tasks"
    say("bank_file_mb", round(path.stat().st_size / 2**20))
    say("peak_rss_mb_after_build", round(peak_mb()))

    # 3. Attempts and the curriculum's stats query.
    rng = random.Random(0)
    attempts = [
        Attempt(
            f"syn-{rng.randrange(args.tasks)}",
            rng.choice(["m1", "m2"]),
            "a",
            "passed",
            rng.random() < 0.4,
            step=s // 1000,
        )
        for s in range(200_000)
    ]
    if not reuse:
        clock = Clock()
        for s in range(0, len(attempts), 10_000):
            bank.add_attempts(attempts[s : s + 10_000])
        say("attempts_per_s_wall", round(len(attempts) / clock.read()[0]))
    clock = Clock()
    stats = bank.solve_stats()
    timed("solve_stats", clock)
    assert len(stats) == args.tasks and int(stats["attempts"].sum()) == len(attempts)
    clock = Clock()
    bank.solve_stats("m1")
    timed("solve_stats_one_solver", clock)
    clock = Clock()
    summary(bank)
    timed("stats_json", clock)

    # 4. Near-duplicate check of Q new raw tasks against the bank.
    qrng = random.Random(1)
    queries = []
    for n in range(args.queries):
        # even: a renamed, commented copy of a bank task; odd: a fresh task
        i = qrng.randrange(args.tasks) if n % 2 == 0 else args.tasks + n
        prompt, program = synthetic(i)
        queries.append(Task(f"q{n}", "codegen", prompt, rename(program, qrng), "f", ["x"]))
    clock = Clock()
    keys, vectors = bank.vectors()
    timed("load_vectors", clock)
    clock = Clock()
    index = NearDupIndex(vectors.shape[1])  # IVF at this size, as in admission
    index.add(keys, vectors)
    timed("index_build", clock)
    say("peak_rss_mb_after_index", round(peak_mb()))
    check = Clock()
    clock = Clock()
    qvec = Vectorizer().vectorize(queries)
    timed("check_vectorize", clock)
    clock = Clock()
    ivf_hits = index.search(qvec, args.threshold)
    timed("check_search", clock)
    timed("near_dup_check", check)
    say("candidates_per_query", round(sum(map(len, ivf_hits)) / len(queries), 2))

    # Baseline: exact search over the same vectors.
    flat = NearDupIndex(vectors.shape[1], ivf_min=10**12)
    flat.add(keys, vectors)
    del vectors
    clock = Clock()
    exact_hits = flat.search(qvec, args.threshold)
    timed("exact_search", clock)
    found = sum(
        len({k for k, _ in a} & {k for k, _ in b})
        for a, b in zip(ivf_hits, exact_hits, strict=True)
    )
    total = sum(len(b) for b in exact_hits)
    say("index_recall_vs_exact", round(found / total, 4) if total else "n/a")
    copies_found = sum(1 for n, h in enumerate(ivf_hits) if n % 2 == 0 and h)
    say("renamed_copies_flagged", f"{copies_found}/{(args.queries + 1) // 2}")
    say("peak_rss_mb", round(peak_mb()))
    bank.close()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
