"""A training method defined outside selfplay is one module: this one. Its `build(ctx)` reads
what it trains on and returns a job; registered by name, `train` runs it end to end like the
built-in methods, and records it as it records them (the result, the marker, the bank)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

for _module in ("torch", "transformers", "peft"):
    pytest.importorskip(_module, reason="needs the train extra: pip install 'selfplay[train]'")

import torch  # noqa: E402

from selfplay.config import ConfigError, TrainConfig, load_train_config  # noqa: E402
from selfplay.methods import Method, register_method, unregister_method  # noqa: E402
from selfplay.training import (  # noqa: E402
    TrainContext,
    TrainDataError,
    Trained,
    train,
    trained_marker,
)
from selfplay.training.data import solver_items  # noqa: E402
from task_bank.store import Bank  # noqa: E402

GIVEN: list[TrainContext] = []  # what `build` was given, call by call


@dataclass(slots=True)
class NoteJob:
    """Trains nothing: notes the tasks it was given, as a model directory would hold weights."""

    task_ids: list[str]

    def run(self, ctx: TrainContext) -> Trained:
        ctx.progress("train", 1, 1, note="noted")
        return Trained(
            steps=1,
            rows=len(self.task_ids),
            data={"noted": len(self.task_ids)},
            log=[{"step": 1, "loss": 0.0}],
        )

    def save(self, out: Path) -> None:
        (out / "tasks.txt").write_text("\n".join(self.task_ids), encoding="utf-8")


def build(ctx: TrainContext) -> NoteJob:
    GIVEN.append(ctx)
    items = solver_items(ctx.bank, ctx.config, ctx.exclude)
    return NoteJob([item.task.id for item in items])


@pytest.fixture
def note_method():
    GIVEN.clear()
    method = register_method(
        Method("note", sys.modules[build.__module__], roles={"solver": "a note of its tasks"})
    )
    yield method
    unregister_method("note")


def test_a_method_registered_from_outside_is_trained_and_recorded_like_the_built_in_ones(
    note_method, bank_file, tiny_model, tmp_path
):
    config = load_train_config(None, method="note", model="smollm2-135m", max_steps=3)
    out = tmp_path / "noted"
    said = []
    with Bank(bank_file) as bank:
        held_out = next(bank.tasks()).id
        result = train(bank, config, out, exclude={held_out},
                       progress=lambda *a, **k: said.append((a, k)))  # fmt: skip
        record = bank.model(result.model_id)
        expected = [i.task.id for i in solver_items(bank, config, {held_out})]
        [ctx] = GIVEN
        # What the method was given: the run as `train` set it up.
        assert ctx.bank is bank and ctx.config is config
    assert ctx.out == out and ctx.base == tiny_model and ctx.model_id == result.model_id
    assert ctx.exclude == {held_out} and ctx.proposer_gains is None
    assert ctx.resume is False and ctx.checkpoint is None
    assert ctx.cuda == torch.cuda.is_available()
    assert ctx.common["output_dir"] == str(out / "checkpoints") and ctx.common["max_steps"] == 3
    assert ctx.peft.r == config.lora.r  # LoRA, as configured
    assert (("train", 1, 1), {"note": "noted"}) in said
    # What it did is recorded as every method's is: the result, the marker, the bank.
    assert (out / "tasks.txt").read_text().split("\n") == expected
    assert held_out not in expected
    assert (result.method, result.role, result.steps, result.rows) == ("note", "solver", 1,
                                                                       len(expected))  # fmt: skip
    assert result.log == [{"step": 1, "loss": 0.0}] and result.path == str(out.resolve())
    assert trained_marker(out) == {"id": result.model_id, "base": "smollm2-135m",
                                   "result": result.to_dict()}  # fmt: skip
    assert not (out / "checkpoints").exists()
    assert record.method == "note" and record.status == "done" and record.steps == 1
    assert record.data == {"rows": len(expected), "noted": len(expected)}
    # The same call again returns the finished run as it is; the method is not asked again.
    with Bank(bank_file) as bank:
        assert train(bank, config, out, resume=True) == result
    assert len(GIVEN) == 1


def test_the_config_knows_a_registered_method_and_the_roles_it_trains(note_method):
    assert TrainConfig(method="note").method == "note"
    with pytest.raises(ConfigError, match="proposer role trains with method grpo .* note needs"):
        load_train_config(None, method="note", role="proposer")
    with pytest.raises(ConfigError, match="'grpo', 'sft', 'dpo', 'ei' or 'note'"):
        load_train_config(None, method="nope")


def test_a_method_with_nothing_to_train_on_leaves_no_record(note_method, bank_file, tmp_path):
    config = TrainConfig(method="note", model="smollm2-135m", data={"tasks": ["nope"]})
    with Bank(bank_file) as bank:
        with pytest.raises(TrainDataError, match="no task in the bank passes"):
            train(bank, config, tmp_path / "none")
        assert bank.models() == []
