"""The vllm backend: runs only where vllm and a CUDA GPU are present."""

import importlib.util

import pytest

from selfplay.backends import BackendUnavailable, Prompt, Sampling, make_backend


def _missing() -> str | None:
    """Why vllm cannot run here, or None when it can."""
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (pip install 'selfplay[vllm]')"
    import torch

    return None if torch.cuda.is_available() else "no CUDA GPU for vllm"


def test_without_vllm_the_factory_says_how_to_install_it():
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here, so the install hint cannot be shown")
    with pytest.raises(BackendUnavailable, match=r"pip install 'selfplay\[vllm\]'"):
        make_backend("vllm", "smollm2-135m")


@pytest.mark.slow
@pytest.mark.skipif(_missing() is not None, reason=str(_missing()))
def test_vllm_samples_n_completions_with_stop_strings():
    backend = make_backend("vllm", "smollm2-135m", gpu_memory_utilization=0.3, max_model_len=2048)
    with backend:
        prompts = [Prompt.user("Count from one to ten in words."), Prompt.user("Say hi.")]
        results = backend.generate(
            prompts, n=3, sampling=Sampling(temperature=0.8, max_new_tokens=16, seed=0)
        )
        assert [len(r) for r in results] == [3, 3]
        assert all(1 <= c.tokens <= 16 for r in results for c in r)
        [[line]] = backend.generate(
            [Prompt.user("Write a Python function.", prefill="```python\n")],
            sampling=Sampling(temperature=0, max_new_tokens=48, stop=("\n",)),
        )
        assert line.finish_reason == "stop" and "\n" not in line.text and line.tokens < 48
        [greedy] = backend.generate(prompts[:1], n=2, sampling=Sampling(temperature=0))
        assert greedy[0].text == greedy[1].text
