"""The transformers backend on real models: SmolLM2-135M for speed, the bundled Qwen end to end."""

import ast

import pytest

_EXTRA = "needs the transformers extra: pip install 'selfplay[transformers]'"
torch = pytest.importorskip("torch", reason=_EXTRA)
pytest.importorskip("transformers", reason=_EXTRA)

from transformers.generation.logits_process import (  # noqa: E402
    TemperatureLogitsWarper,
    TopPLogitsWarper,
)

from selfplay.backends import Prompt, Sampling, make_backend  # noqa: E402
from selfplay.backends.transformers_backend import _pick_dtype, _TemperatureTopP  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smol():
    with make_backend("transformers", "smollm2-135m", batch_size=8) as backend:
        yield backend


PROMPTS = [
    Prompt.user("Hi."),
    Prompt.user("Write a Python function that reverses a string. Reply with code only."),
    Prompt.user("Name three colours.", system="You answer in one short line."),
]


def test_n_samples_per_prompt_come_back_in_prompt_order(smol):
    greedy = Sampling(temperature=0, max_new_tokens=6)
    forward = smol.generate(PROMPTS, n=1, sampling=greedy)
    # The backend sorts prompts by length into batches; the answers must follow the caller's order.
    backward = smol.generate(PROMPTS[::-1], n=1, sampling=greedy)
    assert [r[0].text for r in forward] == [r[0].text for r in backward[::-1]]
    assert len({r[0].text for r in forward}) == 3


def test_sampling_returns_n_completions_and_counts_their_tokens(smol):
    before = smol.stats.tokens
    results = smol.generate(PROMPTS, n=2, sampling=Sampling(temperature=1.0, max_new_tokens=8))
    assert [len(r) for r in results] == [2, 2, 2]
    for completion in (c for r in results for c in r):
        assert 1 <= completion.tokens <= 8
        assert completion.finish_reason in ("stop", "length")
    assert smol.stats.tokens - before == sum(c.tokens for r in results for c in r)


def test_seeded_sampling_is_reproducible(smol):
    sampling = Sampling(temperature=1.0, max_new_tokens=6, seed=1234)
    first = smol.generate(PROMPTS[1:2], n=2, sampling=sampling)
    second = smol.generate(PROMPTS[1:2], n=2, sampling=sampling)
    assert [c.text for c in first[0]] == [c.text for c in second[0]]


def test_samples_continue_one_shared_prompt_pass_exactly(smol):
    """n samples share one forward pass of their prompt (and its left padding): at a
    temperature near zero they must say exactly what greedy decoding, which runs the
    prompt on its own, says."""
    greedy = smol.generate(PROMPTS, n=1, sampling=Sampling(temperature=0, max_new_tokens=10))
    cold = smol.generate(PROMPTS, n=2, sampling=Sampling(temperature=1e-4, max_new_tokens=10))
    assert [[c.text for c in r] for r in cold] == [[r[0].text] * 2 for r in greedy]


def test_greedy_decoding_gives_n_equal_answers(smol):
    [answers] = smol.generate(PROMPTS[1:2], n=3, sampling=Sampling(temperature=0, max_new_tokens=8))
    assert len(answers) == 3 and len({c.text for c in answers}) == 1


def test_a_stop_string_ends_the_sequence_early_and_is_cut_off(smol):
    prompt = Prompt.user(PROMPTS[1].messages[0]["content"], prefill="```python\n")
    sampling = Sampling(temperature=0, max_new_tokens=48, stop=("\n",))
    [[line]] = smol.generate([prompt], sampling=sampling)
    assert line.finish_reason == "stop"
    assert "\n" not in line.text and line.text.strip()
    assert line.tokens < 48


def test_max_new_tokens_ends_with_length(smol):
    prompt = Prompt.user("Write a long essay about the history of computing.")
    [[essay]] = smol.generate([prompt], sampling=Sampling(temperature=0, max_new_tokens=3))
    assert (essay.tokens, essay.finish_reason) == (3, "length")


def test_bundled_model_completes_a_function_from_a_prefill():
    """End to end on the default model: alias, cached conversion, chat template, prefill, stop."""
    prefill = "```python\ndef add(a, b):\n    return"
    prompt = Prompt.user("Write a Python function add(a, b) that returns a + b.", prefill=prefill)
    with make_backend("transformers", "bundled") as qwen:
        [[answer]] = qwen.generate(
            [prompt], sampling=Sampling(temperature=0, max_new_tokens=16, stop=("```",))
        )
    assert answer.finish_reason == "stop" and answer.tokens < 16
    assert "def add" not in answer.text  # the completion continues the prefill, never repeats it
    [function] = ast.parse(prefill.removeprefix("```python\n") + answer.text).body
    [returned] = [n.value for n in ast.walk(function) if isinstance(n, ast.Return)]
    assert ast.unparse(returned) == "a + b"


