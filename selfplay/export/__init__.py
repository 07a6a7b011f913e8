"""Exports: a task bank -> RL-ready datasets (verl, TRL, OpenRLHF, SFT, DPO) + a dataset card.

`export_bank(bank_path, fmt, out, options)` selects tasks (`select`), writes one file per
split with the format's `Exporter`, and writes `README.md` (`card`). Nothing in the bank is
changed. The reward that grades the exported ground truth is `selfplay.rewards`. A format is
an `Exporter` subclass passed to `register` (`selfplay.export.exporter`); `FORMATS` lists the
registered ones.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfplay.export import formats  # noqa: F401  (registers the built-in formats)
from selfplay.export.exporter import EXPORTERS, REWARD_FILE, Exporter, register, unregister
from selfplay.export.select import ExportOptions, Selection, select

# A live view: a format registered after this module was imported is listed too.
FORMATS = EXPORTERS.keys()


class ExportError(ValueError):
    """An export that cannot be made; the message is one sentence."""


@dataclass(slots=True)
class ExportReport:
    format: str
    out: str
    tasks: int
    rows: dict[str, int]
    files: list[str]
    excluded: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "out": self.out,
            "tasks": self.tasks,
            "rows": self.rows,
            "files": self.files,
            "excluded": self.excluded,
        }


CARD_MARK = "selfplay export --format"
_OURS = (".parquet", ".jsonl")


def _check_target(out: Path, fmt: str, force: bool) -> None:
    """`out` must be absent, empty, or an earlier export of the same format (whose files will
    be replaced); anything else needs `force`, and the refusal says so."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ExportError(f"{out} exists and is not a directory")
    if not any(out.iterdir()) or force:
        return
    card = out / "README.md"
    text = card.read_text(encoding="utf-8", errors="replace") if card.is_file() else ""
    earlier = re.search(re.escape(CARD_MARK) + r" (\w+)", text)
    if earlier is None:
        raise ExportError(
            f"{out} is not empty and holds no earlier selfplay export; choose a new or empty "
            "--out, or pass --force to export into it (its other files stay)"
        )
    if earlier.group(1) != fmt:
        raise ExportError(
            f"{out} holds a {earlier.group(1)} export; pass --force to replace it with this "
            f"{fmt} export, or choose another --out"
        )


OWN_FILES = (REWARD_FILE, "README.md", "LICENSE")


def _ours(path: Path) -> bool:
    return path.is_file() and (path.suffix in _OURS or path.name in OWN_FILES)


def _install(staging: Path, out: Path) -> None:
    """Move a finished export into `out`: stale files of an earlier export go (no old split
    survives into the card or a push), other files stay."""
    out.mkdir(parents=True, exist_ok=True)
    new = {p.name for p in staging.iterdir()}
    for old in out.iterdir():
        if _ours(old) and old.name not in new:
            old.unlink()
    for path in staging.iterdir():
        os.replace(path, out / path.name)


def make_exporter(fmt: str, options: ExportOptions) -> Exporter:
    if fmt not in EXPORTERS:
        close = difflib.get_close_matches(fmt.lower(), list(FORMATS), n=1, cutoff=0.6)
        hint = f"; '{close[0]}' is the closest" if close else ""
        raise ExportError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)}{hint})")
    return EXPORTERS[fmt].from_options(options)


def export_bank(
    bank_path: str | Path,
    fmt: str,
    out: str | Path,
    options: ExportOptions | None = None,
    repo_id: str | None = None,
    force: bool = False,
) -> ExportReport:
    """Write `fmt` files and README.md for the bank's tasks into `out`; `repo_id`: the Hub
    repository the export will be pushed to, which the card's snippets then load. `out` may
    hold an earlier export of the same format; another one, or other files, need `force`."""
    from selfplay.export.card import render
    from selfplay.export.licenses import LICENSE_FILE, license_file, licenses
    from task_bank.stats import summary
    from task_bank.store import Bank, BankError

    options = options or ExportOptions()
    exporter = make_exporter(fmt, options)
    out = Path(out)
    _check_target(out, fmt, force)
    # Everything is written to a staging directory beside `out` first: an export that fails
    # leaves nothing behind, and an earlier export in `out` is untouched.
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        try:
            with Bank(bank_path, create=False) as bank:
                selection: Selection = select(bank, options)
                if not selection.items:
                    raise ExportError("no task in the bank matches the export filters")
                counts = exporter.write(selection, bank, staging)
                bank_summary = summary(bank)
        except BankError as e:
            raise ExportError(str(e)) from None
        if not counts:
            raise ExportError(exporter.no_rows())
        # The card describes the tasks that have rows (a DPO export leaves out tasks without
        # a pair), not every task selected.
        exported = Selection(
            [i for i in selection.items if i.task.id in exporter.task_ids], selection.excluded
        )
        card = render(
            exporter, exported, counts, bank_summary, options.model_dump(), staging, repo_id
        )
        (staging / "README.md").write_text(card, encoding="utf-8")
        by_source = Counter(i.task.source for i in exported.items)
        text = license_file(licenses(by_source, options.model_dump()), by_source)
        if text is not None:
            (staging / LICENSE_FILE).write_text(text, encoding="utf-8")
        files = sorted(p.name for p in staging.iterdir() if p.is_file())
        _install(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    excluded = dict(selection.excluded) | {f"{fmt}_{k}": v for k, v in exporter.dropped.items()}
    return ExportReport(fmt, str(out), len(exported.items), counts, files, excluded)


__all__ = [
    "FORMATS",
    "ExportError",
    "ExportOptions",
    "ExportReport",
    "Exporter",
    "export_bank",
    "register",
    "unregister",
]
