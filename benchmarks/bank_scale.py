"""Task bank at scale: a synthetic bank of N tasks (default 1,000,000).

Measures, in one run:
- normalization + vectorization cost per task (real path, on a sample of raw programs);
- store insert rate (`Bank.add_tasks`, 5,000-task transactions, with vectors);
- attempt insert rate and the curriculum's stats query (`Bank.solve_stats`), plus `stats --json`;
- the near-duplicate check of Q new tasks (default 10,000; half of them renamed copies of
  bank tasks) against the bank: vectorize (real path) + search, with the inverted-file index
  the gate uses at this size, side by side with exact search (`IndexFlatIP`) as the baseline,
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

from task_bank.dedup import NearDupIndex, Vectorizer
from task_bank.normalize import _TOKEN, word_tokens
from task_bank.schema import Task
from task_bank.stats import summary
from task_bank.store import Attempt, Bank

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
        a=rng.randint(2, 10**9),
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bank", type=Path, default=None, help="default: a temporary file")
    ap.add_argument("--threshold", type=float, default=0.85)
    args = ap.parse_args()
    figures: dict[str, float | int | str] = {"tasks": args.tasks, "queries": args.queries}
    tmp = tempfile.TemporaryDirectory()
    path = args.bank or Path(tmp.name) / "scale.db"

    def say(name: str, value: float | int | str) -> None:
        figures[name] = value
        print(f"{name}: {value}", file=sys.stderr, flush=True)

    # 1. Real normalization + vectorization cost, on raw (renamed, commented) programs.
    sample = [
        Task("q", "codegen", p, rename(prog, random.Random(i)), "f", ["assert True"])
        for i, (p, prog) in enumerate(synthetic(i) for i in range(2000))
    ]
    t = time.perf_counter()
    Vectorizer().vectorize(sample)
    say("normalize_vectorize_us_per_task", round((time.perf_counter() - t) / len(sample) * 1e6))

    # 2. Build the bank: vectors in a process pool, inserts in 5,000-task transactions.
    chunk = 5000
    bank = Bank(path)
    bank.set_meta("vectorizer", Vectorizer().name)
    insert_s = 0.0
    t_all = time.perf_counter()
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
            t = time.perf_counter()
            bank.add_tasks(tasks, vectors=vecs, ast_hashes=hashes)
            insert_s += time.perf_counter() - t
    say("build_s", round(time.perf_counter() - t_all, 1))
    say("insert_tasks_per_s", round(args.tasks / insert_s))
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
    t = time.perf_counter()
    for s in range(0, len(attempts), 10_000):
        bank.add_attempts(attempts[s : s + 10_000])
    say("attempts_per_s", round(len(attempts) / (time.perf_counter() - t)))
    t = time.perf_counter()
    stats = bank.solve_stats()
    say("solve_stats_s", round(time.perf_counter() - t, 2))
    assert len(stats) == args.tasks and int(stats["attempts"].sum()) == len(attempts)
    t = time.perf_counter()
    bank.solve_stats("m1")
    say("solve_stats_one_solver_s", round(time.perf_counter() - t, 2))
    t = time.perf_counter()
    summary(bank)
    say("stats_json_s", round(time.perf_counter() - t, 2))

    # 4. Near-duplicate check of Q new raw tasks against the bank.
    qrng = random.Random(1)
    queries = []
    for n in range(args.queries):
        if n % 2 == 0:  # a renamed, commented copy of a bank task
            prompt, program = synthetic(qrng.randrange(args.tasks))
            queries.append(Task(f"q{n}", "codegen", prompt, rename(program, qrng), "f", ["x"]))
        else:  # a fresh task from the same generator
            prompt, program = synthetic(args.tasks + n)
            queries.append(Task(f"q{n}", "codegen", prompt, rename(program, qrng), "f", ["x"]))
    t = time.perf_counter()
    keys, vectors = bank.vectors()
    say("load_vectors_s", round(time.perf_counter() - t, 1))
    t = time.perf_counter()
    index = NearDupIndex(vectors.shape[1])  # IVF at this size, as in the gate
    index.add(keys, vectors)
    say("ivf_build_s", round(time.perf_counter() - t, 1))
    say("peak_rss_mb_after_index", round(peak_mb()))
    t = time.perf_counter()
    qvec = Vectorizer().vectorize(queries)
    vec_s = time.perf_counter() - t
    t = time.perf_counter()
    ivf_hits = index.search(qvec, args.threshold)
    search_s = time.perf_counter() - t
    say("check_vectorize_s", round(vec_s, 1))
    say("check_search_ivf_s", round(search_s, 2))
    say("near_dup_check_s", round(vec_s + search_s, 1))
    say("candidates_per_query", round(sum(map(len, ivf_hits)) / len(queries), 2))

    # Baseline: exact search over the same vectors.
    flat = NearDupIndex(vectors.shape[1], ivf_min=10**12)
    t = time.perf_counter()
    flat.add(keys, vectors)
    del vectors
    exact_hits = flat.search(qvec, args.threshold)
    say("check_search_exact_s", round(time.perf_counter() - t, 2))
    found = sum(
        len({k for k, _ in a} & {k for k, _ in b})
        for a, b in zip(ivf_hits, exact_hits, strict=True)
    )
    total = sum(len(b) for b in exact_hits)
    say("ivf_recall_vs_exact", round(found / total, 4) if total else "n/a")
    copies_found = sum(1 for n, h in enumerate(ivf_hits) if n % 2 == 0 and h)
    say("renamed_copies_flagged", f"{copies_found}/{(args.queries + 1) // 2}")
    say("peak_rss_mb", round(peak_mb()))
    bank.close()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
