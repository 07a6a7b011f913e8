"""Generation speed of the model engines side by side: vLLM beside the transformers backend.

Each arm is an engine with its options: by default `transformers` (the backend's defaults:
bf16 where the CPU has native bf16, else packed fp16 layers; batches of 8) and `vllm` (its
CPU build with selfplay's settings: every core bound to the model, tcmalloc and Intel
OpenMP preloaded, a 4 GiB KV cache, selfplay's CPU sampler). `--arms` also takes
`vllm:compiled` (torch.compile instead of eager), `vllm:1-core` (the model on one core) and
the transformers weight formats `tf:packed-fp16`, `tf:float32` and `tf:bfloat16`.

An arm loads (start to first token is timed: imports, engine processes, weights, compile),
then runs every case `--reps` times: one sequence, and batches of 8, 16 and 64 prompts in
one `generate` call; then it closes before the next arm loads, so no engine idles beside
another. Sampling is what self-play uses: temperature 0.7, top-p 0.95, a seed. Tokens are
the generated tokens the backend counts (a sequence that ends early is not counted as if
it ran on). Time to first token is one prompt with a budget of one token. The table gives
the median over reps, and every ratio against the first arm. Run:

    python benchmarks/backend_speed.py                              # bundled, 96 new tokens
    python benchmarks/backend_speed.py --arms transformers,vllm --out benchmarks/figures/backend_speed.json
    python benchmarks/backend_speed.py --arms tf:packed-fp16,tf:float32 --batches 1,8
    python benchmarks/backend_speed.py --model smollm2-135m --new-tokens 32 --http
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from selfplay.backends import Prompt, Sampling, make_backend
from selfplay.backends.auto import cpu_flags, isa

TOPICS = [
    "a binary search tree with insert, delete and in-order traversal",
    "a least-recently-used cache with get and put",
    "run-length encoding and decoding of strings",
    "Dijkstra's shortest paths on an adjacency-list graph",
    "a tokenizer for arithmetic expressions",
    "merging overlapping intervals",
    "a trie with insert, search and prefix listing",
    "matrix multiplication without numpy",
]

# What each arm asks of its engine.
ARMS = {
    "transformers": ("transformers", {}),
    "vllm": ("vllm", {}),
    # vLLM with torch.compile instead of eager (selfplay's CPU default), and with vLLM's
    # own core binding: one core for the model, the other left to the scheduler.
    "vllm:compiled": ("vllm", {"engine_args": {"enforce_eager": False}}),
    "vllm:1-core": ("vllm", {"threads": 1}),
    "tf:packed-fp16": ("transformers", {"dtype": "float32", "quantize": "fp16"}),
    "tf:float32": ("transformers", {"dtype": "float32", "quantize": "none"}),
    "tf:bfloat16": ("transformers", {"dtype": "bfloat16", "quantize": "none"}),
}


def prompt(i: int) -> Prompt:
    text = f"Write a Python module implementing {TOPICS[i % len(TOPICS)]}, with docstrings."
    return Prompt.user(text if i < len(TOPICS) else f"{text} (variant {i})", prefill="```python\n")


def timed(backend, prompts: list[Prompt], new_tokens: int, seed: int) -> dict[str, float]:
    sampling = Sampling(temperature=0.7, top_p=0.95, max_new_tokens=new_tokens, seed=seed)
    start = time.perf_counter()
    results = backend.generate(prompts, n=1, sampling=sampling)
    seconds = time.perf_counter() - start
    tokens = sum(c.tokens for r in results for c in r)
    return {
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 2),
    }


def measure(arm: str, args: argparse.Namespace, batches: list[int]) -> dict:
    engine, options = ARMS[arm]
    backend = make_backend(engine, args.model, **options)
    start = time.perf_counter()
    backend.load()
    timed(backend, [prompt(0)], 1, 0)
    first_token_s = round(time.perf_counter() - start, 2)
    runs: dict[str, list[dict]] = {"ttft": []}
    for rep in range(args.reps):
        runs["ttft"].append(timed(backend, [prompt(rep + 1)], 1, rep))
        for size in batches:
            result = timed(backend, [prompt(i) for i in range(size)], args.new_tokens, rep)
            runs.setdefault(f"batch_{size}", []).append(result)
            print(
                json.dumps({"arm": arm, "rep": rep, "case": f"batch_{size}", **result}), flush=True
            )
    if args.http:
        from selfplay.backends.serve import ChatServer

        with ChatServer(backend, port=0, model_name="bench") as server:
            client = make_backend("openai", "bench", base_url=server.url)
            size = max(batches)
            runs[f"http_batch_{size}"] = [
                timed(client, [prompt(i) for i in range(size)], args.new_tokens, 0)
            ]
    backend.close()
    summary = {
        case: statistics.median(r["tokens_per_s"] for r in rs)
        for case, rs in runs.items()
        if case != "ttft"
    }
    ttft = statistics.median(r["seconds"] for r in runs["ttft"])
    return {"start_to_first_token_s": first_token_s, "ttft_s": ttft, "tokens_per_s": summary,
            "runs": runs}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--arms", default="transformers,vllm", help=", ".join(ARMS))
    parser.add_argument("--batches", default="1,8,16,64", help="prompts per generate call")
    parser.add_argument("--new-tokens", type=int, default=96)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--http", action="store_true", help="also time the largest batch over HTTP")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    arms = args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        parser.error(f"unknown arm {unknown[0]!r}; choose from {', '.join(ARMS)}")
    batches = [int(b) for b in args.batches.split(",")]

    results = {arm: measure(arm, args, batches) for arm in arms}
    flags = cpu_flags()
    machine = {
        "cpus": os.cpu_count(),
        "processor": _processor(),
        "isa": isa(flags),
        "load_average_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "env": {k: os.environ[k] for k in sorted(os.environ) if k.startswith(("VLLM_CPU", "LD_PRELOAD", "OMP_"))},
    }  # fmt: skip
    cases = [f"batch_{b}" for b in batches] + (["http"] if args.http else [])
    keys = [c for c in results[arms[0]]["tokens_per_s"] if any(c.startswith(k) for k in cases)]
    print(
        f"\nmodel {args.model}, {args.new_tokens} new tokens, median of {args.reps}, "
        f"{machine['cpus']} CPUs ({machine['isa']}), load average {machine['load_average_end']}"
    )
    print(
        "| arm | start to first token (s) | TTFT (s) | "
        + " | ".join(f"{k} tok/s" for k in keys)
        + " |"
    )
    print("|---|---:|---:|" + "---:|" * len(keys))
    for arm in arms:
        r = results[arm]
        cells = " | ".join(f"{r['tokens_per_s'][k]:.1f}" for k in keys)
        print(f"| {arm} | {r['start_to_first_token_s']} | {r['ttft_s']} | {cells} |")
    ratios = {}
    base = arms[0]
    for arm in arms[1:]:
        ratios[f"{arm}/{base}"] = {
            k: round(results[arm]["tokens_per_s"][k] / max(results[base]["tokens_per_s"][k], 1e-9), 2)
            for k in keys
        }  # fmt: skip
        print(
            f"{arm} / {base}: " + ", ".join(f"{k} {v}x" for k, v in ratios[f"{arm}/{base}"].items())
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        figure = {"model": args.model, "new_tokens": args.new_tokens, "reps": args.reps,
                  "machine": machine, "arms": results, "ratios": ratios}  # fmt: skip
        args.out.write_text(json.dumps(figure, indent=2) + "\n")


def _processor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
