"""Generation speed of the transformers backend: weight formats side by side, one sequence
and a batch.

The variants (`--variants`, default the CPU default `packed-fp16` beside plain `float32`;
`bfloat16` too) are loaded side by side and measured in alternation (`--reps` rounds of:
one sequence, then a batch of 8 prompts in one `generate` call, for each variant), so that
a busy machine slows all alike; the table gives the median round. Sampling at temperature 0.7
with a fixed seed. Tokens are the generated tokens the backend counts (`Completion.tokens`),
so a sequence that ends early is not counted as if it ran on. `--http` adds the batch sent
through the OpenAI backend to the loopback server, to show what HTTP costs. Run:

    python benchmarks/backend_speed.py                       # bundled model, 64 new tokens
    python benchmarks/backend_speed.py --variants packed-fp16,float32,bfloat16
    python benchmarks/backend_speed.py --model smollm2-135m --new-tokens 32 --http
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from selfplay.backends import Prompt, Sampling, make_backend

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


# What each variant asks of the transformers backend.
VARIANTS = {
    "packed-fp16": {"dtype": "float32", "quantize": "fp16"},
    "float32": {"dtype": "float32", "quantize": "none"},
    "bfloat16": {"dtype": "bfloat16", "quantize": "none"},
}


def prompt(topic: str) -> Prompt:
    text = f"Write a Python module implementing {topic}, with docstrings and examples."
    return Prompt.user(text, prefill="```python\n")


def timed(backend, prompts: list[Prompt], new_tokens: int) -> dict[str, float]:
    sampling = Sampling(temperature=0.7, top_p=0.95, max_new_tokens=new_tokens, seed=0)
    start = time.perf_counter()
    results = backend.generate(prompts, n=1, sampling=sampling)
    seconds = time.perf_counter() - start
    tokens = sum(c.tokens for r in results for c in r)
    return {
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bundled")
    parser.add_argument("--variants", default="packed-fp16,float32", help=", ".join(VARIANTS))
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--http", action="store_true", help="also time the batch over HTTP")
    args = parser.parse_args()

    batch = [prompt(TOPICS[i % len(TOPICS)]) for i in range(args.batch)]
    backends, load_s = {}, {}
    for variant in args.variants.split(","):
        backend = make_backend(
            "transformers",
            args.model,
            batch_size=args.batch,
            threads=args.threads,
            **VARIANTS[variant],
        )
        start = time.perf_counter()
        backend.load()
        load_s[variant] = round(time.perf_counter() - start, 2)
        timed(backend, batch[:1], 4)  # warm-up: first-call allocations are not generation
        backends[variant] = backend

    cases = {"single": 1, f"batch_{args.batch}": args.batch}
    runs: dict[str, dict[str, list[dict]]] = {d: {c: [] for c in cases} for d in backends}
    for rep in range(args.reps):
        for variant, backend in backends.items():
            for case, size in cases.items():
                result = timed(backend, batch[:size], args.new_tokens)
                runs[variant][case].append(result)
                print(
                    json.dumps({"rep": rep, "variant": variant, "case": case, **result}), flush=True
                )
    if args.http:
        from selfplay.backends.serve import ChatServer

        for variant, backend in backends.items():
            with ChatServer(backend, port=0, model_name="bench") as server:
                client = make_backend("openai", "bench", base_url=server.url)
                result = timed(client, batch, args.new_tokens)
            runs[variant][f"http_batch_{args.batch}"] = [result]
            print(json.dumps({"variant": variant, "case": "http", **result}), flush=True)

    median = {
        d: {c: statistics.median(r["tokens_per_s"] for r in rs) for c, rs in cs.items()}
        for d, cs in runs.items()
    }
    variants = list(backends)
    keys = list(median[variants[0]])
    print(
        f"\nmodel {args.model}, {args.new_tokens} new tokens, median of {args.reps}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print("| variant | load (s) | " + " | ".join(f"{k} tok/s" for k in keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for variant in variants:
        cells = " | ".join(f"{median[variant][k]:.2f}" for k in keys)
        print(f"| {variant} | {load_s[variant]} | {cells} |")
    if len(variants) > 1:
        a, b = variants[:2]
        for k in keys:
            print(f"{k}: {a} / {b} = {median[a][k] / max(median[b][k], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
