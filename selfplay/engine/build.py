"""The runtime objects a `RunConfig` names: its model backend and its verifier.

Both are built lazily (nothing loads until first used) so a command that fails on its config
or its bank has not paid for a model or a worker pool.
"""

from __future__ import annotations

from typing import Any

from selfplay.config import RunConfig


def make_run_backend(config: RunConfig) -> Any:
    """The backend the config's `model:` names, built by the backends' factory (nothing
    loads until it first generates)."""
    from selfplay.backends import make_backend

    m = config.model
    options = dict(m.options)
    cores = {"threads": m.threads} if m.threads else {}
    transformers = {"batch_size": m.batch_size, "dtype": m.dtype, "quantize": m.quantize} | cores
    if m.backend == "transformers":
        options = transformers | options
    elif m.backend == "vllm":
        options = cores | options
    elif m.backend == "auto":  # each engine gets its own options
        options = {"transformers": transformers | options.pop("transformers", {}),
                   "vllm": cores | options.pop("vllm", {}), **options}  # fmt: skip
    if m.backend == "openai" and m.base_url:
        options.setdefault("base_url", m.base_url)
    if m.ray:
        return make_backend("ray", m.spec, engine=m.backend, engines=m.ray_engines,
                            address=m.ray, engine_options=options)  # fmt: skip
    return make_backend(m.backend, m.spec, **options)


def make_run_verifier(config: RunConfig) -> Any:
    """The verifier the config's `verifier:` names: local sandboxes, or actors on Ray."""
    from selfplay.verifier.factory import configured_verifier

    return configured_verifier(config.verifier)
