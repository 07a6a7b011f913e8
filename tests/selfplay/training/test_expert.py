"""Expert iteration (`method: ei`) with real TRL on the bundled model (SmolLM2-135M passes
none of these tasks): the scheduler picks, the
model samples, the sandbox keeps what passes, and only those answers are trained on."""

from __future__ import annotations

import pytest

for _module in ("torch", "trl", "peft"):
    pytest.importorskip(_module, reason="needs the train extra: pip install 'selfplay[train]'")

from curricula import register_scheduler  # noqa: E402
from curricula.schedulers import Uniform  # noqa: E402
from selfplay import kinds, procedural  # noqa: E402
from selfplay.admission import Admission, AdmissionConfig  # noqa: E402
from selfplay.config import TrainConfig  # noqa: E402
from selfplay.kinds.fences import as_response  # noqa: E402
from selfplay.training import train  # noqa: E402
from selfplay.training.expert import attempt_rows  # noqa: E402
from task_bank.store import Attempt, Bank  # noqa: E402

SEEN: list = []


@register_scheduler("recording-ei")
class RecordingEi(Uniform):
    """Uniform, and keeps the attempts it saw at each pick."""

    def select(self, stats, k, graph=None):
        SEEN.append(int(stats["attempts"].sum()))
        return super().select(stats, k, graph)


def test_rows_are_passing_attempts_only_one_per_task_and_answer(make_task):
    task = make_task("deduction", "def f(x):\n    return x + 1\n", ["1", "2"], ["2", "3"])
    reference = kinds.reference_answer(task)
    attempts = [
        Attempt(task.id, "m", "```python\n2\n```", "passed", True, 1.0),
        Attempt(task.id, "m", "```python\n2\n```", "passed", True, 1.0),  # the same answer
        Attempt(task.id, "m", "2", "passed", True, 1.0),  # stored without its fence
        Attempt(task.id, "m", "```python\n3\n```", "wrong_answer", False, 0.0),
    ]
    rows = attempt_rows({task.id: task}, attempts)
    assert [r["completion"][0]["content"] for r in rows] == ["```python\n2\n```"]
    assert rows[0]["prompt"] == kinds.chat(task) and rows[0]["origin"] == "attempt"
    # A task nobody passed gives no row: its reference answer is never one.
    assert attempt_rows({task.id: task}, attempts[3:]) == [] and reference


@pytest.fixture()
def easy_bank(tmp_path, verifier):
    path = tmp_path / "ei.db"
    with Bank(path) as bank:
        admission = Admission(bank, verifier, AdmissionConfig(decontaminate=False))
        admission.admit(procedural.candidates(levels=(1,), per_level=24, seed=4,
                                              families=["arith", "bits", "strings"]))  # fmt: skip
    return path


@pytest.mark.slow
def test_expert_iteration_trains_only_on_its_own_passing_samples(easy_bank, tmp_path):
    SEEN.clear()
    config = TrainConfig(
        method="ei",
        model="bundled",
        max_steps=2,
        learning_rate=1e-3,
        generation_backend="transformers",
        data={"held_out_fraction": 0.0},
        ei={"iterations": 2, "scheduler": "recording-ei", "tasks": 6, "samples": 4,
            "max_new_tokens": 24, "temperature": 0.3},
    )  # fmt: skip
    # Six tasks a iteration at a low temperature: about half the first iteration's samples
    # pass (13 of 24 measured), so some rows are there on any CPU's numerics, at half the
    # generation of twelve tasks at temperature 1.
    with Bank(easy_bank) as bank:
        result = train(bank, config, tmp_path / "ei")
        record = bank.model(result.model_id)
        mine = bank.conn.execute(
            "SELECT task_id, answer, passed, step FROM attempts WHERE solver = ?",
            (result.model_id,),
        ).fetchall()
    first, second = result.log
    # The scheduler picks each iteration's tasks and sees the first iteration's samples.
    assert len(first["picked"]) == len(second["picked"]) == 6
    assert SEEN == [0, 24]
    assert first["sampled"] == second["sampled"] == 24 and len(mine) == 48
    for it in (first, second):
        passing = {(task, as_response(answer)) for task, answer, passed, step in mine
                   if step == it["iteration"] and passed}  # fmt: skip
        # Rows are exactly the distinct passing samples: no sandbox-computed answer joins them.
        assert it["passed"] >= len(passing) == it["rows"]
        assert it["steps"] == (2 if it["rows"] else 0)
    assert result.rows == first["rows"] + second["rows"] > 0
    assert result.rollouts == 48 and record.method == "ei" and record.status == "done"
    assert (tmp_path / "ei" / "model.safetensors").is_file()
    assert not (tmp_path / "ei" / "checkpoints").exists()
