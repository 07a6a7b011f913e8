"""What the degenerate-response probe does to real task sets, and what degenerate answers score.

    python benchmarks/degenerate_probe.py [--out benchmarks/figures/degenerate_probe.json]

1. Admission: the bundled seeds, all of HumanEval and KodCode-shaped float-tolerance tasks
   (written here in KodCode's record shape, imported through the bank's own adapter) are
   admitted into a fresh bank with the probe on: per source, tasks admitted, turned away as
   `weak_tests`, and flagged (their reference itself returns a degenerate value).
2. Reward: every degenerate answer (`selfplay.admission.degenerate.PROBES`, as a response in
   a fenced block) against every codegen task of each source, probed or not, graded through
   `compute_score_batch`: how many score above 0, per source and answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# KodCode's record shape (question, solution, pytest module): the float-tolerance tests an
# empty numpy array satisfies.
KODCODE = [
    {
        "question_id": f"float-{name}",
        "question": f"Write `{name}`.",
        "solution": solution,
        "test": f"import numpy as np\nfrom solution import {name}\n\n{tests}",
    }
    for name, solution, tests in (
        ("area", "import math\n\ndef area(r):\n    return math.pi * r * r\n",
         "def test_area():\n    assert np.allclose(area(1.0), 3.14159, atol=1e-4)\n"),
        ("mean", "def mean(xs):\n    return sum(xs) / len(xs)\n",
         "def test_mean():\n    np.testing.assert_allclose(mean([1, 2, 3]), 2.0)\n"),
        ("scale", "import numpy as np\n\ndef scale(xs, k):\n    return np.asarray(xs) * k\n",
         "def test_scale():\n    assert np.allclose(scale([1, 2, 3], 2), [2.0, 4.0, 6.0])\n"),
    )
]  # fmt: skip


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from selfplay.admission import Admission, AdmissionConfig, degenerate
    from selfplay.admission.importers.adapters import kodcode
    from selfplay.admission.schema import parse_task
    from selfplay.admission.sources import import_source
    from selfplay.rewards import GroundTruth, compute_score_batch
    from selfplay.verifier import Verifier
    from task_bank.store import Bank

    started = time.perf_counter()
    out: dict = {"admission": {}, "reward": {}}
    with tempfile.TemporaryDirectory() as tmp, Verifier(workers=2) as verifier:
        kodcode_file = Path(tmp) / "kodcode.jsonl"
        kodcode_file.write_text("".join(json.dumps(r) + "\n" for r in KODCODE))
        sources = {"seeds": "seeds", "humaneval": "humaneval", "kodcode": str(kodcode_file)}
        with Bank(Path(tmp) / "bank.db") as bank:
            admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
            for name, source in sources.items():
                report = import_source(source, admission, source_name=name,
                                       shape="kodcode" if name == "kodcode" else None)  # fmt: skip
                tasks = list(bank.tasks(source=name))
                out["admission"][name] = {
                    "seen": report.seen,
                    "admitted": report.admitted,
                    "rejected": dict(report.rejected),
                    "flagged": {t.id: t.metadata["degenerate_passes"] for t in tasks
                                if t.metadata.get("degenerate_passes")},
                }  # fmt: skip
        # Rewards: every codegen task of each source, as it came (probed or not).
        for name, source in sources.items():
            if name == "kodcode":
                rows = [parse_task(kodcode(r), source=name) for r in KODCODE]
            else:
                from selfplay.admission.importers import read_source

                rows = read_source(source).tasks
            labels = [GroundTruth.from_task(t).to_json() for t in rows if t.kind == "codegen"]
            entries = [t.entry_point for t in rows if t.kind == "codegen"]
            scored: Counter = Counter()
            for probe in degenerate.PROBES:
                responses = [fence(degenerate.program(probe, e)) for e in entries]
                results = compute_score_batch([name] * len(labels), responses, labels)
                scored[probe] = sum(r["score"] > 0 for r in results)
            out["reward"][name] = {"codegen_tasks": len(labels), "scored_above_zero": dict(scored)}
    out["wall_s"] = round(time.perf_counter() - started, 1)
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
