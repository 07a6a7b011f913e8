"""The solver's verdicts and the exported reward agree on the same answers, and the solver's
stored attempts become SFT and DPO rows that the reward grades as labelled."""

from __future__ import annotations

import pytest

from selfplay.admission.importers import read_source
from selfplay.backends.scripted import ScriptedBackend
from selfplay.config import SolverConfig
from selfplay.export import ExportOptions, export_bank
from selfplay.kinds.fences import as_response
from selfplay.rewards import GroundTruth, grade_responses
from selfplay.solver import Solver, solver_prompt
from task_bank.store import Bank


def completion(task, sample: int) -> str:
    """A whole response to the solver's prompt: right at sample 0, wrong at 1."""
    ep, ex = task.entry_point, (task.examples or [{}])[0]
    right = sample == 0
    if task.kind in ("codegen", "induction"):
        body = task.program if right else f"def {ep}(*args):\n    return 0\n"
    elif task.kind == "deduction":
        body = ex["output"] if right else "('surely', 'not')"
    else:
        body = f"{ep}({ex['input'] if right else repr('zzz-not-it')})"
    return f"```python\n{body.rstrip()}\n```"


@pytest.mark.slow
def test_solver_verdicts_match_the_reward_and_export_as_labelled(tmp_path, verifier):
    tasks = [t for t in read_source("seeds").tasks if t.entry_point]
    by_prompt = {solver_prompt(t).messages[-1]["content"]: t for t in tasks}
    backend = ScriptedBackend(
        script=lambda prompt, i: completion(by_prompt[prompt.messages[-1]["content"]], i)
    )
    solver = Solver(backend, verifier, SolverConfig(samples=2), name="scripted")
    attempts = solver.attempt(tasks).attempts
    labels = {t.id: GroundTruth.from_task(t).to_json() for t in tasks}
    scores = grade_responses(
        [as_response(a.answer) for a in attempts], [labels[a.task_id] for a in attempts], verifier
    )
    disagree = [
        (a.task_id, a.passed, s.reason)
        for a, s in zip(attempts, scores, strict=True)
        if a.passed != (s.score == 1.0)
    ]
    assert disagree == []
    assert sum(a.passed for a in attempts) == len(tasks)  # every right answer, no wrong one

    with Bank(tmp_path / "bank.db") as bank:
        from selfplay.admission import Admission, AdmissionConfig

        Admission(bank, verifier, AdmissionConfig(decontaminate=False)).admit(tasks)
        bank.add_attempts(attempts)
    report = export_bank(tmp_path / "bank.db", "dpo", tmp_path / "dpo", ExportOptions(split="none"))
    assert report.rows == {"train": len(tasks)}  # one pair per task
    import datasets

    rows = datasets.load_dataset("parquet", data_files=str(tmp_path / "dpo" / "train.parquet"))
    rows = list(rows["train"])
    gts = [labels[r["task_id"]] for r in rows]
    chosen = grade_responses([r["chosen"][0]["content"] for r in rows], gts, verifier)
    rejected = grade_responses([r["rejected"][0]["content"] for r in rows], gts, verifier)
    assert all(s.score == 1.0 for s in chosen) and all(s.score == 0.0 for s in rejected)
