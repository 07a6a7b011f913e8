"""The attempts table family: rounds, solver attempts and the per-task counters
(`task_stats`) the curriculum, the exports and the engine read.

`Bank` mixes these methods in (it provides `conn` and `_write`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from task_bank.columns import Columns
from task_bank.errors import BankError

if TYPE_CHECKING:
    import pandas as pd


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


ATTEMPT = Columns(
    names=tuple(
        (
            "task_id solver answer status passed reward round_id step created_at signals isolation"
        ).split()
    ),
    encode={
        "passed": int,
        "step": int,
        "signals": lambda s: json.dumps(sorted(set(s))),
        # Only the two words the bank knows; anything else is stored as unprotected.
        "isolation": lambda i: i if i in ("sandbox", "none") else "none",
    },
)


class AttemptTables:
    """Mixed into `task_bank.store.Bank`."""

    conn: sqlite3.Connection

    # ---- rounds and attempts ----------------------------------------------------------

    def start_round(self, config: dict[str, Any] | None = None) -> int:
        with self._write() as c:
            cur = c.execute(
                "INSERT INTO rounds (started_at, config) VALUES (?, ?)",
                (time.time(), json.dumps(config or {})),
            )
            return int(cur.lastrowid)

    def set_round_config(self, round_id: int, config: dict[str, Any]) -> None:
        """Replace an unfinished round's config (a resumed round runs under the new one)."""
        with self._write() as c:
            cur = c.execute(
                "UPDATE rounds SET config = ? WHERE id = ? AND finished_at IS NULL",
                (json.dumps(config), round_id),
            )
            if cur.rowcount != 1:
                raise BankError(f"there is no unfinished round {round_id}")

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
        rows = [ATTEMPT.row(a, created_at=a.created_at or now) for a in attempts]
        with self._write() as c:
            try:
                c.executemany(
                    ATTEMPT.insert("attempts"),
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

    def attempted_tasks(self, solver: str) -> list[str]:
        """The task id of each of `solver`'s attempts, in the order they were made (a GRPO
        run's rollouts: its picks, one per generation)."""
        rows = self.conn.execute("SELECT task_id FROM attempts WHERE solver = ? ORDER BY id",
                                 (solver,))  # fmt: skip
        return [r[0] for r in rows]

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

    def solver_stats(self, task_id: str) -> list[tuple[str, int, int, int]]:
        """(solver, attempts, successes, last_step) for one task."""
        return self.conn.execute(
            "SELECT solver, attempts, successes, last_step FROM task_stats WHERE task_id = ? "
            "ORDER BY solver",
            (task_id,),
        ).fetchall()
