"""`selfplay.training.train` with real TRL and peft on SmolLM2-135M, on a real bank file."""

from __future__ import annotations

import pytest

for _module in ("torch", "trl", "peft"):
    pytest.importorskip(_module, reason="needs the train extra: pip install 'selfplay[train]'")

from curricula import register_scheduler  # noqa: E402
from curricula.schedulers import Uniform  # noqa: E402
from selfplay.backends import Sampling, make_backend  # noqa: E402
from selfplay.backends.auto import vllm_blocker  # noqa: E402
from selfplay.backends.models import model_label  # noqa: E402
from selfplay.config import TrainConfig  # noqa: E402
from selfplay.evaluate import evaluate_bank  # noqa: E402
from selfplay.export.select import ExportOptions, select  # noqa: E402
from selfplay.training import TrainDataError, TrainError, train  # noqa: E402
from selfplay.training.warmup import warmup_size  # noqa: E402
from task_bank.store import Bank  # noqa: E402
from task_bank.training import Proposal  # noqa: E402

PICKS: list = []


@register_scheduler("recording-grpo")
class RecordingGrpo(Uniform):
    """Uniform, and keeps how many rollouts of each task it saw at each pick."""

    def select(self, stats, k, graph=None):
        PICKS.append(int(stats["attempts"].sum()))
        return super().select(stats, k, graph)


def _weights(path: str, name: str = "model") -> dict:
    from safetensors.torch import load_file

    return load_file(f"{path}/{name}.safetensors")


@pytest.mark.slow
def test_a_few_sft_steps_teach_exactly_the_tasks_trained_on(
    bank_file, tiny_model, tmp_path, verifier
):
    greedy = Sampling(temperature=0.0, max_new_tokens=48)
    with Bank(bank_file) as bank:
        items = select(bank, ExportOptions(split="none", kinds=["deduction"])).items[:4]
        ids = [item.task.id for item in items]

        def pass_rate(model: str) -> float:
            with make_backend("transformers", model) as backend:
                return evaluate_bank(backend, verifier, items, sampling=greedy).pass_at_k["pass@1"]

        before = pass_rate(tiny_model)
        config = TrainConfig(
            method="sft",
            model="smollm2-135m",
            max_steps=8,
            learning_rate=2e-3,
            data={"tasks": ids, "held_out_fraction": 0.0},
        )
        result = train(bank, config, tmp_path / "sft")
        after = pass_rate(result.path)  # the checkpoint, loaded as any --model is
        record = bank.model(result.model_id)
    assert after >= before + 0.5, (before, after)
    assert result.rows == 4 and result.steps == 8 and record.status == "done"
    assert record.data["tasks"] == 4 and record.method == "sft" and record.steps == 8
    assert model_label(result.path) == result.model_id
    assert (tmp_path / "sft" / "adapter" / "adapter_config.json").is_file()
    assert not (tmp_path / "sft" / "checkpoints").exists()
    base, trained = _weights(tiny_model), _weights(result.path)
    changed = [name for name in base if not base[name].float().equal(trained[name].float())]
    assert changed and "model.layers.0.self_attn.q_proj.weight" in changed


@pytest.mark.slow
def test_grpo_asks_the_scheduler_for_each_batch_and_records_every_rollout(bank_file, tmp_path):
    PICKS.clear()
    config = TrainConfig(
        method="grpo",
        model="smollm2-135m",
        max_steps=3,
        save_steps=10,
        data={"kinds": ["deduction"]},
        grpo={"scheduler": "recording-grpo", "max_completion_length": 16},
    )
    said = []
    with Bank(bank_file) as bank:
        result = train(bank, config, tmp_path / "grpo",
                       progress=lambda phase, done, total, note=None: said.append((phase, note)))  # fmt: skip
        made = bank.attempt_summary(result.model_id)[0]
        record = bank.model(result.model_id)
        tasks = len(list(bank.tasks(kind="deduction")))
        warm = bank.solve_stats("smollm2-135m", kind="deduction")
    # One prompt per step, two generations each: every rollout is in the bank, by the model.
    assert result.rollouts == made == 6 and record.steps == 3
    # Each step says what it is busy with as it starts (generation can take minutes).
    assert [n for p, n in said if p == "train" and n and "rollouts" in n] == [
        f"step {k}: generating and grading its rollouts" for k in (1, 2, 3)
    ]
    # Before the first pick the starting model attempted training tasks twice (the warm-up),
    # so the scheduler never chose blind...
    warmup = record.data["warmup"]
    # ... a sample of them, sized to what 3 steps can pick (the scheduler's choice).
    size = warmup_size(config)
    assert (
        warmup["warmed"] == min(size, record.data["tasks"])
        and warmup["warmed"] < record.data["tasks"]
    )
    assert warmup["warmed"] + warmup["not_warmed"] == record.data["tasks"]
    assert warmup["attempts"] == 2 * warmup["warmed"]
    # The warm-up is plain generation: vLLM's CPU build where it runs (CI installs it).
    assert warmup["engine"] == ("vllm" if vllm_blocker() is None else "transformers")
    assert 0 < record.data["tasks"] <= tasks and (warm["attempts"] > 0).sum() >= warmup["warmed"]
    # The scheduler sees the policy's own line only (other solvers' attempts are not its
    # record), and its rollouts as they arrive (the loader fetches one batch ahead).
    assert len(PICKS) >= 3 and PICKS[0] == warmup["attempts"], PICKS
    assert PICKS[2] >= PICKS[0] + 2, PICKS
    assert any("reward" in entry for entry in result.log)


