"""vllm on GPUs: `LLM.generate` with `SamplingParams(n=...)`, continuous batching inside.

Prompts are rendered with the model's own chat template (the same `render_chat` as the
transformers backend, so both see identical text, prefill included) and handed over as
token ids, so vllm adds no second BOS token. Install with `pip install 'selfplay[vllm]'`.
"""

from __future__ import annotations

import gc
from typing import Any

from selfplay.backends.base import Backend, Completion, Prompt, Sampling, render_chat
from selfplay.backends.models import DEFAULT_MODEL, local_model_dir, resolve_model


class VLLMBackend(Backend):
    """Runs a model in-process with vllm. `engine_args` go to `vllm.LLM` unchanged."""

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
        engine_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(model)
        self.source = resolve_model(model)
        self.llm_args = {
            "dtype": dtype,
            "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "seed": seed,
            **(engine_args or {}),
        }
        self.llm: Any = None
        self.tokenizer: Any = None

    def _load(self) -> None:
        from vllm import LLM

        # GGUF specs are converted to a safetensors directory first, as for transformers.
        self.llm = LLM(model=local_model_dir(self.source), **self.llm_args)
        self.tokenizer = self.llm.get_tokenizer()

    def _close(self) -> None:
        self.llm = self.tokenizer = None
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

        params = SamplingParams(
            n=n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            seed=sampling.seed,
        )
        inputs = [
            {
                "prompt_token_ids": self.tokenizer.encode(
                    render_chat(self.tokenizer, p), add_special_tokens=False
                )
            }
            for p in prompts
        ]
        outputs = self.llm.generate(inputs, params, use_tqdm=False)
        return [  # one RequestOutput per prompt, in input order
            [
                Completion(
                    text=out.text,  # stop strings are already cut off (include_stop_str_in_output)
                    tokens=len(out.token_ids),
                    finish_reason="length" if out.finish_reason == "length" else "stop",
                )
                for out in sorted(request.outputs, key=lambda o: o.index)
            ]
            for request in outputs
        ]
