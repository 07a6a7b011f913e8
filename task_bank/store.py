"""The task bank: one SQLite file (WAL, foreign keys, versioned schema).

`Bank` is the connection, the migrations and the meta table; each table family's SQL is a
module of its own, mixed in: `tasks` (tasks, vectors, rejections), `attempts` (rounds,
attempts, counters), `journal` (the step journal of rounds and loop iterations),
`training` (models, proposals) and `curriculum_tables` (the difficulty graph).

Every write is one transaction (`BEGIN IMMEDIATE ... COMMIT`), so a process killed at
any point leaves a consistent bank holding everything committed before the kill.
The bank stores what it is given; admission (verification, dedup, decontamination)
happens in `selfplay.admission` before tasks get here.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from task_bank.attempts import Attempt, AttemptTables
from task_bank.curriculum_tables import CurriculumTables
from task_bank.errors import BankError
from task_bank.journal import Journal
from task_bank.migrations import MIGRATIONS, SCHEMA_VERSION
from task_bank.tasks import Rejection, TaskTables
from task_bank.training import TrainingRecords

__all__ = ["Attempt", "Bank", "BankError", "Rejection", "default_bank_path"]

DEFAULT_BANK = "selfplay.db"


def default_bank_path() -> Path:
    return Path(os.environ.get("SELFPLAY_BANK") or DEFAULT_BANK)


class Bank(TaskTables, AttemptTables, TrainingRecords, CurriculumTables):
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

    # ---- the step journal -------------------------------------------------------------

    def journal(self, scope: str) -> Journal:
        """The committed steps of rounds (`"round"`) or loop iterations (`"loop"`)."""
        return Journal(self, scope)
