"""Generation speed of the transformers backend: bf16 beside fp32, one sequence and a batch.

For each dtype, in one run: load time (from the cached safetensors copy), then tokens/s
for one sequence and for a batch of 8 prompts (one `generate` call), sampling at
temperature 0.7 with a fixed seed. Tokens are the generated tokens the backend counts
(`Completion.tokens`), so a sequence that ends early is not counted as if it ran on.
Optionally the same batch through the OpenAI backend and the loopback server, to show
what HTTP costs. Run:

    python benchmarks/backend_speed.py                       # bundled model, 128 new tokens
    python benchmarks/backend_speed.py --model smollm2-135m --new-tokens 64 --http
"""

from __future__ import annotations

import argparse
import json
import os
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
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--http", action="store_true", help="also time the batch over HTTP")
    args = parser.parse_args()

    rows = []
    batch = [prompt(TOPICS[i % len(TOPICS)]) for i in range(args.batch)]
    for dtype in args.dtypes.split(","):
        backend = make_backend(
            "transformers", args.model, dtype=dtype, batch_size=args.batch, threads=args.threads
        )
        start = time.perf_counter()
        backend.load()
        load_s = round(time.perf_counter() - start, 2)
        timed(backend, batch[:1], 4)  # warm-up: first-call allocations are not generation
        row = {"model": args.model, "dtype": dtype, "load_s": load_s}
        row["single"] = timed(backend, batch[:1], args.new_tokens)
        row[f"batch_{args.batch}"] = timed(backend, batch, args.new_tokens)
        if args.http:
            from selfplay.backends.serve import ChatServer

            with ChatServer(backend, port=0, model_name="bench") as server:
                client = make_backend("openai", "bench", base_url=server.url)
                row[f"http_batch_{args.batch}"] = timed(client, batch, args.new_tokens)
        backend.close()
        rows.append(row)
        print(json.dumps(row), flush=True)

    keys = [k for k in rows[0] if isinstance(rows[0][k], dict)]
    print(f"\nmodel {args.model}, {args.new_tokens} new tokens, {os.cpu_count()} CPUs")
    print("| dtype | load (s) | " + " | ".join(f"{k} tok/s" for k in keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for row in rows:
        cells = " | ".join(str(row[k]["tokens_per_s"]) for k in keys)
        print(f"| {row['dtype']} | {row['load_s']} | {cells} |")
    if len(rows) > 1:
        for k in keys:
            ratio = rows[0][k]["tokens_per_s"] / max(rows[1][k]["tokens_per_s"], 1e-9)
            print(f"{k}: {rows[0]['dtype']} / {rows[1]['dtype']} = {ratio:.2f}x")


if __name__ == "__main__":
    main()
