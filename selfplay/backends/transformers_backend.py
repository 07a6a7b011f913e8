"""The CPU default: Hugging Face transformers, batched sampling with left padding.

Prompts are sorted by length and cut into batches of at most `batch_size` sequences
(`n` samples of a prompt share a batch through `num_return_sequences`). A sequence ends at
the model's end-of-turn token or at a stop string, so one long answer does not make every
other sequence of its batch run to `max_new_tokens` with it.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from typing import Any

from selfplay.backends.base import (
    Backend,
    BackendError,
    Completion,
    ModelNotFound,
    Prompt,
    Sampling,
    render_chat,
    truncate_at_stop,
)
from selfplay.backends.models import DEFAULT_MODEL, hub_offline, local_model_dir, resolve_model

DTYPES = ("auto", "bfloat16", "float16", "float32")
QUANTIZE = ("auto", "none", "fp16")

# OpenMP threads that spin while waiting lose their time slices when other processes share
# the cores: on two busy cores, passive waiting made decoding 1.5 to 4 times faster. OpenMP
# reads this when torch loads, which happens later, in `_load`; a value set by the user wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class TransformersBackend(Backend):
    """Runs a causal LM in-process with `model.generate`.

    dtype "auto" picks bfloat16 on a GPU that supports it (else float16), and on a CPU
    bfloat16 only where it has native bf16 instructions, float32 elsewhere. `quantize`
    "fp16" swaps every linear layer for torch's packed one with float16 weights and
    float32 activations (fbgemm): decoding on a CPU is bound by reading the weights, and
    float32's matrix products read them once per sequence of a small batch, so this
    decodes 2.5 to 6 times faster, with the same greedy tokens. "auto" takes it on a CPU
    with float32 weights and leaves GPUs alone.
    `threads` sets torch's thread count; by default, the cores no other process is busy
    on when the model loads.
    """

    name = "transformers"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        dtype: str = "auto",
        device: str = "auto",
        batch_size: int = 8,
        threads: int | None = None,
        quantize: str = "auto",
    ) -> None:
        super().__init__(model)
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        if quantize not in QUANTIZE:
            raise ValueError(f"quantize must be one of {QUANTIZE}, got {quantize!r}")
        if quantize == "fp16" and dtype not in ("auto", "float32"):
            raise ValueError(f"quantize 'fp16' needs dtype float32 or auto, got {dtype!r}")
        self.quantize = quantize
        self.quantized = False  # whether the loaded model runs packed fp16 linear layers
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.dtype, self.device, self.batch_size, self.threads = dtype, device, batch_size, threads
        self.source = resolve_model(model)  # a missing model fails here, before any heavy import
        self.tokenizer: Any = None
        self.hf_model: Any = None
        self._eos_ids: set[int] = set()
        # generate() on one model is not safe to call from several threads (the server's
        # request threads); one lock keeps it correct, batching keeps it fast.
        self._lock = threading.Lock()

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
        from transformers.utils import logging as hf_logging

        torch.set_num_threads(self.threads or _idle_cores())
        device = self.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        path = local_model_dir(self.source)
        local_only = self.source.kind != "hub" or hub_offline()
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a bar per load clutters the caller's own progress
        try:
            tokenizer = AutoTokenizer.from_pretrained(
                path, padding_side="left", local_files_only=local_only
            )
            # Packed fp16 layers take float32 activations, whatever "auto" would pick.
            dtype = (
                torch.float32 if self.quantize == "fp16" else _pick_dtype(torch, self.dtype, device)
            )
            model = AutoModelForCausalLM.from_pretrained(
                path, dtype=dtype, local_files_only=local_only
            )
        except OSError as exc:
            raise ModelNotFound(
                f"could not load model {self.model!r} with transformers: {str(exc).splitlines()[0]}"
            ) from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        model.to(device).eval()
        self.quantized = self._quantize(torch, model, device)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self._eos_ids = _end_tokens(tokenizer, model.generation_config)
        # The checkpoint's sampling defaults (top_k, repetition_penalty, ...) would silently
        # change what `Sampling` asks for; keep only the special token ids.
        model.generation_config = GenerationConfig(
            bos_token_id=model.generation_config.bos_token_id,
            eos_token_id=sorted(self._eos_ids),
            pad_token_id=tokenizer.pad_token_id,
        )
        self.tokenizer, self.hf_model = tokenizer, model

    def _quantize(self, torch: Any, model: Any, device: str) -> bool:
        """Swap the linear layers for packed fp16 ones where asked, or for "auto" where it pays."""
        pays = device == "cpu" and model.dtype == torch.float32  # decoding reads every weight
        if self.quantize == "none" or (self.quantize == "auto" and not pays):
            return False
        if device != "cpu":
            raise BackendError(f"quantize 'fp16' runs on the CPU only, not on {device!r}")
        try:
            # torch marks torch.ao.quantization deprecated; it still holds the fastest CPU
            # kernels for this (fbgemm), and the fallback below covers its removal.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.simplefilter("ignore", UserWarning)
                _pack_fp16(torch, model, torch.get_num_threads())
        except (ImportError, AttributeError, RuntimeError) as exc:
            if self.quantize == "fp16":
                raise BackendError(f"this torch cannot pack fp16 linear layers ({exc})") from exc
            warnings.warn(
                f"packed fp16 layers are unavailable in this torch ({exc}); running plain "
                "float32, which decodes 2.5 to 6 times slower on a CPU",
                RuntimeWarning,
                stacklevel=2,
            )
            return False
        return True

    def _close(self) -> None:
        self.tokenizer = self.hf_model = None

    def _update_weights(self, weights: Any) -> None:
        """Copy the named tensors into the model. Packed fp16 layers hold no plain weight to
        copy into, so a packed model is rebuilt: the checkpoint's float32 layers, the new
        weights over them, packed again."""
        import torch
        from transformers import AutoModelForCausalLM

        state = dict(weights)
        model = self.hf_model
        if self.quantized:
            path = local_model_dir(self.source)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
            model.to(self.hf_model.device).eval()
            model.generation_config = self.hf_model.generation_config
        with torch.no_grad():
            missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected:
            raise BackendError(
                f"the new weights name {len(unexpected)} tensors this model does not have "
                f"(first: {unexpected[0]})"
            )
        if self.quantized:
            self._quantize(torch, model, str(self.hf_model.device))
            self.hf_model = model

    def _generate(
        self, prompts: list[Prompt], n: int, sampling: Sampling
    ) -> list[list[Completion]]:
        import torch

        ids = [
            self.tokenizer(render_chat(self.tokenizer, p), add_special_tokens=False)["input_ids"]
            for p in prompts
        ]
        # Similar lengths in one batch waste less compute on left padding.
        order = sorted(range(len(prompts)), key=lambda i: len(ids[i]))
        results: list[list[Completion]] = [[] for _ in prompts]
        with self._lock:
            if sampling.seed is not None:
                torch.manual_seed(sampling.seed)
            for chunk in batched(order, max(1, self.batch_size // n)):
                outputs = self._run([ids[i] for i in chunk], n, sampling)
                for i, completions in zip(chunk, outputs, strict=True):
                    results[i] = completions
        return results

    def _run(
        self, batch: list[list[int]], samples: int, sampling: Sampling
    ) -> list[list[Completion]]:
        import torch
        from transformers import GenerationConfig

        encoded = self.tokenizer.pad({"input_ids": batch}, padding=True, return_tensors="pt")
        encoded = encoded.to(self.hf_model.device)
        prompt_len = encoded["input_ids"].shape[1]
        # n samples of a prompt continue one shared prompt pass (`_prefill_once`) rather
        # than `num_return_sequences`, which would run the prompt n times.
        shared = samples > 1 and prompt_len > 1
        config = GenerationConfig(
            max_new_tokens=sampling.max_new_tokens,
            do_sample=not sampling.greedy,
            num_return_sequences=1 if shared else samples,
        )
        warpers = []
        if not sampling.greedy:
            # Temperature and top-p are applied by `_TemperatureTopP`, not by transformers,
            # whose top-p sorts the whole vocabulary at every step.
            config.temperature, config.top_p, config.top_k = 1.0, 1.0, 0
            warpers = [_TemperatureTopP(sampling.temperature, sampling.top_p)]
        stopping = [_StopOnText(self.tokenizer, sampling.stop, prompt_len)] if sampling.stop else []
        with torch.inference_mode():
            if shared:
                encoded = self._prefill_once(encoded, samples)
            out = self.hf_model.generate(
                **encoded,
                generation_config=config,
                logits_processor=warpers,
                stopping_criteria=stopping,
            )
        generated = out[:, prompt_len:].tolist()
        completions = [self._completion(row, sampling) for row in generated]
        return batched(completions, samples)

    def _prefill_once(self, encoded: Any, samples: int) -> dict[str, Any]:
        """Run the prompts through the model once and share the cache among their samples.

        `num_return_sequences` copies each prompt n times before the first forward pass,
        so a long proposer prompt was read n times. Here the prompt but its last token goes
        through once; the key/value cache is copied per sample, and `generate` continues
        from it (the last token gives the first sample's logits). Positions follow the
        attention mask exactly as `generate` numbers them, so left padding stays invisible.
        """
        ids, mask = encoded["input_ids"], encoded["attention_mask"]
        positions = (mask.long().cumsum(-1) - 1).clamp(min=0)
        out = self.hf_model(
            input_ids=ids[:, :-1],
            attention_mask=mask[:, :-1],
            position_ids=positions[:, :-1],
            use_cache=True,
            logits_to_keep=1,
        )
        # transformers 5 names the cache `cache` (its old name, `past_key_values`, is
        # deprecated and goes in 5.40); older releases only know `past_key_values`.
        cache, name = getattr(out, "cache", None), "cache"
        if cache is None:
            cache, name = out.past_key_values, "past_key_values"
        cache.batch_repeat_interleave(samples)
        return {
            "input_ids": ids.repeat_interleave(samples, dim=0),
            "attention_mask": mask.repeat_interleave(samples, dim=0),
            name: cache,
        }

    def _completion(self, row: list[int], sampling: Sampling) -> Completion:
        # A finished sequence is padded (pad is counted as an end token) to the batch length.
        end = next((i for i, t in enumerate(row) if t in self._eos_ids), None)
        text = self.tokenizer.decode(row if end is None else row[:end], skip_special_tokens=True)
        text, stopped = truncate_at_stop(text, sampling.stop)
        tokens = len(row) if end is None else end + 1
        finish = "stop" if stopped or end is not None else "length"
        return Completion(text, tokens, finish, token_ids=row[:tokens])


class _TemperatureTopP:
    """Temperature, then nucleus (top-p) filtering: the tokens kept are those whose more
    likely predecessors hold less than `top_p` of the probability, as in transformers.

    transformers sorts all 151k logits of Qwen's vocabulary per sequence and step (17 ms
    of a 140 ms step on two cores). The nucleus almost always lies within the few hundred
    likeliest tokens, so those are taken with `topk` and the full sort is done only for a
    row whose top `k` hold less than `top_p`.
    """

    def __init__(self, temperature: float, top_p: float, k: int = 256) -> None:
        self.temperature, self.top_p, self.k = temperature, top_p, k

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        scores = scores / self.temperature
        if self.top_p >= 1.0:
            return scores
        k = min(self.k, scores.shape[-1])
        probs = scores.softmax(dim=-1)
        top, index = probs.topk(k, dim=-1)
        if bool((top.sum(dim=-1) < self.top_p).any()):
            top, index = probs.sort(dim=-1, descending=True)
        top = top.double()  # 151k float32 terms would move the boundary by rounding
        before = top.cumsum(dim=-1) - top  # mass of the likelier tokens
        keep = before < self.top_p
        keep[..., 0] = True
        mask = torch.ones_like(scores, dtype=torch.bool).scatter_(-1, index, ~keep)
        return scores.masked_fill(mask, float("-inf"))


class _StopOnText:
    """Ends each sequence whose generated text contains a stop string.

    transformers' own `stop_strings` precomputes tables over the whole vocabulary on every
    `generate` call (1 to 3 s for Qwen's 151k tokens on two cores); decoding the last few
    tokens of a handful of sequences per step costs microseconds. Only generated tokens are
    looked at, so a stop string in the prompt or prefill does not end the answer at once.
    """

    def __init__(self, tokenizer: Any, stop: tuple[str, ...], prompt_len: int) -> None:
        self.tokenizer, self.stop, self.prompt_len = tokenizer, stop, prompt_len
        # A token decodes to at least one character, except pieces of a multi-byte character.
        self.window = max(len(s) for s in stop) + 8

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        start = max(self.prompt_len, input_ids.shape[1] - self.window)
        tails = self.tokenizer.batch_decode(input_ids[:, start:], skip_special_tokens=True)
        done = [any(s in tail for s in self.stop) for tail in tails]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def batched(items: list, size: int) -> list[list]:
    """`itertools.batched` (Python 3.12) as lists."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def _idle_cores(window_s: float = 0.3) -> int:
    """Cores no other process is using now (at least one), measured over `window_s`.

    Decoding runs hundreds of small parallel operations per token, each ending in a barrier
    that waits for every thread: a thread that shares its core with another busy process
    stalls all of them. On two shared cores one thread decoded 1.5 to 5 times faster than
    two; on two idle ones, two threads 1.5 times faster than one. The load average is no
    guide (it counts waiting processes, and sat near 1 on an idle machine); the kernel's
    idle time over a short window is.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    try:
        first = _cpu_times()
        time.sleep(window_s)
        second = _cpu_times()
    except (OSError, ValueError, IndexError):
        return cores  # no /proc/stat (not Linux): use every core
    busy = [b - a for a, b in zip(first, second, strict=True)]
    total = sum(busy)
    idle_share = (busy[3] + busy[4]) / total if total else 1.0  # idle + iowait
    online = os.cpu_count() or cores
    return max(1, min(cores, round(idle_share * online)))


def _cpu_times() -> list[int]:
    """The machine's CPU time counters (user, nice, system, idle, iowait, ...) in ticks."""
    with open("/proc/stat", encoding="ascii") as f:
        return [int(x) for x in f.readline().split()[1:]]


def _pick_dtype(torch: Any, dtype: str, device: str) -> Any:
    if dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    # Without native bf16 instructions (AVX512-BF16, AMX) every bf16 matmul converts to fp32
    # and back: on the AVX2 machine this was written on, fp32 decoded 2 to 3 times faster.
    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native = False
    return torch.bfloat16 if native else torch.float32


def _pack_fp16(torch: Any, model: Any, threads: int) -> None:
    """Replace every `nn.Linear` of `model` by fbgemm's packed fp16 one, in place.

    What `quantize_dynamic` does, but packing runs in threads (fbgemm packs on one core and
    releases the GIL), biggest layers first: the 0.5B model packs in about half the time.
    """
    from concurrent.futures import ThreadPoolExecutor

    from torch.ao.nn.quantized.dynamic import Linear as PackedLinear
    from torch.ao.quantization import float16_dynamic_qconfig

    targets = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is torch.nn.Linear
    ]
    targets.sort(key=lambda t: -t[2].weight.numel())

    def pack(target: tuple) -> Any:
        child = target[2]
        child.qconfig = float16_dynamic_qconfig
        return PackedLinear.from_float(child)

    with ThreadPoolExecutor(max(1, threads)) as pool:
        packed = list(pool.map(pack, targets))
    for (parent, name, _), layer in zip(targets, packed, strict=True):
        setattr(parent, name, layer)


def _end_tokens(tokenizer: Any, generation_config: Any) -> set[int]:
    """Token ids that end a completion: the model's EOS ids, and its pad token if special."""
    configured = generation_config.eos_token_id
    ids = set(configured if isinstance(configured, list) else [configured])
    ids.add(tokenizer.eos_token_id)
    if tokenizer.pad_token_id in tokenizer.all_special_ids:
        ids.add(tokenizer.pad_token_id)
    return {i for i in ids if i is not None}
