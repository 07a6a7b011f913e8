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
    if m.backend in ("transformers", "auto"):
        own = {"batch_size": m.batch_size, "dtype": m.dtype, "quantize": m.quantize}
        if m.threads:
            own["threads"] = m.threads
        if m.backend == "auto":  # each engine gets its own options
            vllm = {"threads": m.threads} if m.threads else {}
            options = {"transformers": own | options.pop("transformers", {}),
                       "vllm": vllm | options.pop("vllm", {}), **options}  # fmt: skip
        else:
            options = own | options
    if m.backend == "vllm" and m.threads:
        options.setdefault("threads", m.threads)
    if m.backend == "openai" and m.base_url:
        options.setdefault("base_url", m.base_url)
    if m.ray:
        return make_backend("ray", m.spec, engine=m.backend, engines=m.ray_engines,
                            address=m.ray, engine_options=options)  # fmt: skip
    return make_backend(m.backend, m.spec, **options)


def make_run_verifier(config: RunConfig) -> Any:
    """The verifier the config's `verifier:` names: local sandboxes, or actors on Ray."""
    v = config.verifier
    if v.ray:
        from selfplay.verifier import RayVerifier

        return RayVerifier(v.ray, None, v.workers, v.timeout_s, v.memory_mb)
    from selfplay.verifier import Verifier

    return Verifier(v.workers, v.timeout_s, v.memory_mb)
