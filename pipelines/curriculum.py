"""`selfplay curriculum`: compare schedulers on a simulated learner; inspect a bank's curriculum."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pipelines.common import BankOption, failure, group, plural

app = group(
    "curriculum", "Schedulers, the difficulty graph and learnability: simulate, show, plot."
)


def _fail(message: str | Exception) -> typer.Exit:
    return failure("curriculum", message)


@app.command()
def simulate(
    structures: Annotated[
        str, typer.Option(help="Comma-separated world structures, or 'all'.")
    ] = "all",
    seeds: Annotated[
        int, typer.Option(help="Worlds (and scheduler seeds) per structure.", min=1)
    ] = 5,
    tasks: Annotated[int, typer.Option(help="Tasks in each simulated bank.", min=50)] = 4000,
    heldout: Annotated[int, typer.Option(help="Held-out tasks.", min=10)] = 1000,
    target: Annotated[
        float, typer.Option(help="Held-out success to reach.", min=0.0, max=1.0)
    ] = 0.6,
    max_rollouts: Annotated[
        int, typer.Option(help="Budget per run; runs that exhaust it did not reach the target.")
    ] = 2_000_000,
    lr: Annotated[
        float | None,
        typer.Option(
            help="Ability gained per fully mixed group (default: each structure's).", min=0.0
        ),
    ] = None,
    schedulers: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated scheduler names (uniform is the baseline; default: every "
            "registered scheduler)."
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Worlds simulated in parallel processes.", min=1)
    ] = 1,
    plot: Annotated[
        Path | None, typer.Option(help="Write rollouts-to-target per structure to this PNG.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Train a simulated solver under each scheduler on worlds of each structure; report the
    rollouts needed to reach TARGET, as medians over seeds and ratios to uniform."""
    from curricula import scheduler_names
    from curricula.simulate import SimConfig
    from curricula.suite import run_suite, summarize_suite
    from curricula.worlds import STRUCTURES, structure_names

    # The registry, not a list kept here: a scheduler registered from outside is compared too.
    names = (
        tuple(n.strip() for n in schedulers.split(",") if n.strip())
        if schedulers is not None
        else tuple(scheduler_names())
    )
    unknown = [n for n in names if n not in scheduler_names()]
    if unknown or not names:
        known = ", ".join(scheduler_names())
        raise _fail(f"unknown scheduler {', '.join(unknown) or '(none)'}; choose from {known}.")
    wanted = [n.strip() for n in structures.split(",") if n.strip()]
    if wanted == ["all"]:
        wanted = structure_names()
    unknown = [n for n in wanted if n not in structure_names()]
    if unknown or not wanted:
        known = ", ".join(structure_names())
        raise _fail(
            f"unknown structure {', '.join(unknown) or '(none)'}; choose from {known} or all."
        )
    if max_rollouts < 1:
        raise _fail("--max-rollouts must be at least 1.")
    worlds = [s for s in STRUCTURES if s.name in wanted]
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
        results = run_suite(
            cfg,
            worlds,
            seeds,
            workers=workers,
            progress=lambda name, seed: status.update(f"{name}, seed {seed}"),
        )
    summary = summarize_suite(results, cfg, worlds)
    if plot is not None:
        from curricula.plots import plot_suite

        summary["plot"] = str(plot_suite(results, cfg, plot))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    _print_summary(summary)


def _print_summary(summary: dict) -> None:
    from rich.table import Table

    from pipelines.console import stdout

    cfg = summary["config"]
    names = list(cfg["schedulers"])
    table = Table(
        title=f"Rollouts to held-out success {cfg['target']}: median over {summary['seeds']} "
        f"seeds, as a multiple of uniform's ({cfg['n_tasks']} tasks, budget "
        f"{cfg['max_rollouts']:,}; '-': not reached in half the runs)"
    )
    # At 80 columns the names stay whole (they are what a reader looks for); targets fold.
    table.add_column("structure", no_wrap=True)
    table.add_column("uniform", justify="right", no_wrap=True)
    for name in names:
        if name != "uniform":
            table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
    table.add_column("targets", justify="left", overflow="fold")
    for structure, s in summary["structures"].items():
        runs = s["schedulers"]
        base = runs.get("uniform", {}).get("median")
        cells = [structure, "-" if base is None else f"{base:,.0f}"]
        for name in names:
            if name == "uniform":
                continue
            ratio = runs[name]["ratio_to_uniform"]
            cells.append("-" if ratio is None else f"{ratio:.2f}x")
        missed = [t for t in s["targets"] if not t["met"]]
        cells.append(
            "met" if not missed else "MISSED " + ", ".join(_target_text(t) for t in missed)
        )
        table.add_row(*cells)
    stdout.print(table)
    if any(s["targets"] for s in summary["structures"].values()):
        verdict = "met on every structure" if summary["all_met"] else "MISSED on some structure"
        stdout.print(
            "targets: learnability <= 0.8x uniform; frontier <= 0.6x uniform and <= 1.05x "
            f"learnability: {verdict}"
        )
    if "plot" in summary:
        stdout.print(f"plot: {summary['plot']}")


