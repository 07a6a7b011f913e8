"""`selfplay export`: a task bank -> an RL-ready dataset directory (+ optional Hub push)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from pipelines.common import BankOption, described, failure, plural
from selfplay.export import FORMATS
from selfplay.export.select import ExportOptions

DEFAULTS = ExportOptions()


def _described(field: str, *names: str, then: str = "") -> Any:
    """The option for an `ExportOptions` field, described by that field."""
    return described(ExportOptions, field, *names, then=then, config=False)


def _fail(message: str | Exception) -> typer.Exit:
    return failure("export", message)


# --format lists the formats registered when this module is imported (`selfplay.export.register`);
# a plain string rather than a choice, so an unknown one is refused by export_bank in one
# sentence that names the known ones.
def export(
    format_: Annotated[
        str, typer.Option("--format", help=f"One of: {', '.join(FORMATS)}.", show_default=False)
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory to write (created).")],
    bank: BankOption = None,
    split: Annotated[str, _described("split")] = DEFAULTS.split,
    test_fraction: Annotated[float, _described("test_fraction")] = DEFAULTS.test_fraction,
    seed: Annotated[int, _described("seed")] = DEFAULTS.seed,
    split_by: Annotated[str, _described("split_by")] = DEFAULTS.split_by,
    kind: Annotated[list[str] | None, _described("kinds", then="repeatable")] = None,
    source: Annotated[list[str] | None, _described("sources", then="repeatable")] = None,
    min_solve_rate: Annotated[float | None, _described("min_solve_rate")] = None,
    max_solve_rate: Annotated[float | None, _described("max_solve_rate")] = None,
    include_contaminated: Annotated[
        bool, _described("include_contaminated")
    ] = DEFAULTS.include_contaminated,
    max_pairs_per_task: Annotated[
        int, _described("max_pairs_per_task")
    ] = DEFAULTS.max_pairs_per_task,
    reward: Annotated[str, _described("reward")] = DEFAULTS.reward,
    license_: Annotated[str, _described("license", "--license")] = DEFAULTS.license,
    source_license: Annotated[
        list[str] | None,
        _described("source_licenses", then="SOURCE=LICENSE, repeatable"),
    ] = None,
    push_to_hub: Annotated[
        str | None, typer.Option("--push-to-hub", help="Hub dataset repo id to upload to.")
    ] = None,
    private: Annotated[bool, typer.Option(help="Create the Hub repo as private.")] = False,
    force: Annotated[
        bool,
        typer.Option(
            help="Export into --out even if it holds another format's export or other files "
            "(the export's own files are replaced; other files stay)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Export the bank's tasks as a dataset for verl, TRL, OpenRLHF, SFT or DPO, with a card."""
    from pydantic import ValidationError

    from selfplay.export import ExportError, export_bank
    from task_bank.store import default_bank_path

    pairs = [item.partition("=") for item in source_license or []]
    if any(not name or not sep or not lic for name, sep, lic in pairs):
        raise _fail("--source-license takes SOURCE=LICENSE, for example humaneval=mit.")
    try:
        options = ExportOptions(
            split=split,
            test_fraction=test_fraction,
            seed=seed,
            split_by=split_by,
            kinds=kind or [],
            sources=source or [],
            min_solve_rate=min_solve_rate,
            max_solve_rate=max_solve_rate,
            include_contaminated=include_contaminated,
            max_pairs_per_task=max_pairs_per_task,
            reward=reward,
            license=license_,
            source_licenses={name: lic for name, _, lic in pairs},
        )
    except ValidationError as e:
        err = e.errors()[0]
        where = f"--{str(err['loc'][0]).replace('_', '-')}" if err["loc"] else "options"
        message = str(err["msg"]).removeprefix("Value error, ")
        raise _fail(f"invalid {where}: {message}.") from None
    try:
        # The card's snippets load the Hub repository when the export is pushed there.
        report = export_bank(bank or default_bank_path(), format_, out, options, push_to_hub,
                             force=force)  # fmt: skip
    except ExportError as e:
        raise _fail(e) from None
    except OSError as e:
        raise _fail(f"cannot write {out} ({e.strerror or e}).") from None
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        _print_report(report)
    if push_to_hub:
        from selfplay.export.hub import HubError, push

        try:
            url = push(out, push_to_hub, private=private)
        except HubError as e:
            raise _fail(e) from None
        typer.echo(f"pushed to {url}", err=True)


def _print_report(report) -> None:
    from rich.table import Table

    from pipelines.console import stdout

    table = Table(title=f"{report.format}: {plural(report.tasks, 'task')}")
    table.add_column("split")
    table.add_column("rows", justify="right")
    for split, rows in sorted(report.rows.items()):
        table.add_row(split, str(rows))
    stdout.print(table)
    if report.excluded:
        left = ", ".join(f"{k}: {v}" for k, v in sorted(report.excluded.items()))
        stdout.print(f"left out: {left}")
    stdout.print(f"wrote {', '.join(report.files)} to {report.out}")
