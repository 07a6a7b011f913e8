"""The step journal: what a resumable run has committed, one table for every kind of run.

A self-play round (`scope` "round", its id the round's) and a `selfplay loop` iteration
(`scope` "loop", its id the iteration number) commit each finished step's report here
before the next step starts; a run given the same command again reads it to continue
with the step that was in flight. `Bank.journal(scope)` is the one way in.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from task_bank.store import Bank

SCOPES = ("round", "loop")


class Journal:
    """The committed steps of one scope."""

    def __init__(self, bank: Bank, scope: str) -> None:
        if scope not in SCOPES:
            raise ValueError(f"unknown journal scope '{scope}' (known: {', '.join(SCOPES)})")
        self.bank, self.scope = bank, scope

    def get(self, id: int, step: str) -> dict[str, Any] | None:
        """The committed report of one step, or None if it has not finished."""
        row = self.bank.conn.execute(
            "SELECT report FROM steps WHERE scope = ? AND id = ? AND step = ?",
            (self.scope, id, step),
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def set(self, id: int, step: str, report: dict[str, Any]) -> None:
        with self.bank._write() as c:
            c.execute(
                "INSERT OR REPLACE INTO steps VALUES (?, ?, ?, ?, ?)",
                (self.scope, id, step, json.dumps(report), time.time()),
            )

    def steps(self, id: int, prefix: str = "") -> dict[str, dict[str, Any]]:
        """step -> report for the steps of one run whose name starts with `prefix`."""
        rows = self.bank.conn.execute(
            "SELECT step, report FROM steps WHERE scope = ? AND id = ? AND step >= ? "
            "AND step < ? ORDER BY step",
            (self.scope, id, prefix, prefix + "\uffff"),
        )
        return {step: json.loads(report) for step, report in rows}

    def everywhere(self, step: str) -> list[tuple[int, dict[str, Any]]]:
        """(id, report) of one step name across all runs of the scope, oldest first."""
        rows = self.bank.conn.execute(
            "SELECT id, report FROM steps WHERE scope = ? AND step = ? ORDER BY id",
            (self.scope, step),
        )
        return [(i, json.loads(report)) for i, report in rows]

    def all(self) -> dict[int, dict[str, dict[str, Any]]]:
        """id -> step -> report, in the order the steps were committed."""
        out: dict[int, dict[str, dict[str, Any]]] = {}
        rows = self.bank.conn.execute(
            "SELECT id, step, report FROM steps WHERE scope = ? ORDER BY id, created_at",
            (self.scope,),
        )
        for i, step, report in rows:
            out.setdefault(i, {})[step] = json.loads(report)
        return out
