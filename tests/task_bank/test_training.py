"""What training records in a bank: models, proposals, loop steps, and rollouts redone."""

from __future__ import annotations

from bank_samples import add_tasks

from selfplay.admission.schema import parse_task
from task_bank.store import Attempt, Bank
from task_bank.training import ModelRecord, Proposal


def _task(i: int):
    return parse_task(
        {
            "id": f"t{i}",
            "kind": "codegen",
            "prompt": "Return x plus one.",
            "program": f"def f(x):\n    return x + {i}\n",
            "entry_point": "f",
            "tests": [f"assert f(1) == {1 + i}"],
        },
        source="test",
    )


def test_a_model_is_recorded_when_training_starts_and_finished_with_its_steps(tmp_path):
    with Bank(tmp_path / "b.db") as bank:
        bank.add_model(ModelRecord("m1", "smollm2-135m", "sft", "solver", str(tmp_path / "m1")))
        assert bank.model("m1").status == "training" and bank.model("m1").steps == 0
        bank.finish_model("m1", 12, {"rows": 30})
        bank.set_evaluation("m1", {"bank": {"pass@1": 0.25}})
        bank.set_evaluation("m1", {"humaneval": {"pass@1": 0.1}})
        bank.add_model(ModelRecord("m2", str(tmp_path / "m1"), "dpo", "proposer", "p", "m1"))
    with Bank(tmp_path / "b.db") as bank:
        m1 = bank.model("m1")
        assert (m1.status, m1.steps, m1.data) == ("done", 12, {"rows": 30})
        assert m1.evaluation == {"bank": {"pass@1": 0.25}, "humaneval": {"pass@1": 0.1}}
        assert [m.id for m in bank.models()] == ["m1", "m2"] and bank.model("m2").parent == "m1"
        assert bank.model("nope") is None


def test_rollouts_after_a_checkpoint_are_dropped_with_their_counters(tmp_path):
    with Bank(tmp_path / "b.db") as bank:
        add_tasks(bank, [_task(1), _task(2)])
        made = [
            Attempt("t1", "policy", "a", "passed", True, step=3, created_at=t)
            for t in (10.0, 11.0, 12.0, 13.0)
        ] + [Attempt("t2", "policy", "b", "wrong", False, step=4, created_at=t) for t in (12, 13)]
        made.append(Attempt("t1", "other", "c", "passed", True, step=9, created_at=20.0))
        bank.add_attempts(made)
        assert bank.drop_attempts_since("policy", 11.5) == 4
        stats = bank.solve_stats("policy")
        assert stats.loc["t1"].tolist() == [2, 2, 3]  # attempts, successes, last step
        assert stats.loc["t2"].tolist() == [0, 0, -1]
        assert bank.solve_stats().loc["t1"].tolist() == [3, 3, 9]  # another solver's kept
        assert bank.attempt_summary("policy") == (2, 2, 0)
        assert bank.drop_attempts_since("policy", 11.5) == 0


def test_proposals_keep_their_prompt_text_and_outcome(tmp_path):
    prompt = [{"role": "user", "content": "Write a puzzle."}]
    with Bank(tmp_path / "b.db") as bank:
        r = bank.start_round()
        bank.add_proposals(
            [
                Proposal(r, "deduction", 0, prompt, "```python\ndef f(x):", "no_code"),
                Proposal(r, "deduction", 1, prompt, "def f(x): ...", "admitted", "t9", "m"),
            ]
        )
        got = bank.proposals(r)
        assert [(p.item, p.outcome, p.task_id) for p in got] == [
            (0, "no_code", None),
            (1, "admitted", "t9"),
        ]
        assert got[0].prompt == prompt and got[1].proposer == "m"
        assert bank.proposals(r + 1) == []


def test_a_models_lineage_runs_back_to_the_spec_it_started_from(tmp_path):
    with Bank(tmp_path / "b.db") as bank:
        bank.add_model(ModelRecord("a", "bundled", "sft", "solver", "/a"))
        bank.add_model(ModelRecord("b", "/a", "grpo", "solver", "/b", parent="a"))
        assert bank.lineage("b") == ["b", "a", "bundled"]
        assert bank.lineage("bundled") == ["bundled"]