@pytest.mark.slow
def test_dpo_trains_the_solver_on_pairs_and_the_proposer_on_its_proposals(bank_file, tmp_path):
    prompt = [{"role": "user", "content": "Write a new puzzle f."}]
    with Bank(bank_file) as bank:
        config = TrainConfig(method="dpo", model="smollm2-135m", max_steps=1,
                             data={"held_out_fraction": 0.0})  # fmt: skip
        solver = train(bank, config, tmp_path / "dpo")
        r = bank.start_round()
        task = next(bank.tasks()).id
        bank.add_proposals(
            [
                Proposal(r, "deduction", 0, prompt, "```python\ndef f(x):\n    return x\n", "admitted", task),
                Proposal(r, "deduction", 1, prompt, "```python\ndef f(", "no_code"),
            ]
        )  # fmt: skip
        config = TrainConfig(method="dpo", role="proposer", model=solver.path, max_steps=1)
        proposer = train(bank, config, tmp_path / "proposer")
        record = bank.model(proposer.model_id)
    assert solver.rows >= 2 and solver.steps == 1  # the bank's passing/failing attempt pairs
    assert proposer.rows == 1 and record.role == "proposer"
    assert record.parent == solver.model_id  # trained from the solver's checkpoint


def test_training_never_sees_the_split_that_eval_bank_measures(bank_file):
    from selfplay.training.data import solver_items

    with Bank(bank_file) as bank:
        options = ExportOptions(split="random", test_fraction=0.1, seed=0)  # eval bank's default
        test = {i.task.id for i in select(bank, options).items if i.split == "test"}
        trained = {i.task.id for i in solver_items(bank, TrainConfig(model="smollm2-135m"))}
        every = solver_items(bank, TrainConfig(model="smollm2-135m", data={"held_out_fraction": 0}))
    assert test and not test & trained
    assert {i.task.id for i in every} == trained | test


def test_nothing_to_train_on_and_a_used_directory_are_one_sentence(bank_file, tmp_path):
    with Bank(bank_file) as bank:
        with pytest.raises(TrainDataError, match="no task in the bank passes"):
            train(bank, TrainConfig(model="smollm2-135m", data={"tasks": ["nope"]}), tmp_path / "a")
        with pytest.raises(TrainDataError, match="no proposer prompt"):
            train(bank, TrainConfig(method="dpo", role="proposer", model="smollm2-135m"),
                  tmp_path / "b")  # fmt: skip
        (tmp_path / "c").mkdir()
        (tmp_path / "c" / "notes.txt").write_text("mine")
        with pytest.raises(TrainError, match="exists and is not empty"):
            train(bank, TrainConfig(model="smollm2-135m"), tmp_path / "c")
        assert bank.models() == []  # nothing trained, nothing recorded
    assert (tmp_path / "c" / "notes.txt").read_text() == "mine"


def _gpu_with_vllm() -> bool:
    import importlib.util

    import torch

    return torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None


@pytest.mark.slow
@pytest.mark.skipif(
    not _gpu_with_vllm(), reason="needs a CUDA GPU and vllm (pip install 'selfplay[vllm]')"
)
def test_grpo_generates_its_rollouts_with_vllm_on_a_gpu(bank_file, tmp_path):
    config = TrainConfig(
        method="grpo",
        model="smollm2-135m",
        max_steps=2,
        data={"kinds": ["deduction"]},
        grpo={"use_vllm": "yes", "max_completion_length": 32},
    )
    with Bank(bank_file) as bank:
        result = train(bank, config, tmp_path / "grpo-vllm")
        made = bank.attempt_summary(result.model_id)[0]
    assert result.steps == 2 and result.rollouts == made == 4


