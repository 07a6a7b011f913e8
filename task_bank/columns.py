"""A record's columns in one place: which fields a table stores, and how each is stored.

A table's INSERT (its column list, its placeholders, the row tuple) and its SELECT back
into the record are all read from one `Columns`, so a field added to a record is one
entry here, and a column list can never drift out of order with the tuple written to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _same(value: Any) -> Any:
    return value


def json_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def from_json_or_none(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass(frozen=True, slots=True)
class Columns:
    """The stored fields of a record, each with its encoder (field -> SQLite value) and
    decoder (SQLite value -> field); a field without one is stored as it is."""

    names: tuple[str, ...]
    encode: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    decode: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    @property
    def sql(self) -> str:
        """The column list, for SELECT and INSERT."""
        return ", ".join(self.names)

    def insert(self, table: str, *extra: str) -> str:
        """`INSERT INTO table (columns..., extra...) VALUES (?, ...)`."""
        names = self.names + extra
        return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"

    def row(self, record: Any, **given: Any) -> tuple:
        """The values to store for `record`; `given` replaces a field's value before encoding
        (a time stamp filled in at write time)."""
        return tuple(
            self.encode.get(n, _same)(given[n] if n in given else getattr(record, n))
            for n in self.names
        )

    def fields(self, row: tuple | list) -> dict[str, Any]:
        """A stored row (the columns in order) back as the record's keyword arguments."""
        return {n: self.decode.get(n, _same)(v) for n, v in zip(self.names, row, strict=True)}
