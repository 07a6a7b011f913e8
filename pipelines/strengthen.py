"""`selfplay bank strengthen`: add tests to codegen tasks until wrong solutions fail.

A task's own tests stay as they were; the new ones are recorded beside them, with their
provenance, and grading uses both from then on (see `selfplay.strengthen`)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated

import typer

from pipelines.common import BankOption, plural


def strengthen(
    bank: BankOption = None,
    source: Annotated[
        str | None, typer.Option(help="Only tasks from this source (humaneval, seeds, ...).")
    ] = None,
    kind: Annotated[str, typer.Option(help="Task kind (only codegen has tests to add to).")] = (
        "codegen"
    ),
    per_task: Annotated[
        int, typer.Option("--per-task", help="At most this many new tests a task.", min=1)
    ] = 8,
    limit: Annotated[int | None, typer.Option(help="At most this many tasks.", min=1)] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Also ask this model for edge-case arguments ('bundled', a directory, "
            "a .gguf file, a Hub id); expected values stay the reference's."
        ),
    ] = None,
    backend: Annotated[
        str, typer.Option(help="Engine for --model: auto, vllm, transformers, llama-cpp, openai.")
    ] = "auto",
    workers: Annotated[int, typer.Option(help="Sandboxed verifier workers.", min=1)] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Add tests that fail the reference's mutants and degenerate answers the task's own
    tests let through; report per source how many tasks got tests and the mutation score
    before and after."""
    from pipelines.bank import _fail, _open
    from pipelines.progress import Progress
    from selfplay.strengthen.bank import strengthen_bank
    from selfplay.verifier import IsolationUnavailable
    from selfplay.verifier.factory import make_verifier

    if kind != "codegen":
        raise _fail(f"only codegen tasks have tests to strengthen, not {kind} ones.")
    with _open(bank) as store:
        # HumanEval look-alikes too: strengthening an evaluation set is what EvalPlus did.
        tasks = list(store.tasks(kind="codegen", source=source, limit=limit,
                                 include_contaminated=True))  # fmt: skip
        if not tasks:
            where = f" from source '{source}'" if source else ""
            raise _fail(f"the bank has no codegen task{where} to strengthen.")
        bar = Progress()
        try:
            with make_verifier(workers) as verifier, bar:
                written = _edge_cases(tasks, model, backend, bar) if model else None
                reports = strengthen_bank(
                    store, verifier, tasks, per_task=per_task, written=written, model=model,
                    progress=lambda done, total: bar.update("strengthen", done, total),
                )  # fmt: skip
        except IsolationUnavailable as e:
            raise _fail(str(e)) from None
    if as_json:
        typer.echo(json.dumps({s: r.to_dict() for s, r in reports.items()}, indent=2))
        return
    from rich.table import Table

    from pipelines.console import stdout

    table = Table("source", "tasks", "got tests", "tests added", "mutants",
                  "score before", "score after")  # fmt: skip
    for name, r in sorted(reports.items()):
        d = r.to_dict()

        def fmt(x):
            return "-" if x is None else f"{x:.2f}"

        table.add_row(name, str(r.tasks), str(r.strengthened), str(r.tests_added),
                      str(r.mutants), fmt(d["score_before"]), fmt(d["score_after"]))  # fmt: skip
    stdout.print(table)
    reasons = sum((r.reasons for r in reports.values()), start=Counter())
    if reasons:
        stdout.print(
            f"{plural(sum(reasons.values()), 'task')} got no new test: "
            + ", ".join(f"{k} {n}" for k, n in reasons.most_common())
        )
    stdout.print("Rewards, exports and solver attempts now grade on the added tests too; "
                 "`selfplay eval bank` reports pass@1 on both.")  # fmt: skip


def _edge_cases(tasks, model: str, backend: str, bar) -> dict[str, list[str]]:
    """The model's edge-case arguments per task; a model that cannot load is one sentence."""
    from pipelines.bank import _fail
    from selfplay.backends import BackendError
    from selfplay.config import ModelConfig, RunConfig
    from selfplay.engine.build import make_run_backend
    from selfplay.strengthen.edge_cases import edge_cases

    try:
        # As `selfplay eval` builds it: the backends' factory names a bad engine or model.
        config = ModelConfig.model_construct(spec=model, backend=backend)
        engine = make_run_backend(RunConfig.model_construct(model=config))
        return edge_cases(tasks, engine,
                          progress=lambda done, total: bar.update("edge cases", done, total))  # fmt: skip
    except BackendError as e:
        raise _fail(str(e)) from None