def _target_text(t: dict) -> str:
    got = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}"
    return f"{t['scheduler']} {got}x {t['baseline']} (<= {t['max_ratio']})"


def _curriculum(bank: Path | None, solver: str | None, knn: int, save: bool):
    """Open the bank and grow its difficulty graph; returns (view, graph)."""
    from curricula.inspect import bank_graph
    from task_bank.store import Bank, BankError

    try:
        store = Bank(bank, create=False)
    except BankError as e:
        raise _fail(f"{e}.") from None
    with store:
        return bank_graph(store, solver=solver, knn=knn, save=save)


SolverOption = Annotated[
    str | None, typer.Option(help="Only this solver's attempts (default: all solvers summed).")
]
KnnOption = Annotated[int, typer.Option(help="Similarity neighbours per task.", min=0)]
SaveOption = Annotated[
    bool, typer.Option("--save/--no-save", help="Store the updated difficulty graph in the bank.")
]


@app.command()
def show(
    bank: BankOption = None,
    solver: SolverOption = None,
    knn: KnnOption = 5,
    mastery: Annotated[
        float, typer.Option(help="Solve rate that counts as mastered.", min=0.0, max=1.0)
    ] = 0.8,
    limit: Annotated[int, typer.Option(help="Frontier tasks to list.", min=0)] = 20,
    save: SaveOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Frontier tasks, expected reward variance E[p(1-p)] and skill coverage of a bank."""
    from curricula.inspect import summarize

    view, graph = _curriculum(bank, solver, knn, save)
    data = summarize(view, graph, mastery=mastery)
    data["frontier"] = data["frontier"][:limit]
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    from rich.table import Table

    from pipelines.console import stdout

    stdout.print(
        f"{plural(data['tasks'], 'task')}, {data['attempted']} attempted, {data['mastered']} mastered, "
        f"{data['frontier_size']} on the frontier; edges: "
        + (", ".join(f"{k} {v}" for k, v in data["edges"].items()) or "none")
    )
    front = Table(title=f"Frontier (top {min(limit, data['frontier_size'])} by expected variance)")
    # Ids and skills stay whole so they can be copied into `bank show`; numbers are short.
    for col in ("task", "skill", "tries", "rate", "E\\[p(1-p)]"):
        text = col in ("task", "skill")
        front.add_column(col, justify="left" if text else "right", no_wrap=not text,
                         overflow="fold")  # fmt: skip
    untried = 0
    for row in data["frontier"]:
        # An untried task's rate is the scheduler's prior, not a measurement: marked so.
        rate = f"{row['pass_rate']:.2f}" + ("*" if row["attempts"] == 0 else "")
        untried += row["attempts"] == 0
        front.add_row(
            row["id"], row["skill"], str(row["attempts"]), rate, f"{row['expected_variance']:.3f}",
        )  # fmt: skip
    stdout.print(front)
    if untried:
        stdout.print(f"* {plural(untried, 'task')} not tried yet: the rate shown is the prior "
                     "(0.50), moved by the task's neighbours in the difficulty graph; not a "
                     "measurement.")  # fmt: skip
    hist = Table(title="Expected reward variance E\\[p(1-p)]")
    hist.add_column("range")
    hist.add_column("tasks", justify="right")
    for rng, n in data["expected_variance_histogram"].items():
        hist.add_row(rng, str(n))
    stdout.print(hist)
    skills = Table(title="Skill coverage")
    for col in ("skill", "tasks", "tried", "mastered", "frontier", "mean rate"):
        skills.add_column(col, justify="left" if col == "skill" else "right",
                          no_wrap=col != "skill", overflow="fold")  # fmt: skip
    for skill, s in data["skills"].items():
        skills.add_row(
            skill, *(str(int(s[c])) for c in ("tasks", "attempted", "mastered", "frontier")),
            f"{s['pass_rate']:.2f}",
        )  # fmt: skip
    stdout.print(skills)


@app.command(name="plot")
def plot_(
    out: Annotated[Path, typer.Option("--out", help="Directory for the PNG files.")],
    bank: BankOption = None,
    solver: SolverOption = None,
    knn: KnnOption = 5,
    graphml: Annotated[
        Path | None, typer.Option(help="Also export the difficulty graph as GraphML here.")
    ] = None,
    save: SaveOption = False,
) -> None:
    """PNGs of the difficulty graph coloured by solve rate, expected reward variance and solve
    rate per round."""
    from curricula.plots import plot_bank

    if out.exists() and not out.is_dir():
        raise _fail(f"{out} exists and is not a directory.")
    view, graph = _curriculum(bank, solver, knn, save)
    for path in plot_bank(view, graph, out):
        typer.echo(str(path))
    if graphml is not None:
        graph.write_graphml(graphml)
        typer.echo(str(graphml))
