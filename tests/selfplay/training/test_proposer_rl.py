"""The proposer's RL (`--role proposer --method grpo`), run for real: the bundled model
writes tasks through the real engine (vLLM's CPU build where it runs), the real sandbox
admits and grades them, the frozen start model solves them, and the policy takes its
steps; every step is a round of the bank with its figures."""

from __future__ import annotations

import json

import pytest

for _module in ("torch", "trl", "peft"):
    pytest.importorskip(_module, reason="needs the train extra: pip install 'selfplay[train]'")

from selfplay.config import TrainConfig  # noqa: E402
from selfplay.training import TrainDataError, train  # noqa: E402
from task_bank.store import Bank  # noqa: E402

STEP_FIELDS = {"step", "round", "proposals", "admitted", "frontier", "frontier_share", "reward",
               "reward_interval", "rejected", "duplicates", "diversity", "kl", "loss",
               "sequences", "tokens", "seconds"}  # fmt: skip


def tiny(**over) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "method": "grpo",
            "role": "proposer",
            "model": "bundled",
            "max_steps": 2,
            "save_steps": 1,
            "learning_rate": 1e-4,
            "data": {"held_out_fraction": 0.0},
            "proposer_grpo": {"kinds": ["deduction"], "group_size": 3, "solver_samples": 2},
            **over,
        }
    ).check()


@pytest.mark.slow
def test_two_rl_steps_propose_admit_solve_and_update_the_proposer(bank_file, tmp_path):
    out = tmp_path / "proposer"
    with Bank(bank_file) as bank:
        tasks_before = bank.count()
        result = train(bank, tiny(), out)
        steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        rounds = [r for r in bank.rounds() if r["config"].get("proposer_rl") == result.model_id]
        assert result.steps == 2 and [s["step"] for s in steps] == [1, 2]
        assert [r["id"] for r in rounds] == [s["round"] for s in steps]
        assert all(r["finished_at"] for r in rounds)
        for record, round_ in zip(steps, rounds, strict=True):
            assert STEP_FIELDS <= set(record)
            assert record["proposals"] == 3 == len(bank.proposals(round_["id"]))
            # Every proposal is counted once: admitted, flagged, or rejected for a reason.
            assert record["admitted"] + record["flagged"] + sum(record["rejected"].values()) == 3
            assert -2.0 <= record["reward"] <= 1.0
            new = bank.new_task_ids(round_["id"], "selfplay")
            assert len(new) == record["admitted"]
            # The start model, frozen, attempted each admitted task solver_samples times.
            counts = bank.round_pass_counts(round_["id"])
            assert all(counts[t][0] == 2 for t in new)
            rewarded = [p for p in bank.proposals(round_["id"]) if p.reward is not None]
            assert {p.task_id for p in rewarded} == set(new)
        # KL is measured on the policy that sampled the batch: the start, at step 1.
        assert steps[0]["kl"] == 0.0
        assert bank.count() == tasks_before + sum(s["admitted"] for s in steps)
        record = bank.model(result.model_id)
        assert record.role == "proposer" and record.steps == 2
        assert record.data["proposer_rl"]["proposals"] == 6
    assert (out / "adapter").is_dir() and (out / "selfplay-trained.json").exists()
    assert not (out / "checkpoints").exists()
    assert result.log == steps


def test_a_bank_without_references_of_a_kind_is_one_sentence(tmp_path):
    with Bank(tmp_path / "empty.db") as bank, pytest.raises(TrainDataError) as err:
        train(bank, tiny(), tmp_path / "out")
    assert "no tasks of kind deduction" in str(err.value)
    assert "\n" not in str(err.value)
