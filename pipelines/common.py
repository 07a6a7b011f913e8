"""What every command group shares: its Typer app, the --bank option, one-sentence failures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

BankOption = Annotated[
    Path | None,
    typer.Option("--bank", help="Bank file (default: $SELFPLAY_BANK or selfplay.db)."),
]


def group(name: str, help: str) -> typer.Typer:
    """A command group; tracebacks are off because every error is reported as one sentence."""
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )


def failure(command: str, message: str | Exception) -> typer.Exit:
    """Print `selfplay COMMAND: message` on stderr; raise the result to exit with code 2.

    An exception (a `BackendError`, `BankError`, ... whose text is one sentence) is printed
    as that sentence, ending in exactly one period.
    """
    if isinstance(message, Exception):
        message = f"{str(message).rstrip('.')}."
    typer.echo(f"selfplay {command}: {message}", err=True)
    return typer.Exit(2)
