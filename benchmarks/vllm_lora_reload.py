"""vLLM on a CPU after a training step: reload the merged model, or serve the LoRA adapter?

Makes a rank-16 LoRA adapter on every linear layer of the bundled model (random, small:
only speed is measured), times saving it and merging it, then
(a) a fresh engine on the merged directory and 16 sequences of 64 tokens, and
(b) one engine with `enable_lora` and the same batch with the adapter passed per call (twice).
Run:

    python benchmarks/vllm_lora_reload.py [--workdir /tmp/vllm-lora]
"""
import argparse
import time
from pathlib import Path

def make_adapter(base, out, seed):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16)
    peft = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", init_lora_weights=False))
    for n, p in peft.named_parameters():
        if "lora_B" in n:
            p.data.mul_(0.01)
    t = time.time(); peft.save_pretrained(out / "adapter"); adapter_s = time.time() - t
    t = time.time(); merged = peft.merge_and_unload(); merged.save_pretrained(out / "merged")
    from transformers import AutoTokenizer
    AutoTokenizer.from_pretrained(base).save_pretrained(out / "merged")
    return adapter_s, time.time() - t

def main():
    from selfplay.backends import Prompt, Sampling, make_backend
    from selfplay.backends.models import local_model_dir
    base = local_model_dir("bundled")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/vllm-lora"))
    root = parser.parse_args().workdir
    root.mkdir(parents=True, exist_ok=True)
    adapter_s, merge_s = make_adapter(base, root, 0)
    print("RESULT save adapter", round(adapter_s, 2), "merge+save", round(merge_s, 2), flush=True)
    prompts = [Prompt.user(f"Write a Python function number {i} that sorts a list.") for i in range(16)]
    s = Sampling(temperature=0.7, top_p=0.95, max_new_tokens=64, seed=0)
    # (a) merged: a fresh engine on the merged directory
    t = time.time(); b = make_backend("vllm", str(root / "merged")); b.load(); load = time.time() - t
    t = time.time(); r = b.generate(prompts, 1, s); dt = time.time() - t
    n = sum(c.tokens for x in r for c in x); b.close()
    print("RESULT merged load", round(load, 1), "tok/s16", round(n / dt, 1), flush=True)
    # (b) LoRA: one engine with enable_lora, the adapter passed per request
    from vllm.lora.request import LoRARequest
    t = time.time(); b = make_backend("vllm", "bundled", engine_args={"enable_lora": True, "max_lora_rank": 16, "max_loras": 1}); b.load(); load = time.time() - t
    from selfplay.backends.base import render_chat
    from vllm import SamplingParams
    ids = [{"prompt_token_ids": b.tokenizer.encode(render_chat(b.tokenizer, p), add_special_tokens=False)} for p in prompts]
    sp = SamplingParams(temperature=0.7, top_p=0.95, max_tokens=64)
    for i in range(2):
        req = LoRARequest(f"step{i}", i + 1, str(root / "adapter"))
        t = time.time(); out = b.llm.generate(ids, sp, lora_request=req, use_tqdm=False); dt = time.time() - t
        n = sum(len(o.outputs[0].token_ids) for o in out)
        print("RESULT lora", i, "engine load", round(load, 1), "gen s", round(dt, 1), "tok/s16", round(n / dt, 1), flush=True)
    b.close()

if __name__ == "__main__":
    main()
