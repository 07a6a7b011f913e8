"""An `Exporter` owns one export format: its rows, its files, its options, the reward file it
ships and its recipes on the dataset card.

A format is one module: an `Exporter` subclass with a `name`, `rows` and `recipes`, passed to
`register`. From then on `export_bank`, the card and `selfplay export --format NAME` know it,
and nothing else needs an edit. The registry lives in this process, as the task kinds' does.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
from abc import ABC, abstractmethod
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar, Self

from selfplay.export.select import ExportOptions, Item, Selection
from task_bank.store import Bank

# The name a shipped reward module gets next to the data: trainers that load a reward from a
# file (OpenRLHF's --reward.remote_url) are pointed at it by the card.
REWARD_FILE = "reward_func.py"
SUFFIXES = (".parquet", ".jsonl")
# A name the card's first line can carry and a re-export can read back (`--format NAME`).
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class Exporter(ABC):
    """Writes a selection in one format; `write` returns rows per split."""

    name: ClassVar[str]
    suffix: ClassVar[str] = ".parquet"
    description: ClassVar[str] = ""
    # A module copied next to the data as REWARD_FILE, for trainers that load their reward
    # from a file. A module name, not a path: the import system finds it wherever selfplay
    # (or the exporter's own package) is installed.
    reward_module: ClassVar[str | None] = None

    def __init__(self) -> None:
        self.dropped: Counter = Counter()
        self.task_ids: set[str] = set()  # the tasks that have a row in the files written

    @classmethod
    def from_options(cls, options: ExportOptions) -> Self:
        """The exporter for an export made with `options` (a format reads the ones it takes)."""
        return cls()

    def row_task(self, row: dict[str, Any]) -> str:
        return row["task_id"]

    @abstractmethod
    def rows(self, items: list[Item], bank: Bank) -> list[dict[str, Any]]: ...

    @abstractmethod
    def recipes(self, counts: dict[str, int], repo_id: str | None) -> list[str]:
        """The card's ways to train on this export (`counts`: rows per split), each a short
        paragraph and a fenced block. `repo_id`: the Hub repository the export is pushed to,
        which the snippets then load; `selfplay.export.recipes` holds the shared pieces."""

    def no_rows(self) -> str:
        """Why an export has no rows, in one sentence: what `dropped` counted."""
        reasons = ", ".join(f"{k}: {v}" for k, v in self.dropped.items()) or "none"
        return f"the {self.name} format has no rows for the selected tasks ({reasons})"

    def write(self, selection: Selection, bank: Bank, out: Path) -> dict[str, int]:
        out.mkdir(parents=True, exist_ok=True)
        splits = {
            split: rows
            for split, items in sorted(selection.splits().items())
            if (rows := self.rows(items, bank))
        }
        self.task_ids = {self.row_task(r) for rows in splits.values() for r in rows}
        schema = None
        if self.suffix == ".parquet" and splits:
            import pyarrow as pa

            # One schema for all splits: a column that is null throughout one split (say,
            # solve_rate where nothing was attempted) must not become a null-typed column.
            schema = pa.Table.from_pylist([r for rows in splits.values() for r in rows]).schema
        for split, rows in splits.items():
            self._write_file(rows, out / f"{split}{self.suffix}", schema)
        if self.reward_module is not None:
            (out / REWARD_FILE).write_bytes(module_source(self.reward_module))
        return {split: len(rows) for split, rows in splits.items()}

    def _write_file(self, rows: list[dict[str, Any]], path: Path, schema: Any) -> None:
        if self.suffix == ".jsonl":
            with open(path, "w", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def module_source(name: str) -> bytes:
    """The source file of the module called `name`, as its loader reads it (a plain file, a
    wheel unpacked anywhere, a zip): the module itself is not run."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:  # a package on the way is missing
        spec = None
    if spec is None or spec.origin is None or spec.loader is None:
        raise ValueError(f"there is no module {name!r} to ship as a reward file")
    return spec.loader.get_data(spec.origin)  # type: ignore[attr-defined]


EXPORTERS: dict[str, type[Exporter]] = {}


def register(exporter: type[Exporter]) -> type[Exporter]:
    """Add a format (usable as a class decorator); ValueError in one sentence if its name is
    taken or malformed, a method is missing, or its reward module cannot be found."""
    name = getattr(exporter, "name", "")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"{exporter.__name__}: a format's name is lower-case letters, digits and _, "
            f"not {name!r}"
        )
    if name in EXPORTERS:
        taken = EXPORTERS[name]
        raise ValueError(
            f"a format named {name!r} is already registered ({taken.__module__}.{taken.__name__})"
        )
    if inspect.isabstract(exporter):
        missing = ", ".join(sorted(exporter.__abstractmethods__))
        raise ValueError(f"the {name} exporter does not implement {missing}")
    if exporter.suffix not in SUFFIXES:
        raise ValueError(f"the {name} exporter writes {exporter.suffix!r}, not one of {SUFFIXES}")
    if exporter.reward_module is not None:
        module_source(exporter.reward_module)
    EXPORTERS[name] = exporter
    return exporter


def unregister(name: str) -> None:
    """Remove the format called `name` (a test's, say); nothing if there is none."""
    EXPORTERS.pop(name, None)