def test_the_proposer_is_reinforced_on_its_learnable_admitted_programs_by_their_reward(
    bank_file, tmp_path
):
    from selfplay.training.data import SFT_REPEATS, proposer_sft_rows

    prompt = [{"role": "user", "content": "Write a new puzzle f."}]
    with Bank(bank_file) as bank:
        r = bank.start_round()
        first, second, third = (t.id for t, _ in zip(bank.tasks(), range(3), strict=False))
        bank.add_proposals(
            [
                Proposal(r, "deduction", 0, prompt, "```python\ndef f(x", "admitted", first),
                Proposal(r, "deduction", 1, prompt, "```python\ndef f(y", "admitted", second),
                Proposal(r, "deduction", 2, prompt, "```python\ndef f(z", "admitted", third),
                Proposal(r, "deduction", 3, prompt, "```python\ndef f(", "no_code"),
            ]
        )
        # Solved 1 of 4 (reward 0.75), 3 of 4 (0.25), never (0): the reward is stored with
        # the proposal by the round's rewards step.
        bank.set_proposal_rewards(r, {first: 0.75, second: 0.25, third: 0.0})
        rows = proposer_sft_rows(bank)
        program = bank.get(first).program
        assert [row["task_id"] for row in rows].count(first) == 3 == SFT_REPEATS
        assert [row["task_id"] for row in rows].count(second) == 1
        assert third not in {row["task_id"] for row in rows}
        # The admitted program is the completion, not the text the model wrote.
        assert rows[0]["completion"][0]["content"] == f"```python\n{program}```"
        assert rows[0]["prompt"] == prompt
        result = train(
            bank,
            TrainConfig(method="sft", role="proposer", model="smollm2-135m", max_steps=1),
            tmp_path / "proposer",
        )
        assert result.rows == 4 and bank.model(result.model_id).role == "proposer"


def test_where_a_cut_off_run_resumes_is_said_only_for_its_own_config(tmp_path):
    import json

    from selfplay.config import TrainConfig
    from selfplay.training.trainer import CONFIG_FILE, resume_point

    config = TrainConfig(max_steps=4)
    assert resume_point(tmp_path, config) is None  # nothing there
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / CONFIG_FILE).write_text(json.dumps(config.model_dump(mode="json")))
    # Cut off before its first checkpoint: it starts again, and says so.
    assert resume_point(tmp_path, config).startswith("the start (it stopped before its first")
    done = tmp_path / "checkpoints" / "checkpoint-2"
    done.mkdir(parents=True)
    (done / "trainer_state.json").write_text("{}")
    assert resume_point(tmp_path, config) == "step 2 (its checkpoint)"
    other = TrainConfig(max_steps=5)
    assert resume_point(tmp_path, other) is None  # train refuses it: nothing to announce
    assert resume_point(tmp_path, other, force=True) == "step 2 (its checkpoint)"
    (tmp_path / "checkpoints" / "iter-1").mkdir()
    (tmp_path / "checkpoints" / "iter-1" / "iteration.json").write_text("{}")
    assert resume_point(tmp_path, config) == "iteration 2 (kept: 1 finished iteration)"


@pytest.mark.slow
def test_average_saves_the_model_halfway_back_and_its_adapter_to_match(bank_file, tiny_model,
                                                                       tmp_path):  # fmt: skip
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    saved = {}
    with Bank(bank_file) as bank:
        for weight in (1.0, 0.5):  # the same seed: the same run, then taken back or not
            config = TrainConfig(method="sft", model="smollm2-135m", max_steps=2,
                                 learning_rate=2e-3, average=weight,
                                 data={"held_out_fraction": 0.0})  # fmt: skip
            result = train(bank, config, tmp_path / f"sft-{weight}")
            assert bank.model(result.model_id).config["average"] == weight
            saved[weight] = _weights(result.path)
    base = _weights(tiny_model)
    name = "model.layers.0.self_attn.q_proj.weight"
    full = saved[1.0][name].float() - base[name].float()
    assert full.abs().max() > 1e-3  # training moved it
    torch.testing.assert_close(saved[0.5][name].float() - base[name].float(), 0.5 * full,
                               atol=1e-5, rtol=1e-3)  # fmt: skip
    # The adapter saved beside it, merged into the starting model, is the saved model.
    start = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32)
    merged = PeftModel.from_pretrained(start, tmp_path / "sft-0.5" / "adapter").merge_and_unload()
    torch.testing.assert_close(merged.state_dict()[name], saved[0.5][name].float(),
                               atol=1e-5, rtol=1e-3)  # fmt: skip
