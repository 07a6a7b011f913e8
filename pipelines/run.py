"""`selfplay run`: self-play rounds on a task bank (propose, verify, admit, solve, reward).

Thin: reads the config and flags, builds the backend and the verifier, and renders
progress bars, the per-round summary table and the final bank size. The round loop
itself is `selfplay.engine.SelfPlay`.
"""

from __future__ import annotations

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
from selfplay.config import RunConfig
from selfplay.engine.build import make_run_backend
from task_bank.store import DEFAULT_BANK


def _fail(message: str | Exception) -> typer.Exit:
    return failure("run", message)


def _summary_table(summary: Any) -> Any:
    from rich.table import Table

    table = Table(title=f"self-play round {summary.round}", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    rate = "-" if summary.solve_rate is None else f"{summary.solve_rate:.2f}"
    learn = "-" if summary.mean_learnability is None else f"{summary.mean_learnability:.3f}"
    table.add_row("proposed", str(summary.proposed))
    table.add_row("admitted", str(summary.admitted))
    if summary.flagged:
        table.add_row("  flagged (benchmark look-alikes, kept out)", str(summary.flagged))
    for reason, n in summary.rejected.items():
        table.add_row(f"  rejected: {reason}", str(n))
    for how, n in summary.repaired.items():
        table.add_row(f"  repaired once: {how}", str(n))
    table.add_row("solver attempts", str(summary.attempts))
    table.add_row("solve rate", rate)
    table.add_row("mean learnability (new tasks)", learn)

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    def figure(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    table.add_row("yield (admitted / proposed)", share(summary.yield_rate))
    table.add_row(
        "frontier yield (0 < solve rate < 1)",
        f"{summary.frontier} ({share(summary.frontier_yield)} of proposed)",
    )
    table.add_row(
        "diversity (program shapes)", f"{summary.shapes} ({share(summary.diversity)} of admitted)"
    )
    table.add_row("mean distance within the round", figure(summary.distance_within))
    table.add_row("mean distance to the bank", figure(summary.distance_to_bank))
    table.add_row("duplicates (of proposed)", share(summary.near_duplicate_rate))
    table.add_row("tokens/s", f"{summary.tokens_per_s:.1f}")
    table.add_row("time (s)", f"{summary.seconds:.1f}")
    table.add_row("tasks in bank", str(summary.bank_tasks))
    return table


def run(
    bank: BankOption = None,
    rounds: Annotated[int | None, described(RunConfig, "rounds", then="default 1", min=1)] = None,
    config: ConfigOption = None,
    model: Annotated[
        str | None,
        typer.Option(help="Model: 'bundled', a .gguf file, a model directory or a Hub id."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            help="Backend: auto (default: vllm where it runs, else transformers), transformers, "
            "vllm, openai or scripted."
        ),
    ] = None,
    ray: RayOption = None,
    print_config: PrintConfigOption = False,
) -> None:
    """Grow the bank: propose tasks, verify and admit them, solve, reward. Resumable."""
    from selfplay.config import ConfigError, RunConfig, documented_yaml, load_config

    if print_config:
        typer.echo(documented_yaml(RunConfig()), nl=False)
        return
    try:
        cfg = load_config(
            config,
            rounds=rounds,
            **{
                "model.spec": model,
                "model.backend": backend,
                "model.ray": ray,
                "verifier.ray": ray,
            },
        )
    except ConfigError as e:
        raise _fail(e) from None
    _run(cfg, bank)


def _run(cfg: Any, bank_path: Path | None) -> None:
    from pipelines.console import stderr, stdout
    from pipelines.progress import Progress
    from selfplay.admission.importers import SourceError
    from selfplay.backends.base import BackendError
    from selfplay.engine import SelfPlay, make_run_verifier, metrics_path
    from selfplay.verifier import IsolationUnavailable
    from selfplay.verifier.connect import RayUnavailable
    from task_bank.store import Bank, BankError

    try:
        backend = make_run_backend(cfg)
    except (BackendError, ValueError, TypeError) as e:
        raise _fail(e) from None
    try:
        store = Bank(bank_path)
    except BankError as e:
        raise _fail(f"{e}.") from None
    bars = Progress()
    rounds: list[Any] = []

    def on_round(summary: Any) -> None:
        rounds.append(summary)
        bars.clear()
        bars.show(_summary_table(summary), stdout)
        for warning in summary.warnings:
            stderr.print(f"warning: {warning}: the proposer may be collapsing")

    def on_seeds(report: Any) -> None:
        stderr.print(f"empty bank: imported {plural(report.admitted, 'bundled seed task')}")

    try:
        with ray_session("run", cfg.model.ray or cfg.verifier.ray), make_run_verifier(cfg) as v:
            engine = SelfPlay(store, backend, v, cfg, progress=bars.update, on_round=on_round,
                              on_seeds=on_seeds)  # fmt: skip
            point = engine.resume_point()
            if point is not None:  # after a kill the progress lines are gone: say where
                stderr.print(f"resuming {point}", highlight=False)
            with bars:
                engine.run(cfg.rounds)
    except KeyboardInterrupt:
        typer.echo("selfplay run: interrupted; run the same command again to resume.", err=True)
        raise typer.Exit(130) from None
    except (BackendError, BankError, IsolationUnavailable, RayUnavailable, SourceError) as e:
        raise _fail(e) from None
    finally:
        backend.close()
        store.close()
    path = store.path or DEFAULT_BANK
    with Bank(store.path) as done:
        count = done.count()
    stderr.print(
        f"bank {path}: {plural(count, 'task')}. Where to look next:\n"
        + next_steps(path, rounds)
        + f"  # the last round's figures (one JSON line per round)\n"
        f"  tail -n 1 {metrics_path(store, cfg)}",
        highlight=False,
        soft_wrap=True,
    )


def next_steps(path: Any, rounds: list[Any]) -> str:
    """The commands worth running after these rounds: a round that admitted nothing points at
    why its proposals were turned away, before anything else."""
    last = rounds[-1] if rounds else None
    why = (f"  # why round {last.round}'s proposals were turned away\n"
           f"  selfplay bank rejections --bank {path} --round {last.round}\n") if last else ""  # fmt: skip
    if last is not None and last.admitted == 0:
        return why
    return (f"  # the new tasks\n  selfplay bank list --bank {path} --source selfplay --sort newest\n"
            f"  # frontier, learnability\n  selfplay curriculum show --bank {path}\n"
            + why)  # fmt: skip
