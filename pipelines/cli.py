"""The `selfplay` command line: one thin typer app composed of per-group modules.

Each group lives in its own module and keeps heavy imports (torch, transformers,
datasets, faiss) inside its command functions, so that `selfplay verify` starts fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from selfplay.plugins import PluginError, load_plugins

# Plugins register kinds, schedulers, exporters and methods; the command modules below read
# the registries for their help and choices, so the plugins are imported first.
try:
    load_plugins()
    _plugin_error: PluginError | None = None
except PluginError as e:
    _plugin_error = e

from pipelines import (  # noqa: E402
    bank,
    curriculum,
    evaluate,
    export,
    loop,
    models,
    rejections,
    run,
    serve,
    serve_rewards,
    strengthen,
    train,
    verify,
)
from pipelines.common import IsolationOption, choose_isolation  # noqa: E402

app = typer.Typer(
    name="selfplay",
    help="Grow verified programming tasks at the right difficulty for RL on code models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"selfplay {version('selfplay')}")
        except PackageNotFoundError:  # run from a source tree that was never installed
            typer.echo("selfplay (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    isolation: IsolationOption = None,
) -> None:
    """Grow verified programming tasks at the right difficulty for RL on code models."""
    choose_isolation(isolation, "selfplay")


app.command(name="verify")(verify.verify)
app.command(name="run")(run.run)
app.command(name="train")(train.train)
app.command(name="loop")(loop.loop)
bank.app.command(name="rejections")(rejections.rejections)
bank.app.command(name="strengthen")(strengthen.strengthen)
app.add_typer(bank.app, name="bank")
app.add_typer(curriculum.app, name="curriculum")
app.add_typer(models.app, name="models")
app.command(name="export")(export.export)
app.add_typer(evaluate.app, name="eval")
app.command(name="serve")(serve.serve)
app.command(name="serve-rewards")(serve_rewards.serve_rewards)


def main() -> None:
    if _plugin_error is not None:
        typer.echo(f"selfplay: {_plugin_error}", err=True)
        raise SystemExit(2)
    app()


if __name__ == "__main__":
    main()