def _linear_types(backend) -> set[str]:
    """Where the model's linear layers come from: torch.nn (float) or torch.ao (int8)."""
    return {
        type(m).__module__.split(".")[1]
        for m in backend.hf_model.modules()
        if type(m).__name__ == "Linear"
    }


def test_on_a_cpu_auto_packs_fp16_linear_layers_exactly_when_it_runs_float32(smol):
    # float32 on CPUs without native bf16 (where packing pays), bf16 on those with it.
    float32 = _pick_dtype(torch, "auto", "cpu") == torch.float32
    assert smol.hf_model.dtype == (torch.float32 if float32 else torch.bfloat16)
    assert smol.quantized == float32
    assert _linear_types(smol) == ({"ao"} if float32 else {"nn"})


def test_packed_fp16_linear_layers_say_what_float32_says():
    """Packed fp16 weights make the CPU default fast; they must not change the answers."""
    greedy = Sampling(temperature=0, max_new_tokens=12)
    with make_backend("transformers", "smollm2-135m", quantize="fp16") as packed:
        assert packed.quantized and _linear_types(packed) == {"ao"}
        fast = [r[0].text for r in packed.generate(PROMPTS, sampling=greedy)]
    with make_backend("transformers", "smollm2-135m", quantize="none", dtype="float32") as full:
        assert not full.quantized and _linear_types(full) == {"nn"}
        exact = [r[0].text for r in full.generate(PROMPTS, sampling=greedy)]
    assert fast == exact


@pytest.mark.parametrize("spread", [3.0, 10.0, 30.0, 0.5])
@pytest.mark.parametrize("top_p", [0.5, 0.95])
def test_top_p_keeps_the_nucleus_that_transformers_keeps(spread, top_p):
    """The fast path (top 256) and the full sort (flat rows) keep the tokens transformers'
    own warpers keep; on flat rows its float32 sums may move the edge by a few tokens."""
    logits = torch.randn(4, 151936, generator=torch.Generator().manual_seed(7)) * spread
    theirs = TopPLogitsWarper(top_p)(None, TemperatureLogitsWarper(0.8)(None, logits.clone()))
    ours = _TemperatureTopP(0.8, top_p)(None, logits.clone())
    kept, expected = ~torch.isinf(ours), ~torch.isinf(theirs)
    assert torch.allclose(ours[kept], theirs[kept])  # the temperature is applied once
    if spread >= 3 and (spread > 3 or top_p < 0.9):
        assert torch.equal(kept, expected)
    else:
        assert (kept != expected).sum(-1).max() <= 8 and kept.sum() > 1000


@pytest.mark.slow
@pytest.mark.parametrize("quantize", ["none", "fp16"])
def test_new_weights_change_what_it_generates_and_the_old_ones_restore_it(quantize):
    import torch
    from transformers import AutoModelForCausalLM

    from selfplay.backends.models import local_model_dir

    hf = AutoModelForCausalLM.from_pretrained(local_model_dir("smollm2-135m"), dtype=torch.float32)
    weights = [(n, p.detach().clone()) for n, p in hf.named_parameters()]
    g = torch.Generator().manual_seed(0)
    shaken = [(n, w * (1 + 0.3 * torch.randn(w.shape, generator=g)) if "mlp" in n else w)
              for n, w in weights]  # fmt: skip
    prompt = [Prompt.user("Write a Python function that adds two numbers.")]
    greedy = Sampling(temperature=0, max_new_tokens=16)
    with make_backend("transformers", "smollm2-135m", quantize=quantize) as backend:
        before = backend.generate(prompt, 1, greedy)[0][0]
        assert before.token_ids is not None and len(before.token_ids) == before.tokens
        backend.update_weights(shaken)
        assert backend.generate(prompt, 1, greedy)[0][0].token_ids != before.token_ids
        assert backend.quantized == (quantize == "fp16")  # a packed model stays packed
        backend.update_weights(weights)
        assert backend.generate(prompt, 1, greedy)[0][0].text == before.text


def test_a_backend_without_weights_in_place_says_so():
    from selfplay.backends.base import BackendError

    backend = make_backend("scripted", script=["a"])
    with pytest.raises(BackendError, match="cannot take new weights"):
        backend.update_weights([])
