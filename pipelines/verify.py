"""`selfplay verify`: grade a JSONL file of programs and tests in the sandbox."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, TextIO

import typer

from pipelines.common import (
    ActorsOption,
    CoresPerActorOption,
    GradeOnRayOption,
    IsolationOption,
    choose_isolation,
    failure,
    plural,
)
from selfplay.verifier import InvalidRow, IsolationUnavailable, parse_row
from selfplay.verifier.connect import RayUnavailable
from selfplay.verifier.factory import make_verifier
from selfplay.verifier.records import invalid

PROGRESS_MIN_ROWS = 200


def _rows(stream: TextIO) -> Iterator:
    for n, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            yield invalid(f"line-{n}", f"line {n}: not valid JSON ({e})")
            continue
        try:
            yield parse_row(obj)
        except InvalidRow as e:
            row_id = obj.get("id") if isinstance(obj, dict) else None
            yield invalid(row_id if isinstance(row_id, str) else f"line-{n}", f"line {n}: {e}")


def _fail(message: str | Exception) -> typer.Exit:
    return failure("verify", message)


def verify(
    input: Annotated[str, typer.Argument(help="JSONL file of rows, or - for stdin.")],
    output: Annotated[str, typer.Option("-o", "--output", help="JSONL verdicts, or - for stdout.")],
    timeout: Annotated[
        float, typer.Option(help="Default wall-clock limit per row, seconds.", min=0.01)
    ] = 10.0,
    memory_mb: Annotated[
        int, typer.Option(help="Default memory limit per row, MiB.", min=16)
    ] = 1024,
    workers: Annotated[
        int,
        typer.Option(
            help="Sandboxed worker processes (with --ray: per actor; 0, the default: CPU count).",
            min=0,
            show_default=False,
        ),
    ] = 0,
    isolation: IsolationOption = None,
    require_isolation: Annotated[
        bool, typer.Option(hidden=True, help="The default now: kept so old scripts still run.")
    ] = False,
    ray: GradeOnRayOption = None,
    actors: ActorsOption = 0,
    cores_per_actor: CoresPerActorOption = 0,
) -> None:
    """Grade programs against their tests in the sandbox; one verdict per input row."""
    choose_isolation(isolation, "verify")
    if require_isolation and isolation == "none":
        raise _fail("--require-isolation and --isolation none contradict each other.")
    try:
        src = sys.stdin if input == "-" else open(input, encoding="utf-8")
    except OSError as e:
        raise _fail(f"cannot read {input}: {e.strerror}.") from None
    try:
        dst = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")
    except OSError as e:
        raise _fail(f"cannot write {output}: {e.strerror}.") from None
    total = None
    if input != "-":
        try:
            total = sum(1 for line in Path(input).open(encoding="utf-8") if line.strip())
        except (OSError, UnicodeDecodeError):
            total = None
    counts: Counter[str] = Counter()
    start = time.perf_counter()
    verifier = make_verifier(
        workers or None, timeout, memory_mb, ray=ray,
        **({"actors": actors or None, "cores_per_actor": cores_per_actor or None} if ray else {}),
    )  # fmt: skip
    try:
        with verifier as v:
            with _progress(total) as advance:
                for verdict in v.grade_iter(_rows(src)):
                    dst.write(json.dumps(verdict.to_dict()) + "\n")
                    counts[verdict.status] += 1
                    advance()
    except (IsolationUnavailable, RayUnavailable) as e:
        raise _fail(e) from None
    except UnicodeDecodeError:
        raise _fail(f"{input} is not UTF-8 text.") from None
    finally:
        if dst is not sys.stdout:
            dst.close()
        if src is not sys.stdin:
            src.close()
    _summary(counts, time.perf_counter() - start, getattr(verifier, "retried", 0))
    if counts["invalid"]:
        # Every verdict is written; the exit code still tells a script that rows were bad.
        n = sum(counts.values())
        typer.echo(f"selfplay verify: {counts['invalid']} of {plural(n, 'row')} were invalid "
                   "(their detail names the line); exit code 1.", err=True)  # fmt: skip
        raise typer.Exit(1)


class _progress:
    """Progress on stderr (`pipelines.progress`), only for long inputs."""

    def __init__(self, total: int | None):
        self.total = total
        self.bar = None
        self.done = 0

    def __enter__(self):
        if self.total is None or self.total < PROGRESS_MIN_ROWS:
            return lambda: None
        from pipelines.progress import Progress

        self.bar = Progress().__enter__()

        def advance() -> None:
            self.done += 1
            self.bar.update("verifying", self.done, self.total)

        return advance

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _summary(counts: Counter, elapsed: float, retried: int = 0) -> None:
    from rich.table import Table

    from pipelines.console import stderr

    n = sum(counts.values())
    rate = n / max(elapsed, 1e-9)
    # A line of its own: as the title of a two-column table it wrapped at the table's width.
    stderr.print(
        f"{plural(n, 'row')} in {elapsed:.2f} s ({rate:.{0 if rate >= 10 else 1}f} rows/s)",
        highlight=False,
    )
    table = Table()
    table.add_column("status")
    table.add_column("rows", justify="right")
    for status in ("passed", "failed", "error", "timeout", "memory", "invalid"):
        if counts[status]:
            table.add_row(status, str(counts[status]))
    stderr.print(table)
    if retried:
        stderr.print(f"{plural(retried, 'row')} sent again after a Ray actor died")
