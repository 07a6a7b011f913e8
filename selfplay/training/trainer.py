"""`train`: fine-tune a model on a bank with TRL (GRPO, SFT or DPO) and peft's LoRA.

The output directory is a Hugging Face model directory that every `--model` accepts:
- the merged weights (LoRA folded in; float32 unless trained in bf16, so that small updates
  are not rounded away) and the tokenizer at the top;
- `adapter/`: the LoRA adapter alone, for peft users;
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
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfplay.backends.models import TRAINED_MARKER as MARKER
from selfplay.config import TrainConfig

if TYPE_CHECKING:
    from task_bank.store import Bank


class TrainError(RuntimeError):
    """Training that cannot start or finish; the message is one sentence."""


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


def _callback(progress: Any, log: list[dict[str, Any]], doing: str | None = None) -> Any:
    """Progress of a TRL run; `doing`: what a step spends its time on, said as it starts
    (a GRPO step on long programs generates for minutes, and a bare '0/2' says nothing)."""
    from transformers import TrainerCallback

    class Report(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            progress("train", state.global_step, state.max_steps)  # its clock starts here

        def on_step_begin(self, args, state, control, **kwargs):
            if doing:
                progress("train", state.global_step, state.max_steps,
                         note=f"step {state.global_step + 1}: {doing}")  # fmt: skip

        def on_step_end(self, args, state, control, **kwargs):
            # A step that logs is reported by on_log, with its loss: reported here first, the
            # last step's loss would arrive after the phase had ended, and every other one
            # a line late.
            if not control.should_log:
                progress("train", state.global_step, state.max_steps)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "train_runtime" not in logs:
                log.append({"step": state.global_step, **logs})
                # The figures TRL would print at each logging step ride on the bar instead.
                shown = [f"{k} {logs[k]:.3f}" for k in ("loss", "reward") if k in logs]
                progress("train", state.global_step, state.max_steps,
                         note=", ".join(shown) or None)  # fmt: skip

    return Report()


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
    from selfplay.training import methods
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
    log: list[dict[str, Any]] = []
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
    if config.method == "ei":
        return _expert(bank, config, out, base, record, common, exclude, resume, progress,
                       started)  # fmt: skip
    job = methods.build(
        bank,
        config,
        base,
        model_id,
        common,
        _peft(config),
        exclude,
        proposer_gains,
        cuda,
        progress,
    )
    # Recorded once the data is there (a run with nothing to train on leaves no record).
    if bank.model(model_id) is None or checkpoint is None:
        bank.add_model(record)
    from transformers.trainer_callback import PrinterCallback

    job.trainer.remove_callback(PrinterCallback)  # logs reach the result, not stdout
    doing = "generating and grading its rollouts" if job.rollouts is not None else None
    job.trainer.add_callback(_callback(progress, log, doing))
    dropped = 0
    if job.rollouts is not None:
        # The steps after the checkpoint (all of them, killed before the first one) run
        # again; their first rollouts must not count twice.
        since = os.path.getmtime(checkpoint / "trainer_state.json") if checkpoint else 0.0
        dropped = bank.drop_attempts_since(model_id, since)
    try:
        job.trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    finally:
        job.close()
    steps = job.trainer.state.global_step
    result = TrainResult(
        model_id=model_id,
        path=str(out.resolve()),
        method=config.method,
        role=config.role,
        steps=steps,
        rows=job.rows,
        resumed_from=int(checkpoint.name.rsplit("-", 1)[1]) if checkpoint else None,
        rollouts=bank.attempt_summary(model_id)[0] if job.rollouts is not None else 0,
        dropped_rollouts=dropped,
        seconds=round(time.perf_counter() - started, 2),
        parent=parent,
        log=log,
        overhead=job.overhead(),
    )
    _save(job.trainer, out, {"id": model_id, "base": config.model, "result": result.to_dict()})
    bank.finish_model(model_id, steps, {"rows": job.rows, **job.data})
    return result


def _expert(bank, config, out, base, record, common, exclude, resume, progress, started):
    """`method: ei` (`selfplay.training.expert`): its iterations, then the last trained
    model moved to `out` with the marker; no `adapter/` (each iteration's adapter is folded
    into the model the next one starts from)."""
    from selfplay.training import data, expert

    data.solver_items(bank, config, exclude)  # nothing to train on: one sentence, no record
    if bank.model(record.id) is None or not resume:
        bank.add_model(record)
    model, iterations, info = expert.iterate(
        bank, config, out, base=base, model_id=record.id, common=common, peft=_peft(config),
        exclude=exclude, resume=resume, progress=progress,
    )  # fmt: skip
    if model == base:
        raise TrainError(
            f"no answer passed in {len(iterations)} iteration(s) of expert iteration, so there "
            "was nothing to train on; pick easier tasks (data filter) or sample more (ei.samples)"
        )
    for path in Path(model).iterdir():
        if path.name != expert.DONE:
            shutil.move(str(path), out / path.name)
    steps = sum(it.steps for it in iterations)
    rows = sum(it.rows for it in iterations)
    result = TrainResult(
        model_id=record.id,
        path=str(out.resolve()),
        method="ei",
        role="solver",
        steps=steps,
        rows=rows,
        rollouts=sum(it.sampled for it in iterations),
        seconds=round(time.perf_counter() - started, 2),
        parent=record.parent,
        log=info["iterations"],
    )
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    tmp = out / f".{MARKER}.tmp"
    marker = {"id": record.id, "base": config.model, "result": result.to_dict()}
    tmp.write_text(json.dumps(marker, indent=2), encoding="utf-8")
    tmp.replace(out / MARKER)
    bank.finish_model(record.id, steps, {"rows": rows, **info})
    return result


def _save(trainer: Any, out: Path, record: dict[str, Any]) -> None:
    """The merged model and tokenizer, the adapter beside them, the marker last."""
    model = trainer.model
    if hasattr(model, "merge_and_unload"):  # a peft model: keep the adapter, fold it in
        model.save_pretrained(out / "adapter")
        model = model.merge_and_unload()
    model.save_pretrained(out)
    trainer.processing_class.save_pretrained(out)
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    tmp = out / f".{MARKER}.tmp"
    tmp.write_text(json.dumps(record, indent=2), encoding="utf-8")
    tmp.replace(out / MARKER)
