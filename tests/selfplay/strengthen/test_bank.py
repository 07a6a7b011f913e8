"""Strengthening a bank: the new tests are recorded beside the task's own, rewards and exports
grade on both, a second run adds nothing, and the command reports the mutation score."""

from __future__ import annotations

import importlib
import json

import pytest
from bank_samples import CLAMP, codegen_row, write_jsonl
from selfplay_cli import run_cli

from selfplay.rewards.grade import grade_responses
from selfplay.rewards.ground_truth import GroundTruth
from selfplay.strengthen.bank import strengthen_bank
from task_bank.store import Bank

# The module (the package's `strengthen` is its function).
strengthen_module = importlib.import_module("selfplay.strengthen.strengthen")

EARLY_RETURN = "```python\ndef clamp(x, lo, hi):\n    return x\n```"
RIGHT = f"```python\n{CLAMP}```"


@pytest.fixture
def weak_bank(tmp_path):
    """A bank whose one codegen task has one test, which `return x` passes."""
    rows = write_jsonl(tmp_path / "weak.jsonl",
                       [codegen_row(CLAMP, "clamp", ["assert clamp(5, 0, 10) == 5"], id="clamp")])  # fmt: skip
    path = tmp_path / "bank.db"
    done = run_cli("bank", "import", str(rows), "--bank", str(path), "--source-name", "mine")
    assert done.returncode == 0, done.stderr
    return path


def test_added_tests_are_recorded_beside_the_tasks_own_and_a_second_run_adds_nothing(
    weak_bank, verifier
):
    with Bank(weak_bank) as bank:
        (task,) = bank.tasks(kind="codegen")
        first = strengthen_bank(bank, verifier, [task])["mine"]
        (after,) = bank.tasks(kind="codegen")
        assert after.tests == task.tests  # the task's own, untouched
        added = after.strengthened["tests"]
        assert added and first.tests_added == len(added) and first.strengthened == 1
        assert first.killed_after > first.killed_before
        assert after.strengthened["provenance"]["killed_before"] == first.killed_before
        second = strengthen_bank(bank, verifier, [after])["mine"]
        (again,) = bank.tasks(kind="codegen")
    assert second.tests_added == 0 and again.strengthened == after.strengthened
    # The second run reports the first run's mutation score, not a new baseline.
    assert (second.killed_before, second.killed_after) == (first.killed_before, first.killed_after)


def test_rewards_grade_on_the_added_tests_and_the_original_view_on_the_tasks_own(
    weak_bank, verifier
):
    with Bank(weak_bank) as bank:
        (task,) = bank.tasks(kind="codegen")
        before = GroundTruth.from_task(task)
        strengthen_bank(bank, verifier, [task])
        (task,) = bank.tasks(kind="codegen")
    after = GroundTruth.parse(GroundTruth.from_task(task).to_json())  # as a label travels
    assert after.strengthened == len(task.strengthened["tests"])
    scores = grade_responses([EARLY_RETURN, RIGHT] * 3,
                             [before, before, after, after, after.original(), after.original()],
                             verifier)  # fmt: skip
    assert [s.score for s in scores] == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0]


def test_exports_carry_the_added_tests_and_the_card_reports_them(weak_bank, verifier, tmp_path):
    with Bank(weak_bank) as bank:
        strengthen_bank(bank, verifier, list(bank.tasks(kind="codegen")))
        (task,) = bank.tasks(kind="codegen")
    out = tmp_path / "trl"
    done = run_cli("export", "--format", "trl", "--out", str(out), "--bank", str(weak_bank),
                   "--split", "none")  # fmt: skip
    assert done.returncode == 0, done.stderr
    import pyarrow.parquet as pq

    (row,) = pq.read_table(out / "train.parquet").to_pylist()
    label = GroundTruth.parse(row["ground_truth"])
    assert label.tests == task.all_tests and label.strengthened == len(task.strengthened["tests"])
    card = (out / "README.md").read_text()
    assert "selfplay bank strengthen" in card and "| mine | 1 | 1 |" in card


def test_a_test_the_reference_fails_is_never_kept(weak_bank, verifier, monkeypatch):
    # Every expected value made wrong by one: the check on the reference must refuse them all.
    real = strengthen_module.test_of
    monkeypatch.setattr(strengthen_module, "test_of",
                        lambda entry, args, out: real(entry, args, str(int(out) + 1)))  # fmt: skip
    with Bank(weak_bank) as bank:
        (task,) = bank.tasks(kind="codegen")
    result = strengthen_module.strengthen(task, verifier)
    assert result.tests == [] and result.reason.startswith("reference_fails")


