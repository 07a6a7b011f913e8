"""On a CPU, TRL's fused LM head projects only the labelled positions while
`labelled_positions_only()` is open, with the same loss and gradients; TRL's own choice
comes back when it closes."""

from __future__ import annotations

import pytest
import torch

from selfplay.training.lm_head import labelled_positions_only


def _model():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=64, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)  # fmt: skip
    model = Qwen2ForCausalLM(config)
    add_fused_lm_head(model)
    return model


def _step(model, monkeypatch):
    """(loss, gradients, rows the head projected) of one forward and backward."""
    from trl.trainer import utils

    projected = []
    apply = utils._ChunkedLogProbFunction.apply

    def counting(hidden, *rest):
        projected.append(hidden.shape[0])
        return apply(hidden, *rest)

    monkeypatch.setattr(utils._ChunkedLogProbFunction, "apply", counting)
    ids = torch.randint(0, 64, (3, 12), generator=torch.Generator().manual_seed(1))
    labels = ids.clone()
    labels[:, :9] = -100  # the prompt: never labelled
    labels[2, 11] = -100  # a shorter answer
    model.zero_grad()
    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
    out.loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    monkeypatch.undo()
    return out.loss.detach(), grads, sum(projected)


def test_a_cpu_projects_only_the_labelled_positions_to_the_same_loss_and_gradients(
    monkeypatch,
):
    model = _model()
    loss, grads, every = _step(model, monkeypatch)
    assert every == 3 * 11  # TRL's own choice on a CPU: every shifted position
    with labelled_positions_only() as active:
        assert active
        fast_loss, fast_grads, labelled = _step(model, monkeypatch)
    assert labelled == 3 * 3 - 1  # the answers' tokens after the shift, nothing else
    assert torch.allclose(loss, fast_loss, atol=1e-6)
    assert grads.keys() == fast_grads.keys() and grads
    for name, grad in grads.items():
        assert torch.allclose(grad, fast_grads[name], atol=1e-6), name
    assert _step(model, monkeypatch)[2] == every  # closed: TRL decides again


def test_a_trl_without_the_choice_is_left_alone(monkeypatch):
    from trl.trainer import utils

    monkeypatch.delattr(utils, "_use_triton")
    with labelled_positions_only() as active:
        assert not active
    assert not hasattr(utils, "_use_triton")


@pytest.mark.parametrize("kind", ["cpu", "meta"])
def test_other_devices_keep_trl_s_choice(kind):
    from trl.trainer import utils

    original = utils._use_triton(torch.device(kind))
    with labelled_positions_only():
        assert utils._use_triton(torch.device(kind)) == (kind == "cpu" or original)
