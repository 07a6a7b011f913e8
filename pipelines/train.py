"""`selfplay train`: fine-tune a model on a bank with TRL (GRPO, SFT or DPO) and LoRA.

Thin: reads the config and flags, opens the bank, calls `selfplay.training.train`, prints
what was trained and where it went.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pipelines.common import (
    BankOption,
    ConfigOption,
    GradeOnRayOption,
    PrintConfigOption,
    described,
    failure,
    plural,
    ray_session,
)
from selfplay import methods
from selfplay.config import TrainConfig

TRAIN_INSTALL = "pip install 'selfplay[train]'"


def _fail(message: str | Exception) -> typer.Exit:
    return failure("train", message)


def check_train_dependencies(command: str = "train") -> None:
    """One sentence naming the pip command when TRL, peft or torch is missing."""
    import importlib.util

    for module in ("torch", "transformers", "trl", "peft"):
        if importlib.util.find_spec(module) is None:
            raise failure(
                command, f"training needs the {module} package; install it with: {TRAIN_INSTALL}"
            )


def quiet_libraries() -> None:
    """datasets' and transformers' own progress bars and notices off: ours report progress."""
    import logging
    import warnings

    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    logging.getLogger("datasets").setLevel(logging.ERROR)
    # TRL 1.16 still passes transformers' old gradient-checkpointing names; nothing to act on.
    warnings.filterwarnings("ignore", message=".*gradient_checkpointing.*", category=FutureWarning)


def train(
    method: Annotated[
        str | None,
        typer.Option(help=f"{methods.described()} (config: method; default sft)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Model directory to write (created).")
    ] = None,
    bank: BankOption = None,
    model: Annotated[str | None, described(TrainConfig, "model")] = None,
    config: ConfigOption = None,
    role: Annotated[
        str | None,
        typer.Option(
            help=f"solver (default) or proposer (method {methods.either(methods.names('proposer'))})."
        ),
    ] = None,
    max_steps: Annotated[int | None, described(TrainConfig, "max_steps", min=1)] = None,
    iterations: Annotated[
        int | None, described(TrainConfig, "ei.iterations", then="method ei", min=1)
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(help="grpo and ei: the scheduler picking tasks (config: grpo/ei.scheduler)."),
    ] = None,
    lora: Annotated[
        bool | None, described(TrainConfig, "lora.enabled", "--lora/--no-lora", then="default")
    ] = None,
    average: Annotated[float | None, described(TrainConfig, "average", min=0.0, max=1.0)] = None,
    resume: Annotated[
        bool | None,
        typer.Option(
            "--resume",
            help="Continue the unfinished run in --out even under another config (the same "
            "command run again resumes it anyway).",
            show_default=False,
        ),
    ] = None,
    ray: GradeOnRayOption = None,
    print_config: PrintConfigOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fine-tune the solver (or the proposer) on the bank: GRPO with the curriculum, SFT on
    verified solutions, DPO on pairs, or expert iteration (ei) on the model's own verified
    attempts. Writes a model directory every --model accepts."""
    from selfplay.config import ConfigError, TrainConfig, documented_yaml, load_train_config

    if print_config:
        typer.echo(documented_yaml(TrainConfig()), nl=False)
        return
    if out is None:
        raise _fail("give the model directory to write with --out.")
    try:
        cfg = load_train_config(
            config,
            method=method,
            model=model,
            role=role,
            max_steps=max_steps,
            average=average,
            **{"verifier.ray": ray},
            **{"lora.enabled": lora, "ei.iterations": iterations},
            # One option for both methods that pick tasks; the other method ignores it.
            **{"grpo.scheduler": scheduler, "ei.scheduler": scheduler},
        )
    except ConfigError as e:
        raise _fail(e) from None
    check_model(cfg.model)
    check_train_dependencies()
    from selfplay.training.trainer import resume_point

    point = resume_point(out, cfg, force=bool(resume))
    if point is not None:
        typer.echo(f"resuming the training run in {out} at {point}", err=True)
    with ray_session("train", cfg.verifier.ray):
        result = run_training(cfg, bank, out, resume=resume)
    if as_json:
        typer.echo(json.dumps(result.to_dict() | {"log": result.log[-3:]}, indent=2))
        return
    reward = result.mean_reward
    extra = f", mean reward {reward:.3f}, {result.rollouts} rollouts in the bank" if reward else ""
    flat = [e["frac_reward_zero_std"] for e in result.log if "frac_reward_zero_std" in e]
    if result.method == "grpo" and flat and min(flat) >= 1.0:
        extra += (
            "; every group's rollouts scored the same (all right or all wrong), so no step "
            "had an advantage to learn from: pick tasks the model solves sometimes"
        )
    if result.role == "proposer" and result.method == "grpo":
        first, last = result.log[0], result.log[-1]
        frontier = sum(e["frontier"] for e in result.log)
        proposals = sum(e["proposals"] for e in result.log)
        extra = (
            f", mean reward {first['reward']:+.3f} at step {first['step']} and "
            f"{last['reward']:+.3f} at step {last['step']}, {frontier} of {proposals} proposals "
            f"at the solver's frontier, KL to the start {last['kl']:.4f}; every step's figures: "
            f"{Path(result.path) / 'metrics.jsonl'}"
        )
    if result.method == "ei":
        per = [f"{it['passed']}/{it['sampled']}" for it in result.log]
        extra = f", passing answers per iteration {', '.join(per)}"
    resumed = f" (resumed at step {result.resumed_from})" if result.resumed_from else ""
    typer.echo(
        f"trained {result.model_id}: {result.method} on {plural(result.rows, 'row')}, {plural(result.steps, 'step')}"
        f"{resumed}{extra}, {result.seconds:.0f} s\n"
        f"model directory: {result.path}\n"
        f"  selfplay eval bank --model {result.path}\n"
        f"  selfplay run --model {result.path}"
    )


def check_model(spec: str, command: str = "train") -> None:
    """Fail on a model that does not exist before the training libraries load (seconds)."""
    from selfplay.backends.base import BackendError
    from selfplay.backends.models import resolve_model

    try:
        resolve_model(spec)
    except BackendError as e:
        raise failure(command, e) from None


def run_training(cfg: Any, bank_path: Path | None, out: Path, **options: Any) -> Any:
    """`selfplay.training.train` with progress on stderr and every error as one sentence."""
    from pipelines.progress import Progress
    from selfplay.backends.base import BackendError
    from selfplay.training import TrainDataError, TrainError
    from selfplay.training import train as train_model
    from task_bank.store import Bank, BankError, default_bank_path

    quiet_libraries()
    bars = Progress()
    try:
        with Bank(bank_path or default_bank_path(), create=False) as store, bars:
            return train_model(store, cfg, out, progress=bars.update, **options)
    except KeyboardInterrupt:
        typer.echo("selfplay train: interrupted; run the same command again to resume.", err=True)
        raise typer.Exit(130) from None
    except (TrainError, TrainDataError, BankError, BackendError) as e:
        raise _fail(e) from None
