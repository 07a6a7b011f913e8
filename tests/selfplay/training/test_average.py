"""Weight-space averaging with the starting model, on real saved models (safetensors)."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file, save_file

from selfplay.training.average import AverageError, average
from selfplay.training.context import TrainError


def _tiny(path, seed):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=64, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)  # fmt: skip
    Qwen2ForCausalLM(config).save_pretrained(path)
    return load_file(path / "model.safetensors")


def test_average_lands_on_the_line_between_the_two_models(tmp_path):
    start, trained = _tiny(tmp_path / "start", 0), _tiny(tmp_path / "trained", 1)
    changed = average(tmp_path / "start", tmp_path / "trained", 0.25)
    mixed = load_file(tmp_path / "trained" / "model.safetensors")
    assert changed == len(mixed) == len(start)
    # Most weights differ between the two seeds (norms start at one in both).
    assert sum(not torch.equal(start[k], trained[k]) for k in start) > len(start) / 2
    for key, tensor in mixed.items():
        torch.testing.assert_close(tensor, start[key] + 0.25 * (trained[key] - start[key]))
    # The starting model is read, never written.
    assert all(torch.equal(v, load_file(tmp_path / "start" / "model.safetensors")[k])
               for k, v in start.items())  # fmt: skip


def test_the_averaged_model_loads_and_weight_one_changes_nothing(tmp_path):
    from transformers import AutoModelForCausalLM

    _tiny(tmp_path / "start", 0)
    trained = _tiny(tmp_path / "trained", 1)
    assert average(tmp_path / "start", tmp_path / "trained", 1.0) == 0
    assert all(torch.equal(v, load_file(tmp_path / "trained" / "model.safetensors")[k])
               for k, v in trained.items())  # fmt: skip
    average(tmp_path / "start", tmp_path / "trained", 0.0)
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "trained")
    start = load_file(tmp_path / "start" / "model.safetensors")
    for key, tensor in model.state_dict().items():
        if key in start:
            torch.testing.assert_close(tensor, start[key])


def test_the_adapter_beside_it_is_scaled_to_match(tmp_path):
    _tiny(tmp_path / "start", 0)
    _tiny(tmp_path / "trained", 1)
    (tmp_path / "trained" / "adapter").mkdir()
    a, b = torch.randn(4, 16), torch.randn(16, 4)
    save_file({"x.lora_A.weight": a, "x.lora_B.weight": b},
              tmp_path / "trained" / "adapter" / "adapter_model.safetensors")  # fmt: skip
    average(tmp_path / "start", tmp_path / "trained", 0.5)
    adapter = load_file(tmp_path / "trained" / "adapter" / "adapter_model.safetensors")
    torch.testing.assert_close(adapter["x.lora_A.weight"], a)
    torch.testing.assert_close(adapter["x.lora_B.weight"], 0.5 * b)


def test_models_of_other_shapes_or_weights_out_of_range_are_refused(tmp_path):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    _tiny(tmp_path / "start", 0)
    config = Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)  # fmt: skip
    Qwen2ForCausalLM(config).save_pretrained(tmp_path / "other")
    before = load_file(tmp_path / "other" / "model.safetensors")
    with pytest.raises(AverageError, match="not the same architecture"):
        average(tmp_path / "start", tmp_path / "other", 0.5)
    with pytest.raises(AverageError, match=r"in \[0, 1\]"):
        average(tmp_path / "start", tmp_path / "other", 1.5)
    # A TrainError: `selfplay train` says it in one sentence, and refuses before training.
    assert issubclass(AverageError, TrainError)
    with pytest.raises(AverageError, match="no safetensors"):
        average(tmp_path / "start", tmp_path / "missing", 0.5)
    after = load_file(tmp_path / "other" / "model.safetensors")
    assert all(torch.equal(v, after[k]) for k, v in before.items())
