"""Rewards through `serve-rewards` (HTTP, OpenRLHF's protocol) against the same rewards computed
in-process, same responses, same verifier, same run; and a load test of the service.

Responses: `reward_speed.make_batch` (the bundled seed tasks, each with a right answer, a wrong
one, no answer and an early-exit hack). In-process: `grade_responses` on the whole batch, as the
OpenRLHF reward file does. Service: a `RewardServer` on loopback backed by the same verifier;
`--clients` threads each post requests of `--per-request` responses (OpenRLHF's rollout workers
send one each) until the batch is done. Reported: rewards/s of both, per-request latency p50/p99,
requests lost (no answer, an error status or a wrong reward count) and rewards that differ from
the in-process ones, and how many verifier batches the service's requests were gathered into.

    python benchmarks/reward_service.py [--n 1024] [--clients 32] [--per-request 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reward_speed import make_batch  # noqa: E402


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.load(response)
    except Exception as e:  # counted as lost
        return getattr(e, "code", 0), {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024, help="responses")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--clients", type=int, default=32, help="concurrent HTTP clients")
    ap.add_argument("--per-request", type=int, default=1, help="responses per request")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from selfplay.rewards import grade_responses
    from selfplay.rewards.service import RewardServer
    from selfplay.verifier import Verifier

    responses, labels, _ = make_batch(args.n)
    with Verifier(args.workers, timeout_s=10.0) as verifier:
        verifier.grade([{"id": "warm", "program": "x = 1\n", "tests": []}] * args.workers)
        t = time.perf_counter()
        local = [s.score for s in grade_responses(responses, labels, verifier)]
        t_local = time.perf_counter() - t
        k = args.per_request
        requests = [(i, min(i + k, args.n)) for i in range(0, args.n, k)]
        latencies: list[float] = []
        remote: list[float | None] = [None] * args.n
        lost = 0
        with RewardServer(verifier, port=0) as server:
            url = server.url + "/get_reward"

            def one(span: tuple[int, int]) -> None:
                nonlocal lost
                a, b = span
                body = {"query": responses[a:b], "prompts": [""] * (b - a), "labels": labels[a:b]}
                t0 = time.perf_counter()
                code, answer = post(url, body)
                latencies.append(time.perf_counter() - t0)
                rewards = answer.get("rewards")
                if code != 200 or not isinstance(rewards, list) or len(rewards) != b - a:
                    lost += 1
                    return
                remote[a:b] = rewards

            t = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                list(pool.map(one, requests))
            t_service = time.perf_counter() - t
            batches = server.batches
    result = {
        "responses": args.n,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "clients": args.clients,
        "requests": len(requests),
        "responses_per_request": k,
        "rewards_per_s": {
            "in_process": round(args.n / t_local, 1),
            "service": round(args.n / t_service, 1),
        },
        "service_vs_in_process": round(t_local / t_service, 3),
        "latency_ms": {
            "p50": round(1000 * percentile(latencies, 0.5), 1),
            "p99": round(1000 * percentile(latencies, 0.99), 1),
        },
        "lost_requests": lost,
        "rewards_differing": sum(a != b for a, b in zip(local, remote, strict=True)),
        "verifier_batches": batches,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{args.n} responses, {args.workers} workers, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; {len(requests)} requests of {k} from {args.clients} clients"
    )
    rates = result["rewards_per_s"]
    print(
        f"in-process {rates['in_process']} rewards/s, service {rates['service']} rewards/s "
        f"({result['service_vs_in_process']}x); request latency p50 "
        f"{result['latency_ms']['p50']} ms, p99 {result['latency_ms']['p99']} ms"
    )
    print(
        f"lost requests {lost}, rewards differing {result['rewards_differing']}, "
        f"{len(requests)} requests graded in {batches} verifier batches"
    )


if __name__ == "__main__":
    main()
