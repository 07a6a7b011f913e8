"""The tasks table family: tasks, their vectors and the rejections of candidates.

`Bank` mixes these methods in (it provides `conn` and `_write`). Admission
(`selfplay.admission`) decides what gets here and computes the keys; these methods only
store and read.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from selfplay.task import Task
from task_bank.columns import Columns, from_json_or_none, json_or_none

if TYPE_CHECKING:
    import numpy as np


@dataclass(slots=True)
class Rejection:
    """A candidate that was not admitted, and why (`item` identifies it within `source`)."""

    source: str
    item: str
    reason: str
    detail: str = ""


_JSON = ("tests", "examples", "tags", "metadata", "parent_ids")
TASK = Columns(
    names=tuple(
        (
            "id kind prompt program entry_point tests examples tags metadata source "
            "parent_ids proposer round_id created_at verified_at deterministic contaminated "
            "strengthened"
        ).split()
    ),
    encode={
        **dict.fromkeys(_JSON, json.dumps),
        "deterministic": lambda d: None if d is None else int(d),
        "strengthened": json_or_none,
    },
    decode={
        **dict.fromkeys(_JSON, json.loads),
        "deterministic": lambda d: None if d is None else bool(d),
        "strengthened": from_json_or_none,
    },
)
_TASK_COLUMNS = TASK.sql


def _task_from_row(r: tuple) -> Task:
    return Task(**TASK.fields(r))


class TaskTables:
    """Mixed into `task_bank.store.Bank`."""

    conn: sqlite3.Connection

    # ---- tasks ------------------------------------------------------------------------

    def add_tasks(
        self,
        tasks: list[Task],
        *,
        vectors: np.ndarray | None = None,
        ast_hashes: list[str],
        dedup_keys: list[str],
        content_hashes: list[str] | None = None,
        rejections: Iterable[Rejection] = (),
    ) -> list[int | None]:
        """Insert tasks (with their vectors) and rejections in one transaction.

        `content_hashes` are the candidates' hashes as they arrived (before admission
        filled in example outputs), which is what a re-import is compared against.

        `ast_hashes` and `dedup_keys` are admission's (`selfplay.admission.dedup.keys`):
        the bank stores them and keeps `dedup_key` unique, it does not compute them.

        Returns each task's integer key, or None where the id or the exact-duplicate
        key was already taken (a concurrent writer may have won the race).
        """
        now = time.time()
        rows = [
            TASK.row(t, created_at=t.created_at or now)
            + (
                content_hashes[i] if content_hashes else t.content_hash(),
                ast_hashes[i],
                dedup_keys[i],
            )
            for i, t in enumerate(tasks)
        ]
        with self._write() as c:
            # Keys grow and nobody else writes inside BEGIN IMMEDIATE, so the rows above
            # the old maximum are exactly the ones this call inserted.
            before = c.execute("SELECT COALESCE(MAX(key), 0) FROM tasks").fetchone()[0]
            c.executemany(
                TASK.insert("tasks", "content_hash", "ast_hash", "dedup_key")
                + " ON CONFLICT DO NOTHING",
                rows,
            )
            inserted = dict(c.execute("SELECT id, key FROM tasks WHERE key > ?", (before,)))
            keys: list[int | None] = [inserted.get(t.id) for t in tasks]
            if vectors is not None:
                c.executemany(
                    "INSERT INTO vectors VALUES (?, ?)",
                    [
                        (key, vectors[i].astype("float16").tobytes())
                        for i, key in enumerate(keys)
                        if key is not None
                    ],
                )
            # A task admitted on a later try is no longer a rejection.
            c.executemany(
                "DELETE FROM rejections WHERE source = ? AND item = ?",
                [(t.source, t.id) for t, key in zip(tasks, keys, strict=True) if key is not None],
            )
            self._insert_rejections(c, rejections, now)
        return keys

    def get(self, task_id: str) -> Task | None:
        row = self.conn.execute(
            f"SELECT {_TASK_COLUMNS} FROM tasks WHERE id = ?", (task_id,)
        ).fetchone()
        return _task_from_row(row) if row else None

    def tasks(
        self,
        *,
        kind: str | None = None,
        source: str | None = None,
        tag: str | None = None,
        include_contaminated: bool = False,
        limit: int | None = None,
    ) -> Iterator[Task]:
        """Tasks in insertion order. Contaminated tasks are left out unless asked for,
        so exports built on this never ship benchmark look-alikes by accident."""
        where, args = self.task_filter(kind, source, tag, include_contaminated)
        sql = f"SELECT {_TASK_COLUMNS} FROM tasks {where} ORDER BY key"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for row in self.conn.execute(sql, args):
            yield _task_from_row(row)

    @staticmethod
    def task_filter(
        kind: str | None, source: str | None, tag: str | None, include_contaminated: bool
    ) -> tuple[str, list[Any]]:
        """A WHERE clause over the tasks table and its arguments."""
        clauses, args = [], []
        if kind:
            clauses.append("kind = ?")
            args.append(kind)
        if source:
            clauses.append("source = ?")
            args.append(source)
        if tag:
            clauses.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)")
            args.append(tag)
        if not include_contaminated:
            clauses.append("contaminated IS NULL")
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    def set_strengthened(self, records: dict[str, dict[str, Any]]) -> int:
        """Record tests added to tasks after admission ({task id: {"tests", "provenance"}});
        a task's own tests are never touched. The number of tasks updated."""
        with self._write() as c:
            before = c.total_changes
            c.executemany(
                "UPDATE tasks SET strengthened = ? WHERE id = ?",
                [(json.dumps(r), task_id) for task_id, r in records.items()],
            )
            return c.total_changes - before

    def tasks_by_key(self, keys: Iterable[int]) -> dict[int, Task]:
        keys = list(keys)
        out: dict[int, Task] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT key, {_TASK_COLUMNS} FROM tasks WHERE key IN ({marks})", chunk
            ):
                out[row[0]] = _task_from_row(row[1:])
        return out

    def _lookup(self, column: str, values: Iterable[str], result: str) -> dict[str, Any]:
        values = list(dict.fromkeys(values))
        out: dict[str, Any] = {}
        for start in range(0, len(values), 500):
            chunk = values[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {column}, {result} FROM tasks WHERE {column} IN ({marks})"
            out.update(self.conn.execute(sql, chunk).fetchall())
        return out

    def content_hashes(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> content hash, for the ids already in the bank."""
        return self._lookup("id", ids, "content_hash")

    def ids_by_dedup_key(self, keys: Iterable[str]) -> dict[str, str]:
        return self._lookup("dedup_key", keys, "id")

    def ids_by_ast_hash(self, hashes: Iterable[str]) -> dict[str, str]:
        return self._lookup("ast_hash", hashes, "id")

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """All stored vectors: (keys int64, float32 array)."""
        import numpy as np

        rows = self.conn.execute(
            "SELECT task_key, vector FROM vectors ORDER BY task_key"
        ).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[1] for r in rows)
        dim = len(rows[0][1]) // 2
        return keys, np.frombuffer(blob, dtype=np.float16).reshape(-1, dim).astype(np.float32)

    # ---- rejections -------------------------------------------------------------------

    @staticmethod
    def _insert_rejections(
        c: sqlite3.Connection, rejections: Iterable[Rejection], now: float
    ) -> None:
        c.executemany(
            "INSERT OR REPLACE INTO rejections VALUES (?, ?, ?, ?, ?)",
            [(r.source, r.item, r.reason, r.detail[:2000], now) for r in rejections],
        )

    def add_rejections(self, rejections: Iterable[Rejection]) -> None:
        """Record rejections; recording the same (source, item, reason) twice counts once."""
        with self._write() as c:
            self._insert_rejections(c, rejections, time.time())

    def rejection_counts(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT reason, COUNT(*) FROM rejections GROUP BY reason ORDER BY COUNT(*) DESC"
        )
        return dict(rows.fetchall())

    def rejections(self, *, round_: int | None = None) -> list[dict[str, Any]]:
        """Rejected candidates, newest first: source, item, reason, detail, created_at.
        `round_` keeps a self-play round's proposals (items `selfplay-r<N>-...`)."""
        sql, args = "SELECT source, item, reason, detail, created_at FROM rejections", []
        if round_ is not None:
            # The hyphen after the number keeps round 1 from matching round 10.
            sql += " WHERE item LIKE ?"
            args.append(f"selfplay-r{round_}-%")
        sql += " ORDER BY created_at DESC, item"
        cols = ("source", "item", "reason", "detail", "created_at")
        return [dict(zip(cols, row, strict=True)) for row in self.conn.execute(sql, args)]

    def task_ids_by_key(self) -> dict[int, str]:
        """Every task's integer key -> id (the vector index and the graph tables use keys)."""
        return dict(self.conn.execute("SELECT key, id FROM tasks").fetchall())
