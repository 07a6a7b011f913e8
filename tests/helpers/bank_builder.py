"""A small real bank for export tests: the bundled seeds and one HumanEval task (flagged as
contaminated) imported through admission, plus attempts graded by the reward."""

from __future__ import annotations

import json
from pathlib import Path

from selfplay.admission import Admission, AdmissionConfig, import_source
from selfplay.kinds.fences import as_response
from selfplay.rewards import GroundTruth, grade_responses
from task_bank.store import Attempt, Bank

# (task id, solver, response): right and wrong answers at a few tasks.
CODEGEN, DEDUCTION, INDUCTION = "seed-strings-01", "seed-strings-05", "seed-strings-09"


def _attempts(tasks: dict) -> list[tuple[str, str, str]]:
    rle = tasks[CODEGEN].program
    alt = rle.replace("out = []", "out = list()")
    return [
        (CODEGEN, "solver-a", f"```python\n{rle}```"),
        (CODEGEN, "solver-b", alt),  # stored without a fence
        (CODEGEN, "solver-a", "```python\ndef run_length_encode(s):\n    return s\n```"),
        (CODEGEN, "solver-b", "I am not sure."),
        (DEDUCTION, "solver-a", f"```python\n{tasks[DEDUCTION].examples[0]['output']}\n```"),
        (DEDUCTION, "solver-a", "```python\n'hello world'\n```"),
        # A wrong answer that also scans the heap: stored with its hack signal.
        (
            INDUCTION,
            "solver-a",
            "```python\nimport gc\ngc.get_objects()\ndef shift_vowels(s):\n    return s\n```",
        ),
    ]


def _rejects(folder: Path, seed) -> Path:
    """Two candidates admission turns away: a renamed copy of a seed and a wrong reference."""
    copy = seed.to_row() | {"id": "copy-of-rle", "prompt": "Compress runs.", "source": "extra"}
    wrong = {
        "id": "wrong-ref",
        "kind": "codegen",
        "prompt": "Add one.",
        "program": "def inc(x):\n    return x + 2\n",
        "entry_point": "inc",
        "tests": ["assert inc(1) == 2"],
        "source": "extra",
    }
    path = folder / "extra.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (copy, wrong)))
    return path


def build_bank(path: Path, verifier) -> Path:
    with Bank(path) as bank:
        admission = Admission(bank, verifier, AdmissionConfig())
        import_source("seeds", admission)
        import_source("humaneval", admission, limit=1)
        tasks = {t.id: t for t in bank.tasks()}
        import_source(str(_rejects(path.parent, tasks[CODEGEN])), admission)
        made = _attempts(tasks)
        labels = [GroundTruth.from_task(tasks[tid]).to_json() for tid, _, _ in made]
        # An engine may store the extracted code; it is graded as the response it came from.
        responses = [as_response(r) for _, _, r in made]
        scores = grade_responses(responses, labels, verifier)
        round_id = bank.start_round({"purpose": "export tests"})
        bank.add_attempts(
            Attempt(
                tid,
                solver,
                response,
                s.reason,
                s.score == 1.0,
                s.score,
                round_id,
                step,
                signals=s.signals,
            )  # fmt: skip
            for step, ((tid, solver, response), s) in enumerate(zip(made, scores, strict=True))
        )
        bank.finish_round(round_id, {"attempts": len(made)})
    return path
