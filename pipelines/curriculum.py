"""`selfplay curriculum`: compare schedulers on a simulated learner; inspect a bank's curriculum."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="curriculum",
    help="Schedulers, the difficulty graph and learnability: simulate, show, plot.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

BankOption = Annotated[
    Path | None,
    typer.Option("--bank", help="Bank file (default: $SELFPLAY_BANK or selfplay.db)."),
]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"selfplay curriculum: {message}", err=True)
    return typer.Exit(2)


@app.command()
def simulate(
    seeds: Annotated[int, typer.Option(help="Worlds (and scheduler seeds) to run.", min=1)] = 5,
    tasks: Annotated[int, typer.Option(help="Tasks in the simulated bank.", min=50)] = 4000,
    heldout: Annotated[int, typer.Option(help="Held-out tasks.", min=10)] = 1000,
    target: Annotated[
        float, typer.Option(help="Held-out success to reach.", min=0.0, max=1.0)
    ] = 0.6,
    max_rollouts: Annotated[
        int, typer.Option(help="Budget per run; runs that exhaust it did not reach the target.")
    ] = 2_000_000,
    lr: Annotated[float, typer.Option(help="Ability gained per fully mixed group.", min=0.0)] = (
        0.0005
    ),
    schedulers: Annotated[
        str, typer.Option(help="Comma-separated scheduler names (uniform is the baseline).")
    ] = "uniform,easy_to_hard,dapo_filter,learnability,plr,frontier",
    plot: Annotated[
        Path | None, typer.Option(help="Write the learning curves and box plot to this PNG.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Train a simulated solver under each scheduler; report rollouts needed to reach TARGET."""
    from curricula import scheduler_names
    from curricula.simulate import SimConfig, run_simulation, summarize

    names = tuple(n.strip() for n in schedulers.split(",") if n.strip())
    unknown = [n for n in names if n not in scheduler_names()]
    if unknown or not names:
        known = ", ".join(scheduler_names())
        raise _fail(f"unknown scheduler {', '.join(unknown) or '(none)'}; choose from {known}.")
    if max_rollouts < 1:
        raise _fail("--max-rollouts must be at least 1.")
    cfg = SimConfig(
        n_tasks=tasks,
        n_heldout=heldout,
        target=target,
        max_rollouts=max_rollouts,
        lr=lr,
        schedulers=names,
    )
    from pipelines.console import stderr

    with stderr.status("simulating") as status:
        runs = run_simulation(
            cfg, seeds, progress=lambda seed, name: status.update(f"seed {seed}: {name}")
        )
    summary = summarize(runs, cfg)
    if plot is not None:
        from curricula.plots import plot_simulation

        summary["plot"] = str(plot_simulation(runs, cfg, plot))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    _print_summary(summary)


def _print_summary(summary: dict) -> None:
    from rich.table import Table

    from pipelines.console import stdout

    cfg = summary["config"]
    table = Table(
        title=f"Rollouts to held-out success {cfg['target']} "
        f"({cfg['n_tasks']} tasks, budget {cfg['max_rollouts']:,})"
    )
    for col in ("scheduler", "median", "IQR", "min-max", "x uniform", "reached", "mixed groups"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    for name, s in summary["schedulers"].items():
        ratio = s["ratio_to_uniform"]
        table.add_row(
            name,
            "not reached" if s["median"] is None else f"{s['median']:,.0f}",
            f"{s['q25']:,.0f}-{s['q75']:,.0f}",
            f"{s['min']:,.0f}-{s['max']:,.0f}",
            "-" if ratio is None else f"{ratio:.2f}",
            f"{s['reached']}/{len(s['runs'])}",
            f"{s['useful_share']:.0%}",
        )
    stdout.print(table)
    for name, t in summary.get("targets", {}).items():
        got = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        verdict = "met" if t["met"] else "MISSED"
        stdout.print(f"target {name} <= {t['max_ratio']}x uniform: {got} ({verdict})")
    if "plot" in summary:
        stdout.print(f"plot: {summary['plot']}")
