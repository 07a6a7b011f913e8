"""`selfplay bank rejections`: why candidates were turned away, from the bank's own record.

Every rejection is stored with its reason and the admission chain's detail (the input that
raised, the error); this command is the way to read them without SQLite."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipelines.common import BankOption, plural


def rejections(
    bank: BankOption = None,
    round_: Annotated[
        int | None, typer.Option("--round", help="Only this self-play round's proposals.", min=1)
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Only this reason.")] = None,
    limit: Annotated[int, typer.Option(help="Show at most this many.", min=1)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines on stdout.")] = False,
) -> None:
    """Rejected candidates with their reason and detail, newest first; the counts by reason
    come first."""
    from collections import Counter

    from pipelines.bank import _fail, _open

    where = f" in round {round_}" if round_ is not None else ""
    with _open(bank) as store:
        every = store.rejections(round_=round_)
        known = sorted({r["reason"] for r in every})
        if reason is not None and reason not in known:
            raise _fail(
                f"no rejection has reason '{reason}'{where}; the reasons there are: "
                f"{', '.join(known) or 'none'}."
            )
        rows = [r for r in every if reason is None or r["reason"] == reason]
    if as_json:
        for row in rows[:limit]:
            typer.echo(json.dumps(row))
        return
    from rich.markup import escape
    from rich.table import Table

    from pipelines.console import stdout

    if not rows:
        stdout.print(f"no candidate was turned away{where}.")
        return
    counts = Counter(r["reason"] for r in rows)
    stdout.print(
        f"{plural(len(rows), 'rejection')}: "
        + ", ".join(f"{name} {n}" for name, n in counts.most_common())
    )
    shown = rows[:limit]
    title = (
        f"newest {len(shown)} of {len(rows)} (--limit shows more)" if len(rows) > limit else None
    )
    # 80 columns: the item and reason never wrap (they are copied into other commands), the
    # detail wraps, its first lines only (the admission chain's detail can be a traceback).
    table = Table(title=title, pad_edge=False, show_lines=True)
    table.add_column("item", no_wrap=True, overflow="fold", max_width=30)
    table.add_column("reason", no_wrap=True)
    table.add_column("detail", overflow="fold", ratio=1)
    for r in shown:
        detail = "\n".join(r["detail"].strip().splitlines()[:4]) or "-"
        table.add_row(escape(r["item"]), escape(r["reason"]), escape(detail))
    stdout.print(table)
