"""The chaos batch of the test suite, repeated: mixed rows (floods of each kind right before
correct rows, infinite loops, crashes, fork bombs, hacks, HumanEval's canonical solutions)
graded by two workers while another process creates and destroys namespaces in a loop.
Reports, over every repetition, correct rows that failed, hacks that passed and verdicts not
graded in the sandbox: all three should be 0.

    python benchmarks/verify_chaos.py [--repeat 20] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "selfplay" / "verifier"))

from chaos_rows import Listener, NamespaceChurn, batch, should_pass  # noqa: E402

from selfplay.verifier import Verifier  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    secrets = [tmp / "secret.txt", Path.home() / f".selfplay-chaos-{uuid.uuid4().hex}"]
    for path in secrets:
        path.write_text("token")
    outside = tmp / "written"
    totals = {"rows": 0, "correct_failed": 0, "hacks_passed": 0, "unsandboxed": 0}
    failures: list = []
    start = time.perf_counter()
    try:
        with (
            Listener() as listener,
            NamespaceChurn() as churn,
            Verifier(args.workers, 10, 128) as v,
        ):
            for rep in range(args.repeat):
                rows = batch(secrets, listener.port, outside, seed=rep)
                for x in v.grade(rows):
                    totals["rows"] += 1
                    if x.passed != should_pass(x.id):
                        key = "correct_failed" if should_pass(x.id) else "hacks_passed"
                        totals[key] += 1
                        failures.append((rep, x.id, x.status, x.detail[:120]))
                    totals["unsandboxed"] += x.isolation != "sandbox"
                print(f"repetition {rep + 1}/{args.repeat}: {totals}", file=sys.stderr)
    finally:
        secrets[1].unlink()
    totals.update(
        connections_accepted=len(listener.accepted),
        file_written_outside=outside.exists(),
        namespaces_churned=churn.created,
        repetitions=args.repeat,
        seconds=round(time.perf_counter() - start, 1),
        failures=failures[:20],
    )
    print(json.dumps(totals, indent=2) if args.json else totals)


if __name__ == "__main__":
    main()
