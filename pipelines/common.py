"""What every command group shares: its Typer app, the --bank option, one-sentence failures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

BankOption = Annotated[
    Path | None,
    typer.Option("--bank", help="Bank file (default: $SELFPLAY_BANK or selfplay.db)."),
]


ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="YAML config; flags override it.")
]
PrintConfigOption = Annotated[
    bool, typer.Option("--print-config", help="Print the default config, documented, and exit.")
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
    as that sentence, ending in exactly one period (none added after a question mark).
    """
    if isinstance(message, Exception):
        text = str(message).rstrip(".")
        message = text if text.endswith(("?", "!")) else f"{text}."
    typer.echo(f"selfplay {command}: {message}", err=True)
    return typer.Exit(2)


RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="Generate and grade on a Ray cluster: its address, or 'local' to start one on "
        "loopback (pip install 'selfplay\\[ray]').",  # \[: not rich markup
    ),
]


ActorsOption = Annotated[
    int,
    typer.Option(
        help="With --ray: verifier actors (0, the default: one per node).",
        min=0,
        show_default=False,
    ),
]
CoresPerActorOption = Annotated[
    int,
    typer.Option(
        help="With --ray: one actor per this many CPUs of each node (0: one per node).",
        min=0,
        show_default=False,
    ),
]
IsolationOption = Annotated[
    str | None,
    typer.Option(
        "--isolation",
        envvar="SELFPLAY_ISOLATION",
        help="'sandbox' (the default: refuse to run if it cannot be set up) or 'none': run "
        "untrusted code WITHOUT a sandbox, recorded in every verdict, attempt and card.",
        show_default=False,
    ),
]


def choose_isolation(mode: str | None, command: str) -> None:
    """Make `mode` the isolation of every verifier this process starts (one sentence and exit
    2 for a value that is not one)."""
    if mode is None:
        return
    if mode not in ("sandbox", "none"):
        raise failure(command, f"--isolation must be 'sandbox' or 'none', got {mode!r}.")
    os.environ["SELFPLAY_ISOLATION"] = mode


GradeOnRayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="Grade on a Ray cluster: its address, or 'local' to start one on loopback "
        "(pip install 'selfplay\\[ray]').",  # \[: not rich markup
    ),
]


@contextmanager
def ray_session(command: str, address: str | None) -> Iterator[None]:
    """Join the Ray cluster at `address` once for the whole command (the backend's engines
    and the verifier's actors then share it), and leave it at the end if this joined it."""
    if not address:
        yield
        return
    from selfplay.verifier.connect import RayUnavailable, connect, import_ray

    try:
        joined = connect(address)
    except RayUnavailable as e:
        raise failure(command, e) from None
    try:
        yield
    finally:
        if joined:
            import_ray().shutdown()


def plural(n: int, noun: str) -> str:
    """`1 task`, `2 tasks`: a summary a user reads should not say "1 tasks"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def field_description(model: type[BaseModel], path: str) -> str:
    """The description of config field `path` (dotted through nested settings: "ei.iterations")."""
    info = None
    for part in path.split("."):
        info = model.model_fields[part]
        model = info.annotation  # a nested settings model, for the next part
    return (info.description if info else None) or path


def described(
    model: type[BaseModel], path: str, *names: str, then: str = "", config: bool = True, **kw: Any
) -> Any:
    """The option for config field `path`, its help that field's description (and `then`),
    so a setting is described once for the flag, the YAML (`--print-config`) and the Python
    API alike; `config` adds where the YAML keeps it."""
    text = field_description(model, path)
    more = "; ".join(([then] if then else []) + ([f"config: {path}"] if config else []))
    if more:  # one pair of brackets: "steps (ei: per iteration; config: max_steps)"
        text = f"{text[:-1]}; {more})" if text.endswith(")") else f"{text} ({more})"
    help_ = f"{text[:1].upper()}{text[1:]}."
    return typer.Option(*names, help=help_, **kw)
