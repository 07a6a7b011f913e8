"""The task bank: one SQLite file (WAL, foreign keys, versioned schema).

Every write is one transaction (`BEGIN IMMEDIATE ... COMMIT`), so a process killed at
any point leaves a consistent bank holding everything committed before the kill.
The bank stores what it is given; admission (verification, dedup, decontamination)
happens in `selfplay.admission` before tasks get here.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfplay.task import Task
from task_bank.curriculum_tables import CurriculumTables
from task_bank.migrations import MIGRATIONS, SCHEMA_VERSION
from task_bank.training import TrainingRecords

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

DEFAULT_BANK = "selfplay.db"


def default_bank_path() -> Path:
    return Path(os.environ.get("SELFPLAY_BANK") or DEFAULT_BANK)


class BankError(RuntimeError):
    """A bank that cannot be opened or used; the message is one sentence."""


@dataclass(slots=True)
class Attempt:
    """One solver attempt at a task and the verifier's verdict on it."""

    task_id: str
    solver: str
    answer: str
    status: str
    passed: bool
    reward: float | None = None
    round_id: int | None = None
    step: int = 0
    created_at: float | None = None
    # Reward-hacking signals the verifier observed (names from selfplay.verifier.SIGNALS).
    signals: list[str] = field(default_factory=list)
    # "sandbox", or "none" where the attempt's code ran without one (explicitly asked for).
    isolation: str = "sandbox"


@dataclass(slots=True)
class Rejection:
    """A candidate that was not admitted, and why (`item` identifies it within `source`)."""

    source: str
    item: str
    reason: str
    detail: str = ""


_TASK_COLUMNS = (
    "id, kind, prompt, program, entry_point, tests, examples, tags, metadata, source, "
    "parent_ids, proposer, round_id, created_at, verified_at, deterministic, contaminated"
)


def _task_from_row(r: tuple) -> Task:
    return Task(
        id=r[0],
        kind=r[1],
        prompt=r[2],
        program=r[3],
        entry_point=r[4],
        tests=json.loads(r[5]),
        examples=json.loads(r[6]),
        tags=json.loads(r[7]),
        metadata=json.loads(r[8]),
        source=r[9],
        parent_ids=json.loads(r[10]),
        proposer=r[11],
        round_id=r[12],
        created_at=r[13],
        verified_at=r[14],
        deterministic=None if r[15] is None else bool(r[15]),
        contaminated=r[16],
    )


