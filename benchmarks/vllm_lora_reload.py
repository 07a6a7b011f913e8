"""vLLM on a CPU after a training step: reload the merged model, or serve the LoRA adapter?

Makes a rank-16 LoRA adapter on every linear layer of the bundled model (random and small:
only speed is measured), times saving it and merging it, then
(a) a fresh engine on the merged directory and 16 sequences of 64 tokens, and
(b) one engine with `enable_lora` and the same batch with the adapter passed per call, twice.
Run:

    python benchmarks/vllm_lora_reload.py [--workdir /tmp/vllm-lora]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

PROMPTS = [f"Write a Python function number {i} that sorts a list." for i in range(16)]


def make_adapter(base: str, out: Path) -> dict[str, float]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16)
    config = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", init_lora_weights=False)
    peft = get_peft_model(model, config)
    for name, param in peft.named_parameters():
        if "lora_B" in name:
            param.data.mul_(0.01)
    start = time.perf_counter()
    peft.save_pretrained(out / "adapter")
    saved = time.perf_counter() - start
    start = time.perf_counter()
    peft.merge_and_unload().save_pretrained(out / "merged")
    AutoTokenizer.from_pretrained(base).save_pretrained(out / "merged")
    return {
        "save_adapter_s": round(saved, 2),
        "merge_and_save_s": round(time.perf_counter() - start, 2),
    }


def main() -> None:
    from selfplay.backends import Prompt, Sampling, make_backend
    from selfplay.backends.base import render_chat
    from selfplay.backends.models import local_model_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/vllm-lora"))
    root = parser.parse_args().workdir
    root.mkdir(parents=True, exist_ok=True)
    print(make_adapter(local_model_dir("bundled"), root), flush=True)

    prompts = [Prompt.user(p) for p in PROMPTS]
    sampling = Sampling(temperature=0.7, top_p=0.95, max_new_tokens=64, seed=0)
    start = time.perf_counter()
    merged = make_backend("vllm", str(root / "merged"))
    merged.load()
    load = time.perf_counter() - start
    start = time.perf_counter()
    results = merged.generate(prompts, 1, sampling)
    seconds = time.perf_counter() - start
    tokens = sum(c.tokens for r in results for c in r)
    merged.close()
    print(f"merged: engine start {load:.1f} s, 16 sequences {tokens / seconds:.1f} tokens/s")

    from vllm import SamplingParams
    from vllm.lora.request import LoRARequest

    start = time.perf_counter()
    lora = make_backend(
        "vllm", "bundled", engine_args={"enable_lora": True, "max_lora_rank": 16, "max_loras": 1}
    )
    lora.load()
    load = time.perf_counter() - start
    encode = lora.tokenizer.encode
    inputs = [
        {"prompt_token_ids": encode(render_chat(lora.tokenizer, p), add_special_tokens=False)}
        for p in prompts
    ]
    params = SamplingParams(temperature=0.7, top_p=0.95, max_tokens=64)
    for step in range(2):
        request = LoRARequest(f"step{step}", step + 1, str(root / "adapter"))
        start = time.perf_counter()
        outputs = lora.llm.generate(inputs, params, lora_request=request, use_tqdm=False)
        seconds = time.perf_counter() - start
        tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
        print(f"LoRA step {step}: engine start {load:.1f} s, 16 sequences "
              f"{tokens / seconds:.1f} tokens/s")  # fmt: skip
    lora.close()


if __name__ == "__main__":
    main()
