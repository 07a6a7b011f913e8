"""`selfplay loop`: self-play rounds, training and evaluation, iteration after iteration.

Thin: reads the config and flags, builds the verifier, runs `selfplay.engine.loop.Loop`,
prints a table per iteration and writes the learning curve.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pipelines.common import (
    BankOption,
    ConfigOption,
    PrintConfigOption,
    RayOption,
    described,
    failure,
    plural,
    ray_session,
)
from selfplay import methods
from selfplay.config import LoopConfig


def _fail(message: str | Exception) -> typer.Exit:
    return failure("loop", message)


def _fmt(value: float | None, interval: list[float] | None = None) -> str:
    if value is None:
        return "-"
    # The interval goes on its own line, so ten columns fit 80 characters.
    return f"{value:.2f}" + (f"\n{interval[0]:.2f}-{interval[1]:.2f}" if interval else "")


def table(rows: list[Any]) -> Any:
    """One line per iteration, readable at 80 columns (pass@1 with its 95% interval)."""
    from rich import box
    from rich.table import Table

    # No vertical rules and the intervals on a second line: nine columns in 80 characters.
    t = Table(title="selfplay loop (pass@1 with 95% interval)", box=box.SIMPLE_HEAD,
              pad_edge=False, show_edge=False, collapse_padding=True)  # fmt: skip
    for column in ("it", "model", "new", "bank", "solver", "proposer", "held-out", "HumanEval",
                   "hacks"):  # fmt: skip
        text = column in ("model", "proposer")
        t.add_column(column, justify="left" if text else "right", no_wrap=not text,
                     overflow="fold", min_width=10 if column == "model" else None)  # fmt: skip
    for r in rows:
        train = (f"R {r.train_reward:.2f}" if r.train_reward is not None else
                 f"L {r.train_loss:.2f}" if r.train_loss is not None else "-")  # fmt: skip
        t.add_row(
            str(r.iteration),
            Path(r.model).name if "/" in r.model else r.model,
            str(r.admitted) if r.iteration else "-",
            str(r.bank_tasks),
            f"{plural(r.train_steps, 'step')}\n{train}" if r.iteration else "-",
            r.proposer,
            _fmt(r.held_out, r.held_out_interval),
            _fmt(r.humaneval, r.humaneval_interval),
            _fmt(r.hack_signal_rate),
        )
    t.caption = (
        "new: tasks the round admitted; solver: training steps and mean GRPO reward (R) or "
        "loss (L); proposer: its training steps"
    )
    return t


def loop(
    iterations: Annotated[
        int | None, described(LoopConfig, "iterations", then="default 1", min=1)
    ] = None,
    bank: BankOption = None,
    config: ConfigOption = None,
    model: Annotated[
        str | None, typer.Option(help="Starting model (config: run.model.spec; default bundled).")
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            help=f"Solver training: {methods.either(methods.names('solver'))} (default sft)."
        ),
    ] = None,
    curve: Annotated[
        Path | None, typer.Option(help="Learning-curve PNG (default: <bank>.loop.png).")
    ] = None,
    ray: RayOption = None,
    print_config: PrintConfigOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
) -> None:
    """Self-play, train, evaluate, repeat: each iteration a round with the current model, the
    solver (and proposer) trained on the bank, and pass@1 on held-out tasks and HumanEval.
    Resumable: run the same command again after a kill."""
    from selfplay.config import ConfigError, LoopConfig, documented_yaml, load_loop_config

    if print_config:
        typer.echo(documented_yaml(LoopConfig()), nl=False)
        return
    try:
        cfg = load_loop_config(
            config,
            iterations=iterations,
            **{
                "run.model.spec": model,
                "solver.method": method,
                "run.model.ray": ray,
                "run.verifier.ray": ray,
            },  # fmt: skip
        )
    except ConfigError as e:
        raise _fail(e) from None
    from pipelines.train import check_model, check_train_dependencies

    if cfg.run.model.backend in ("auto", "transformers", "vllm"):
        check_model(cfg.run.model.spec, "loop")
    check_train_dependencies("loop")
    rows, store_path, models = _run(cfg, bank)
    from selfplay.engine.curve import plot_learning_curve

    png = plot_learning_curve(rows, curve or store_path.with_name(store_path.stem + ".loop.png"))
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in rows], indent=2))
    else:
        from pipelines.console import stderr, stdout

        stdout.print(table(rows))
        for r in rows:
            if r.proposer_skipped:
                stderr.print(f"iteration {r.iteration}: proposer training skipped: "
                             f"{r.proposer_skipped}", highlight=False)  # fmt: skip
            for warning in r.warnings:
                stderr.print(
                    f"warning: iteration {r.iteration}: {warning}: the proposer may be collapsing"
                )
        for line in smoke_notes(rows):
            stderr.print(line, highlight=False)
    typer.echo(f"learning curve: {png}", err=True)
    typer.echo(f"models: {models} ({_size(models)}; each iteration's trained model, "
               "for --model)", err=True)  # fmt: skip


# An interval this wide (95%) cannot show the change a short loop makes.
SMOKE_WIDTH = 0.3


def smoke_notes(rows: list[Any]) -> list[str]:
    """Say plainly when the evaluation sets are too small for the table to show a change."""
    notes = []
    first = rows[0] if rows else None
    for name, label in (("held_out", "held-out"), ("humaneval", "HumanEval")):
        ci = getattr(first, f"{name}_interval", None) if first else None
        if ci and ci[1] - ci[0] >= SMOKE_WIDTH:
            notes.append(
                f"smoke run: the {label} pass@1 rests on so few problems that its 95% interval "
                f"is {ci[0]:.2f} to {ci[1]:.2f}, wider than any change one short iteration "
                "makes; it shows that the loop runs, not what it gains (docs/training.md has "
                "measured runs)"
            )
    return notes


def _size(path: Path) -> str:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else 0
    return f"{total / 1e9:.1f} GB" if total >= 1e8 else f"{total / 1e6:.0f} MB"


def _run(cfg: Any, bank_path: Path | None) -> tuple[list[Any], Path, Path]:
    from pipelines.progress import Progress
    from pipelines.train import quiet_libraries
    from selfplay.admission.importers import SourceError
    from selfplay.backends.base import BackendError
    from selfplay.engine import make_run_verifier
    from selfplay.engine.loop import Loop
    from selfplay.training import TrainDataError, TrainError
    from selfplay.verifier import IsolationUnavailable
    from selfplay.verifier.connect import RayUnavailable
    from task_bank.store import Bank, BankError, default_bank_path

    quiet_libraries()
    bars = Progress()
    session = ray_session("loop", cfg.run.model.ray or cfg.run.verifier.ray)
    try:
        with session, Bank(bank_path or default_bank_path()) as store:
            with make_run_verifier(cfg.run) as verifier:
                loop = Loop(store, verifier, cfg, progress=bars.update)
                point = loop.resume_point()
                if point is not None:  # after a kill the progress lines are gone: say where
                    typer.echo(f"resuming the loop at {point}", err=True)
                with bars:
                    rows = loop.run(cfg.iterations)
            return rows, store.path, loop.models_dir
    except KeyboardInterrupt:
        typer.echo("selfplay loop: interrupted; run the same command again to resume.", err=True)
        raise typer.Exit(130) from None
    except (BackendError, BankError, IsolationUnavailable, RayUnavailable, SourceError,
            TrainError, TrainDataError) as e:  # fmt: skip
        raise _fail(e) from None