class Bank(TrainingRecords, CurriculumTables):
    """A task bank file. Use as a context manager or call `close()`."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True) -> None:
        self.path = Path(path) if path is not None else default_bank_path()
        if not create and not self.path.exists():
            raise BankError(f"there is no bank at {self.path}")
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            # The unique indexes (id, exact-duplicate key) take random keys; with the
            # default 2 MiB page cache a million-task bank inserts several times slower.
            self.conn.execute("PRAGMA cache_size=-262144")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as e:
            raise BankError(f"{self.path} is not a usable task bank ({e})") from None

    def __enter__(self) -> Bank:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise BankError(
                f"{self.path} has schema version {version}, newer than this selfplay "
                f"understands ({SCHEMA_VERSION}); upgrade selfplay"
            )
        for number in range(version + 1, SCHEMA_VERSION + 1):
            script = MIGRATIONS[number - 1]
            try:
                self.conn.executescript(
                    f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;"
                )
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    # ---- meta -------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

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
            (
                t.id,
                t.kind,
                t.prompt,
                t.program,
                t.entry_point,
                json.dumps(t.tests),
                json.dumps(t.examples),
                json.dumps(t.tags),
                json.dumps(t.metadata),
                t.source,
                json.dumps(t.parent_ids),
                t.proposer,
                t.round_id,
                t.created_at or now,
                t.verified_at,
                None if t.deterministic is None else int(t.deterministic),
                t.contaminated,
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
                f"INSERT INTO tasks ({_TASK_COLUMNS}, content_hash, ast_hash, dedup_key) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
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

    # ---- rounds and attempts ----------------------------------------------------------

    def start_round(self, config: dict[str, Any] | None = None) -> int:
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO rounds (started_at, config) VALUES (?, ?)",
                (time.time(), json.dumps(config or {})),
            )
            return int(cur.lastrowid)

    def finish_round(self, round_id: int, summary: dict[str, Any] | None = None) -> None:
        with self._write() as c:
            cur = c.execute(
                "UPDATE rounds SET finished_at = ?, summary = ? WHERE id = ?",
                (time.time(), json.dumps(summary or {}), round_id),
            )
            if cur.rowcount != 1:
                raise BankError(f"there is no round {round_id}")

    def rounds(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT id, started_at, finished_at, config, summary FROM rounds ORDER BY id"
        )
        return [
            {
                "id": r[0],
                "started_at": r[1],
                "finished_at": r[2],
                "config": json.loads(r[3]),
                "summary": None if r[4] is None else json.loads(r[4]),
            }
            for r in rows
        ]

    def add_attempts(self, attempts: Iterable[Attempt]) -> None:
        """Record attempts and update the per-task, per-solver counters, atomically."""
        now = time.time()
        rows = [
            (
                a.task_id,
                a.solver,
                a.answer,
                a.status,
                int(a.passed),
                a.reward,
                a.round_id,
                int(a.step),
                a.created_at or now,
                json.dumps(sorted(set(a.signals))),
                a.isolation if a.isolation in ("sandbox", "none") else "none",
            )
            for a in attempts
        ]
        with self._write() as c:
            try:
                c.executemany(
                    "INSERT INTO attempts (task_id, solver, answer, status, passed, reward, "
                    "round_id, step, created_at, signals, isolation) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
            except sqlite3.IntegrityError:
                raise BankError(
                    "an attempt names a task or round that is not in the bank"
                ) from None
            c.executemany(
                "INSERT INTO task_stats VALUES (?, ?, 1, ?, ?) ON CONFLICT (task_id, solver) "
                "DO UPDATE SET attempts = attempts + 1, successes = successes + excluded.successes, "
                "last_step = MAX(last_step, excluded.last_step)",
                [(r[0], r[1], r[4], r[7]) for r in rows],
            )

    def solve_stats(
        self,
        solver: str | Iterable[str] | None = None,
        *,
        kind: str | None = None,
        include_contaminated: bool = False,
    ) -> pd.DataFrame:
        """Per-task counters for the curriculum: a DataFrame indexed by task id (in id
        order) with int64 columns attempts, successes, last_step (-1 when never
        attempted). One solver's counters (several solvers' summed, given a list: a model
        and the models it was trained from), or all solvers summed when `solver` is None;
        only tasks of `kind` when given."""
        import numpy as np
        import pandas as pd

        # Two sequential scans (a covering index of ids, the small counters table) joined
        # in pandas: much faster on a big bank than a per-task join in SQL.
        clauses, args_ = [], []
        if not include_contaminated:
            clauses.append("contaminated IS NULL")
        if kind is not None:
            clauses.append("kind = ?")
            args_.append(kind)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        index = "INDEXED BY tasks_ids" if kind is None else ""
        ids = [r[0] for r in self.conn.execute(f"SELECT id FROM tasks {index} {where}", args_)]
        names = [solver] if isinstance(solver, str) else list(solver or [])
        marks = ",".join("?" * len(names))
        filter_, args = (f"WHERE solver IN ({marks})", names) if solver is not None else ("", [])
        counters = self.conn.execute(
            "SELECT task_id, SUM(attempts), SUM(successes), MAX(last_step) FROM task_stats "
            f"{filter_} GROUP BY task_id",
            args,
        ).fetchall()
        attempts = np.zeros(len(ids), dtype=np.int64)
        successes = np.zeros(len(ids), dtype=np.int64)
        last_step = np.full(len(ids), -1, dtype=np.int64)
        position = {task_id: i for i, task_id in enumerate(ids)}
        for task_id, a, s, step in counters:
            i = position.get(task_id)
            if i is not None:  # counters of contaminated tasks stay out
                attempts[i], successes[i], last_step[i] = a, s, step
        return pd.DataFrame(
            {"attempts": attempts, "successes": successes, "last_step": last_step},
            index=pd.Index(ids, name="task_id"),
        )

    # ---- queries the engine, exports and curricula make ----------------------------------

    def new_task_ids(self, round_id: int, source: str) -> list[str]:
        """Ids of the tasks `source` admitted in `round_id` (benchmark look-alikes left out),
        in the order they were admitted."""
        rows = self.conn.execute(
            "SELECT id FROM tasks WHERE round_id = ? AND source = ? AND contaminated IS NULL "
            "ORDER BY key",
            (round_id, source),
        )
        return [r[0] for r in rows]

    def attempted_task_ids(self, round_id: int, solver: str) -> set[str]:
        rows = self.conn.execute(
            "SELECT DISTINCT task_id FROM attempts WHERE round_id = ? AND solver = ?",
            (round_id, solver),
        )
        return {r[0] for r in rows}

    def round_pass_counts(self, round_id: int) -> dict[str, tuple[int, int]]:
        """task id -> (attempts, successes) within one round."""
        rows = self.conn.execute(
            "SELECT task_id, COUNT(*), SUM(passed) FROM attempts WHERE round_id = ? "
            "GROUP BY task_id",
            (round_id,),
        )
        return {tid: (a, s) for tid, a, s in rows}

    def round_totals(
        self, round_id: int | None = None, *, solver: str | Iterable[str] | None = None
    ) -> list[tuple[int, int, int]]:
        """(round id, attempts, successes) per round, or for one round; one solver's (or
        several solvers') or all."""
        clauses, args = ["round_id IS NOT NULL"], []
        if round_id is not None:
            clauses.append("round_id = ?")
            args.append(round_id)
        if solver is not None:
            names = [solver] if isinstance(solver, str) else list(solver)
            clauses.append(f"solver IN ({','.join('?' * len(names))})")
            args.extend(names)
        rows = self.conn.execute(
            "SELECT round_id, COUNT(*), COALESCE(SUM(passed), 0) FROM attempts "
            f"WHERE {' AND '.join(clauses)} GROUP BY round_id ORDER BY round_id",
            args,
        )
        return [tuple(r) for r in rows]

    def attempts_for(self, task_ids: Iterable[str]) -> dict[str, list[tuple[str, str, bool]]]:
        """task id -> (solver, answer, passed) of its attempts, in the order they were made."""
        out: dict[str, list[tuple[str, str, bool]]] = {}
        ids = list(dict.fromkeys(task_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT task_id, solver, answer, passed FROM attempts WHERE task_id IN ({marks}) "
                "ORDER BY id",
                chunk,
            )
            for task_id, solver, answer, passed in rows:
                out.setdefault(task_id, []).append((solver, answer, bool(passed)))
        return out

    def task_ids_by_key(self) -> dict[int, str]:
        """Every task's integer key -> id (the vector index and the graph tables use keys)."""
        return dict(self.conn.execute("SELECT key, id FROM tasks").fetchall())

    # ---- a round's steps --------------------------------------------------------------

    def step(self, round_id: int, step: str) -> dict[str, Any] | None:
        """The committed report of one step of a round, or None if it has not finished."""
        row = self.conn.execute(
            "SELECT report FROM round_steps WHERE round_id = ? AND step = ?", (round_id, step)
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def set_step(self, round_id: int, step: str, report: dict[str, Any]) -> None:
        with self._write() as c:
            c.execute(
                "INSERT OR REPLACE INTO round_steps VALUES (?, ?, ?, ?)",
                (round_id, step, json.dumps(report), time.time()),
            )

    def steps(self, round_id: int, prefix: str = "") -> dict[str, dict[str, Any]]:
        """step -> report for the steps of a round whose name starts with `prefix`."""
        rows = self.conn.execute(
            "SELECT step, report FROM round_steps WHERE round_id = ? AND step >= ? AND step < ? "
            "ORDER BY step",
            (round_id, prefix, prefix + "\uffff"),
        )
        return {step: json.loads(report) for step, report in rows}

    def step_in_every_round(self, step: str) -> list[tuple[int, dict[str, Any]]]:
        """(round id, report) of one step name across all rounds, oldest first."""
        rows = self.conn.execute(
            "SELECT round_id, report FROM round_steps WHERE step = ? ORDER BY round_id", (step,)
        )
        return [(rid, json.loads(report)) for rid, report in rows]

    def solver_stats(self, task_id: str) -> list[tuple[str, int, int, int]]:
        """(solver, attempts, successes, last_step) for one task."""
        return self.conn.execute(
            "SELECT solver, attempts, successes, last_step FROM task_stats WHERE task_id = ? "
            "ORDER BY solver",
            (task_id,),
        ).fetchall()
