"""`selfplay models`: the models selfplay knows by name, and where a model's files are.

`path` is what a trainer outside selfplay needs (TRL, verl, OpenRLHF load a directory or a
Hub id, not a GGUF file in a pip package): `MODEL=$(selfplay models path bundled)`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipelines.common import failure, group

app = group("models", "The models selfplay knows by name, and the directory of any model.")


@app.command()
def path(
    spec: Annotated[
        str,
        typer.Argument(help="Any --model spec: an alias, a .gguf file, a directory or a Hub id."),
    ] = "bundled",  # fmt: skip
) -> None:
    """Print what `from_pretrained` loads for SPEC: a directory (a GGUF model is converted
    once, into selfplay's cache) or a Hub id; nothing else on stdout, so it nests in `$(...)`."""
    from selfplay.backends.base import BackendError
    from selfplay.backends.models import MARKER, converted_dir, local_model_dir, resolve_model

    try:
        source = resolve_model(spec)
        if source.kind in ("packaged", "gguf") and not (converted_dir(source) / MARKER).is_file():
            typer.echo(f"converting {spec} to a model directory (once)...", err=True)
        typer.echo(local_model_dir(source))
    except BackendError as e:
        raise failure("models", e) from None


@app.command(name="list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines on stdout.")] = False,
) -> None:
    """The names `--model` takes besides paths and Hub ids, and whether each is installed."""
    from selfplay.backends.base import BackendError
    from selfplay.backends.models import ALIASES, PACKAGED, converted_dir, resolve_model

    rows = []
    for alias, name in sorted(ALIASES.items()):
        packaged = PACKAGED[name]
        try:
            source = resolve_model(alias)
            installed, directory = True, converted_dir(source)
            converted = str(directory) if directory.is_dir() else None
        except BackendError:
            installed, converted = False, None
        rows.append({"name": alias, "model": packaged.title, "installed": installed,
                     "install": packaged.install, "directory": converted})  # fmt: skip
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row))
        return
    from rich.table import Table

    from pipelines.console import stdout

    table = Table(pad_edge=False)
    for column in ("name", "model", "installed"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row["name"], row["model"], "yes" if row["installed"] else row["install"])
    stdout.print(table)