def test_the_command_reports_by_source_and_refuses_other_kinds(weak_bank):
    done = run_cli("bank", "strengthen", "--bank", str(weak_bank), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["mine"]
    assert report["tasks"] == 1 and report["strengthened"] == 1 and report["tests_added"] >= 1
    assert report["score_after"] > report["score_before"]
    done = run_cli("bank", "strengthen", "--bank", str(weak_bank), "--kind", "deduction")
    assert done.returncode == 2 and "only codegen" in done.stderr
    assert "Traceback" not in done.stderr


# KodCode's record shape with the float-tolerance tests an empty array satisfies.
FLOAT_TASKS = [
    {"question_id": "area", "question": "Write `area`.",
     "solution": "import math\n\ndef area(r):\n    return math.pi * r * r\n",
     "test": "import numpy as np\nfrom solution import area\n\n"
             "def test_area():\n    assert np.allclose(area(1.0), 3.14159, atol=1e-4)\n"},
    {"question_id": "mean", "question": "Write `mean`.",
     "solution": "def mean(xs):\n    return sum(xs) / len(xs)\n",
     "test": "import numpy as np\nfrom solution import mean\n\n"
             "def test_mean():\n    np.testing.assert_allclose(mean([1, 2, 3]), 2.0)\n"},
]  # fmt: skip


def test_an_import_strengthened_keeps_float_tasks_that_no_degenerate_answer_passes(tmp_path):
    from selfplay.admission.degenerate import PROBES, program
    from selfplay.rewards import compute_score_batch

    rows = write_jsonl(tmp_path / "kod.jsonl", FLOAT_TASKS)
    plain = run_cli("bank", "import", str(rows), "--bank", str(tmp_path / "a.db"), "--json")
    assert json.loads(plain.stdout)["rejected"] == {"weak_tests": 2}, plain.stdout
    done = run_cli("bank", "import", str(rows), "--bank", str(tmp_path / "b.db"), "--json",
                   "--strengthen")  # fmt: skip
    assert done.returncode == 0 and json.loads(done.stdout)["admitted"] == 2, done.stdout
    with Bank(tmp_path / "b.db") as bank:
        tasks = list(bank.tasks(kind="codegen"))
    labels = [GroundTruth.from_task(t).to_json() for t in tasks]
    answers = [(label, f"```python\n{program(name, t.entry_point)}```")
               for t, label in zip(tasks, labels, strict=True) for name in PROBES]  # fmt: skip
    scores = compute_score_batch(["selfplay"] * len(answers), [a for _, a in answers],
                                 [label for label, _ in answers])  # fmt: skip
    assert [s["score"] for s in scores] == [0.0] * len(answers)
    right = compute_score_batch(["selfplay"] * 2, [f"```python\n{t.program}```" for t in tasks],
                                labels)  # fmt: skip
    assert [s["score"] for s in right] == [1.0, 1.0]


def test_eval_reports_pass_at_1_on_the_original_and_on_the_strengthened_tests(weak_bank, verifier):
    from types import SimpleNamespace

    from selfplay.backends.scripted import ScriptedBackend
    from selfplay.evaluate import evaluate_bank

    with Bank(weak_bank) as bank:
        strengthen_bank(bank, verifier, list(bank.tasks(kind="codegen")))
        (task,) = bank.tasks(kind="codegen")
    item = SimpleNamespace(task=task, ground_truth=GroundTruth.from_task(task).to_json())
    backend = ScriptedBackend(script=[EARLY_RETURN, RIGHT])
    report = evaluate_bank(backend, verifier, [item], samples=2)
    assert report.pass_at_k["pass@1"] == 0.5  # only the right answer passes every test
    assert report.original["pass@1"] == 1.0  # the task's own test lets `return x` through
    assert report.original["fail_only_added_tests"] == 1
    assert [r["passed_original"] for r in report.rows] == [True, True]
    assert report.to_dict()["original_tests"] == report.original


def test_a_models_edge_cases_are_arguments_only_and_the_command_records_the_model(
    weak_bank, tmp_path
):
    from selfplay.backends.scripted import ScriptedBackend
    from selfplay.strengthen.edge_cases import edge_cases

    with Bank(weak_bank) as bank:
        (task,) = bank.tasks(kind="codegen")
    # The prefill opens the first call: the model continues `clamp(`.
    text = "20, 0, 10)\nclamp(x, 0, 1)\nclamp(-1, 0, 10) == 0\nprint('hi')\n```"
    backend = ScriptedBackend(script=[text])
    found = edge_cases([task], backend)
    assert found == {task.id: ["20, 0, 10", "-1, 0, 10"]}  # literal arguments only
    (prompt, _sampling) = backend.seen[0]
    asked = str(prompt.messages[-1]["content"])
    assert task.prompt.strip() in asked and "return hi" not in asked  # the statement only
    script = tmp_path / "model.json"
    script.write_text(json.dumps([text]))
    done = run_cli("bank", "strengthen", "--bank", str(weak_bank), "--json",
                   "--backend", "scripted", "--model", str(script))  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Bank(weak_bank) as bank:
        (task,) = bank.tasks(kind="codegen")
    assert task.strengthened["provenance"]["edge_cases_by"] == str(script)
    done = run_cli("bank", "strengthen", "--bank", str(weak_bank), "--model", "no-such-model-x")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def test_a_passing_attempt_that_answers_a_new_input_wrongly_gets_a_test_that_fails_it(
    weak_bank, verifier
):
    from task_bank.attempts import Attempt

    # Right on the task's one test (x=5), wrong at 6: no mutant of the reference does that.
    odd = "def clamp(x, lo, hi):\n    return 7 if x == 6 else max(lo, min(x, hi))\n"
    with Bank(weak_bank) as bank:
        (task,) = bank.tasks(kind="codegen")
        bank.add_attempts([Attempt(task.id, "m", f"```python\n{odd}```", "passed", True)])
        report = strengthen_bank(bank, verifier, [task])["mine"]
        (task,) = bank.tasks(kind="codegen")
    assert report.attempts_wrong == 1
    (old, new) = verifier.grade([{"id": "old", "program": odd, "tests": task.tests},
                                 {"id": "new", "program": odd, "tests": task.all_tests}])  # fmt: skip
    assert old.passed and not new.passed
