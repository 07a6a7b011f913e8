"""`train`: fine-tune a model on a bank with the method the config names and peft's LoRA.

The method (`selfplay.methods`: grpo, sft, dpo and ei built in) builds its job on the bank's
data (`selfplay.training.context`); everything around it is here, the same for every method.
The output directory is a Hugging Face model directory that every `--model` accepts:
- the merged weights (LoRA folded in; float32 unless trained in bf16, so that small updates
  are not rounded away) and the tokenizer at the top;
- `adapter/`: the LoRA adapter alone, for peft users (TRL methods);
- with `average` below 1, both taken back towards the starting model
  (`selfplay.training.average`: WiSE-FT, which keeps more of what the model could do before);
- `selfplay-trained.json`: the model's id in the bank, what it was trained from and on;
  written last, so its presence means the directory is complete;
- `checkpoints/`: TRL checkpoints while training runs (the same command continues from the last
  one); removed once the model is saved.

The model is recorded in the bank's `models` table when training starts and finished with
its step count, so attempts (GRPO rollouts name the model as their solver), statistics and
dataset cards say which model produced what.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfplay.backends.models import TRAINED_MARKER as MARKER
from selfplay.config import TrainConfig
from selfplay.methods import get_method
from selfplay.training.context import TrainContext, TrainError

if TYPE_CHECKING:
    from task_bank.store import Bank


@dataclass(slots=True)
class TrainResult:
    model_id: str
    path: str
    method: str
    role: str
    steps: int
    rows: int
    resumed_from: int | None = None
    rollouts: int = 0
    dropped_rollouts: int = 0
    seconds: float = 0.0
    parent: str | None = None
    log: list[dict[str, Any]] = field(default_factory=list)
    # GRPO: seconds spent grading rollouts, writing them to the bank and picking batches.
    overhead: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def mean_reward(self) -> float | None:
        values = [e["reward"] for e in self.log if "reward" in e]
        return sum(values) / len(values) if values else None


def model_id_for(out: Path, method: str) -> str:
    """A stable id per output directory, so a resumed run keeps its id and its rollouts."""
    digest = hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:8]
    return f"{out.name}-{method}-{digest}"


def trained_marker(path: str | Path) -> dict[str, Any] | None:
    """The record of a model directory written by `train`, or None."""
    marker = Path(path) / MARKER
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


CONFIG_FILE = "selfplay-config.json"  # in checkpoints/: the config an unfinished run trains


def _unfinished(out: Path) -> bool:
    """Whether `out` holds a run that was cut off: a TRL checkpoint, or a finished expert
    iteration."""
    work = out / "checkpoints"
    return _last_complete_checkpoint(work) is not None or any(work.glob("iter-*/iteration.json"))


def _same_config(out: Path, config: TrainConfig) -> bool:
    """Whether the unfinished run in `out` was started with `config` (as recorded there)."""
    try:
        recorded = json.loads((out / "checkpoints" / CONFIG_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return recorded == config.model_dump(mode="json")


def _check_out(out: Path, resume: bool | None, config: TrainConfig) -> bool:
    """Whether to resume the unfinished run in `out` (the same command run again resumes it:
    `resume` None; True insists, False refuses); refuses a directory in use otherwise."""
    if _unfinished(out):
        if resume or (resume is None and _same_config(out, config)):
            return True
        raise TrainError(
            f"{out} holds an unfinished training run with another configuration; run that "
            "command again to resume it, or choose another --out"
        )
    if out.exists() and any(p.name != "checkpoints" for p in out.iterdir()):
        raise TrainError(f"{out} exists and is not empty; choose another --out")
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    (out / "checkpoints" / CONFIG_FILE).write_text(
        json.dumps(config.model_dump(mode="json")), encoding="utf-8"
    )
    return False


def resume_point(out: str | Path, config: TrainConfig, force: bool = False) -> str | None:
    """Where training with `config` continues in `out`: 'step 8', 'iteration 2 (kept: 1
    finished iteration)' or the start (cut off before its first checkpoint); None when
    nothing there was cut off, or it was cut off under another config (which `train`
    refuses unless `force`)."""
    work = Path(out) / "checkpoints"
    if not work.is_dir() or trained_marker(Path(out)) is not None:
        return None
    if not force and not _same_config(Path(out), config):
        return None
    done = sorted(work.glob("iter-*/iteration.json"))
    if done:
        n = len(done)
        return f"iteration {n + 1} (kept: {n} finished iteration{'s' if n > 1 else ''})"
    last = _last_complete_checkpoint(work)
    if last is None:
        # Cut off before its first checkpoint: it starts again, and should say so.
        return f"the start (it stopped before its first checkpoint, due every {config.save_steps} steps)"
    return f"step {last.name.rsplit('-', 1)[1]} (its checkpoint)"


def _last_complete_checkpoint(checkpoints: Path) -> Path | None:
    """The newest checkpoint that was written to the end, removing any that were not.

    TRL writes a checkpoint into its final directory file by file and `trainer_state.json`
    last, so a run killed while saving leaves a directory without a readable state; resuming
    from it would fail, and the one before it is complete.
    """
    if not checkpoints.is_dir():
        return None
    found = []
    for path in checkpoints.iterdir():
        name, _, step = path.name.rpartition("-")
        if name == "checkpoint" and step.isdigit() and path.is_dir():
            found.append((int(step), path))
    for _, path in sorted(found, reverse=True):
        try:
            json.loads((path / "trainer_state.json").read_text(encoding="utf-8"))
            return path
        except (OSError, ValueError):
            shutil.rmtree(path, ignore_errors=True)
    return None


def _checkpointing_option() -> str:
    """transformers 5.x renamed `gradient_checkpointing` (the old name warns, then goes)."""
    from dataclasses import fields

    from transformers import TrainingArguments

    names = {f.name for f in fields(TrainingArguments)}
    return (
        "activation_checkpointing"
        if "activation_checkpointing" in names
        else "gradient_checkpointing"
    )


def _precision(config: TrainConfig) -> tuple[bool, bool, Any]:
    """(on a GPU, train in bf16, the dtype to load the weights in)."""
    import torch

    cuda = torch.cuda.is_available()
    if config.dtype == "auto":
        bf16 = cuda and torch.cuda.is_bf16_supported()
    else:
        bf16 = config.dtype == "bfloat16"
    return cuda, bf16, torch.bfloat16 if bf16 else torch.float32


def _peft(config: TrainConfig) -> Any:
    if not config.lora.enabled:
        return None
    from peft import LoraConfig

    lora = config.lora
    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )


def train(
    bank: Bank,
    config: TrainConfig,
    out: str | Path,
    *,
    resume: bool | None = None,
    exclude: set[str] = frozenset(),
    proposer_gains: dict[int, float] | None = None,
    progress: Any = None,
) -> TrainResult:
    """Train `config.model` on `bank` (an open `Bank`) into `out`; see the module docstring.

    `exclude` holds task ids that training must not see (a held-out evaluation split). An
    unfinished run in `out` continues from its last checkpoint when it was started with the
    same config (`resume` None: the same command run again resumes) or whatever its config
    (`resume` True, which also returns a finished one as it is); `resume` False refuses it.
    """
    from selfplay.backends.models import local_model_dir, resolve_model
    from task_bank.training import ModelRecord

    progress = progress or (lambda phase, done, total, note=None: None)
    out = Path(out)
    done = trained_marker(out)
    if done is not None:
        if not resume:
            raise TrainError(
                f"{out} already holds a trained model ({done['id']}); choose another --out"
            )
        return TrainResult(**done["result"])
    resume = _check_out(out, resume, config)
    checkpoint = _last_complete_checkpoint(out / "checkpoints") if resume else None
    started = time.perf_counter()
    model_id = model_id_for(out, config.method)
    base = local_model_dir(resolve_model(config.model))
    parent = (trained_marker(base) or {}).get("id")
    cuda, bf16, dtype = _precision(config)
    common = {
        "output_dir": str(out / "checkpoints"),
        "max_steps": config.max_steps,
        "per_device_train_batch_size": config.batch_size,
        "gradient_accumulation_steps": config.gradient_accumulation_steps,
        "learning_rate": config.learning_rate,
        "logging_steps": 1,
        "save_strategy": "steps",
        "save_steps": config.save_steps,
        "save_total_limit": 2,
        "report_to": [],
        "seed": config.seed,
        "use_cpu": not cuda,
        "bf16": bf16,
        "fp16": False,
        "disable_tqdm": True,
        "dataloader_num_workers": 0,
        "model_init_kwargs": {"dtype": dtype},
        # Recomputing activations saves memory a GPU may need; on a CPU it only costs time.
        _checkpointing_option(): cuda,
    }
    record = ModelRecord(
        id=model_id,
        base=config.model,
        method=config.method,
        role=config.role,
        path=str(out.resolve()),
        parent=parent,
        config=config.model_dump(),
    )
    ctx = TrainContext(
        bank=bank,
        config=config,
        out=out,
        base=base,
        model_id=model_id,
        common=common,
        peft=_peft(config),
        exclude=exclude,
        proposer_gains=proposer_gains,
        cuda=cuda,
        progress=progress,
        resume=resume,
        checkpoint=checkpoint,
    )
    if config.average < 1.0:  # refused before training, not after it
        from selfplay.training.average import shards

        shards(Path(base))
    job = get_method(config.method).load().build(ctx)
    # Recorded once the data is there (a run with nothing to train on leaves no record); a
    # resumed run keeps its record.
    if bank.model(model_id) is None or not resume:
        bank.add_model(record)
    trained = job.run(ctx)
    result = TrainResult(
        model_id=model_id,
        path=str(out.resolve()),
        method=config.method,
        role=config.role,
        steps=trained.steps,
        rows=trained.rows,
        resumed_from=trained.resumed_from,
        rollouts=trained.rollouts,
        dropped_rollouts=trained.dropped_rollouts,
        seconds=round(time.perf_counter() - started, 2),
        parent=parent,
        log=trained.log,
        overhead=trained.overhead,
    )
    job.save(out)
    if config.average < 1.0:  # WiSE-FT: back towards the starting model, adapter and all
        from selfplay.training.average import average

        average(base, out, config.average)
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    # The marker last: its presence means the directory is complete.
    tmp = out / f".{MARKER}.tmp"
    marker = {"id": model_id, "base": config.model, "result": result.to_dict()}
    tmp.write_text(json.dumps(marker, indent=2), encoding="utf-8")
    tmp.replace(out / MARKER)
    bank.finish_model(model_id, trained.steps, {"rows": trained.rows, **trained.data})
    return result
