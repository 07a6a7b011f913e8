"""Weight-space averaging with the starting model (WiSE-FT, Wortsman et al. 2022).

A model trained on a narrow set of tasks gains on them and loses some of what it could do
before (in this project: HumanEval falls when the solver learns from procedural tasks). The
average `start + weight * (trained - start)` keeps much of the gain and gives back much of the
loss, since fine-tuning moves the weights along a path where the two kinds of skill trade off
smoothly. `weight` 1 is the trained model; 0 the starting one.

It works on the saved files one shard at a time (safetensors): it holds one shard of the
trained model and reads the start's tensors one by one, never two whole models. The LoRA
adapter saved beside a merged model is scaled to match (its `lora_B` by `weight`: the
adapter's update is then exactly `weight` times its old one), so serving the adapter and
loading the merged model give the same model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from selfplay.training.context import TrainError

WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"
ADAPTER = "adapter/adapter_model.safetensors"


class AverageError(TrainError):
    """The two models cannot be averaged (one sentence; `selfplay train` prints it)."""


def shards(model: Path) -> list[Path]:
    if (model / INDEX).exists():
        index = json.loads((model / INDEX).read_text(encoding="utf-8"))
        return sorted({model / name for name in index["weight_map"].values()})
    if (model / WEIGHTS).exists():
        return [model / WEIGHTS]
    raise AverageError(f"{model} holds no safetensors weights to average")


def _tensor_files(model: Path) -> dict[str, Path]:
    from safetensors import safe_open

    where = {}
    for shard in shards(model):
        with safe_open(shard, framework="pt") as f:
            for key in f.keys():  # noqa: SIM118 (safe_open has no __iter__)
                where[key] = shard
    return where


def _rewrite(path: Path, change: Callable[[str, Any], Any]) -> int:
    """Replace every tensor of one safetensors file by `change(key, tensor)` (None keeps it),
    metadata kept, the file swapped in whole; returns how many changed."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    tensors = load_file(path)
    with safe_open(path, framework="pt") as f:
        metadata = f.metadata()
    changed = 0
    for key, tensor in tensors.items():
        new = change(key, tensor)
        if new is not None:
            tensors[key] = new
            changed += 1
    tmp = path.with_suffix(".tmp")
    save_file(tensors, tmp, metadata=metadata)
    tmp.replace(path)
    return changed


def average(start: str | Path, trained: str | Path, weight: float) -> int:
    """Rewrite `trained` (a saved model directory) as `start + weight * (trained - start)`,
    in place; returns how many tensors changed. Both must be the same architecture."""
    import torch
    from safetensors import safe_open

    if not 0.0 <= weight <= 1.0:
        raise AverageError(f"the averaging weight must lie in [0, 1], not {weight}")
    start, trained = Path(start), Path(trained)
    if weight == 1.0:
        return 0
    base = _tensor_files(start)
    files = shards(trained)
    with ExitStack() as stack:  # each of the start's shards opened once
        opened = {s: stack.enter_context(safe_open(s, framework="pt")) for s in set(base.values())}

        def mix(key: str, tensor: Any) -> Any:
            if key not in base:
                raise AverageError(
                    f"{trained} has a weight {key!r} that {start} lacks; they are not the "
                    "same architecture"
                )
            old = opened[base[key]].get_tensor(key)
            if old.shape != tensor.shape:
                raise AverageError(
                    f"weight {key!r} is {tuple(tensor.shape)} in {trained} but "
                    f"{tuple(old.shape)} in {start}; they are not the same architecture"
                )
            if not tensor.is_floating_point():
                return None
            old = old.to(torch.float32)
            return (old + weight * (tensor.to(torch.float32) - old)).to(tensor.dtype)

        changed = sum(_rewrite(shard, mix) for shard in files)
    if (trained / ADAPTER).exists():
        _rewrite(trained / ADAPTER, lambda key, t: t * weight if "lora_B" in key else None)
    return changed
