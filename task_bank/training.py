"""What training adds to a bank: the models it made and the proposals that train the
proposer.

`Bank` mixes these methods in; the SQL stays in `task_bank/` like the rest of the bank's.
A model is recorded when its training starts (`status: training`) and finished with its
step count and path; attempts name the model that made them by its id (`solver`), so bank
statistics, curricula and dataset cards tell which model produced what.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ModelRecord:
    """One trained model: where it is, what it was trained from and on, and how it did."""

    id: str
    base: str  # the model spec training started from (a path, an alias or a parent's path)
    method: str  # grpo, sft or dpo
    role: str  # solver or proposer
    path: str
    parent: str | None = None  # the id of the recorded model it was trained from
    data: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    status: str = "training"
    created_at: float | None = None
    finished_at: float | None = None


@dataclass(slots=True)
class Proposal:
    """One program the proposer wrote: its prompt, its text, and what became of it
    (`admitted` with the task id, or the reason it was rejected)."""

    round_id: int | None
    kind: str
    item: int
    prompt: list[dict[str, str]]
    completion: str
    outcome: str
    task_id: str | None = None
    proposer: str | None = None
    # The learnability of the task it became, once the round's attempts measured it; None
    # before, and for a proposal that was not admitted (its reward is 0 when trained on).
    reward: float | None = None
    # codegen: the share of the reference's wrong mutants only its own tests catch
    # (`selfplay.strengthen.discrimination`); None for other kinds and before it is measured.
    discrimination: float | None = None


_MODEL_COLUMNS = (
    "id, base, method, role, path, parent, data, steps, config, evaluation, status, "
    "created_at, finished_at"
)


def _model(row: tuple) -> ModelRecord:
    return ModelRecord(
        *row[:6],
        data=json.loads(row[6]),
        steps=row[7],
        config=json.loads(row[8]),
        evaluation=json.loads(row[9]),
        status=row[10],
        created_at=row[11],
        finished_at=row[12],
    )


class TrainingRecords:
    """Mixed into `task_bank.store.Bank` (which provides `conn` and `_write`)."""

    # ---- models -----------------------------------------------------------------------

    def add_model(self, record: ModelRecord) -> None:
        """Record a model whose training starts (or replace the record of one restarted)."""
        with self._write() as c:
            c.execute(
                f"INSERT OR REPLACE INTO models ({_MODEL_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.base,
                    record.method,
                    record.role,
                    record.path,
                    record.parent,
                    json.dumps(record.data),
                    record.steps,
                    json.dumps(record.config),
                    json.dumps(record.evaluation),
                    record.status,
                    record.created_at or time.time(),
                    record.finished_at,
                ),
            )

    def finish_model(self, model_id: str, steps: int, data: dict[str, Any] | None = None) -> None:
        with self._write() as c:
            c.execute(
                "UPDATE models SET status = 'done', steps = ?, finished_at = ?, "
                "data = COALESCE(?, data) WHERE id = ?",
                (steps, time.time(), None if data is None else json.dumps(data), model_id),
            )

    def set_evaluation(self, model_id: str, evaluation: dict[str, Any]) -> None:
        """Merge `evaluation` (benchmark -> result) into the model's record."""
        with self._write() as c:
            row = c.execute("SELECT evaluation FROM models WHERE id = ?", (model_id,)).fetchone()
            if row is None:
                return
            merged = json.loads(row[0]) | evaluation
            c.execute(
                "UPDATE models SET evaluation = ? WHERE id = ?", (json.dumps(merged), model_id)
            )

    def model(self, model_id: str) -> ModelRecord | None:
        row = self.conn.execute(
            f"SELECT {_MODEL_COLUMNS} FROM models WHERE id = ?", (model_id,)
        ).fetchone()
        return None if row is None else _model(row)

    def models(self) -> list[ModelRecord]:
        """Every recorded model, oldest first."""
        rows = self.conn.execute(f"SELECT {_MODEL_COLUMNS} FROM models ORDER BY created_at, id")
        return [_model(r) for r in rows]

    def lineage(self, solver: str) -> list[str]:
        """`solver` and the models it descends from, newest first, ending with the spec the
        first one was trained from: the names whose attempts describe this model's ability."""
        names = [solver]
        record = self.model(solver)
        while record is not None:
            nxt = record.parent or record.base
            if nxt in names:
                break
            names.append(nxt)
            record = self.model(nxt) if record.parent else None
        return names

    def drop_attempts_since(self, solver: str, since: float) -> int:
        """Delete `solver`'s attempts made after the time `since` and take them off the
        counters; returns how many. Training resumed from a checkpoint redoes the steps
        after it, so their rollouts would otherwise be counted twice."""
        with self._write() as c:
            rows = c.execute(
                "SELECT task_id, COUNT(*), SUM(passed) FROM attempts "
                "WHERE solver = ? AND created_at > ? GROUP BY task_id",
                (solver, since),
            ).fetchall()
            c.execute("DELETE FROM attempts WHERE solver = ? AND created_at > ?", (solver, since))
            c.executemany(
                "UPDATE task_stats SET attempts = attempts - ?, successes = successes - ?, "
                "last_step = COALESCE((SELECT MAX(step) FROM attempts a WHERE a.task_id = "
                "task_stats.task_id AND a.solver = task_stats.solver), -1) "
                "WHERE task_id = ? AND solver = ?",
                [(n, s, task_id, solver) for task_id, n, s in rows],
            )
            c.execute("DELETE FROM task_stats WHERE solver = ? AND attempts <= 0", (solver,))
            return sum(n for _, n, _ in rows)

    def attempts_by(self, solver: str) -> list[tuple[str, float, float]]:
        """(task id, time, reward) of each of `solver`'s attempts, oldest first; a GRPO
        group's rollouts share their task and time (they are graded together)."""
        rows = self.conn.execute(
            "SELECT task_id, created_at, reward FROM attempts WHERE solver = ? ORDER BY id",
            (solver,),
        )
        return [(task_id, created, reward) for task_id, created, reward in rows]

    def attempt_summary(self, solver: str) -> tuple[int, int, int]:
        """(attempts, successes, attempts with a hack signal) of one solver."""
        row = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(passed), 0), COALESCE(SUM(signals != '[]'), 0) "
            "FROM attempts WHERE solver = ?",
            (solver,),
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    # ---- proposals --------------------------------------------------------------------

    def add_proposals(self, proposals: Iterable[Proposal]) -> None:
        now = time.time()
        with self._write() as c:
            c.executemany(
                "INSERT OR REPLACE INTO proposals (round_id, kind, item, prompt, completion, "
                "outcome, task_id, proposer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        p.round_id,
                        p.kind,
                        p.item,
                        json.dumps(p.prompt),
                        p.completion,
                        p.outcome,
                        p.task_id,
                        p.proposer,
                        now,
                    )
                    for p in proposals
                ],
            )

    def proposals(self, round_id: int | None = None) -> list[Proposal]:
        """The proposals of one round, or of all rounds, in the order they were written."""
        where, args = ("WHERE round_id = ?", (round_id,)) if round_id is not None else ("", ())
        rows = self.conn.execute(
            "SELECT round_id, kind, item, prompt, completion, outcome, task_id, proposer, reward, "
            "discrimination "
            f"FROM proposals {where} ORDER BY round_id, kind, item",
            args,
        )
        return [
            Proposal(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], r[6], r[7], r[8], r[9])
            for r in rows
        ]

    def set_proposal_discrimination(self, round_id: int, scores: dict[str, float]) -> None:
        """Store how much each codegen proposal's own tests catch (task id -> score)."""
        with self._write() as c:
            c.executemany(
                "UPDATE proposals SET discrimination = ? WHERE round_id = ? AND task_id = ?",
                [(s, round_id, tid) for tid, s in scores.items()],
            )

    def set_proposal_rewards(self, round_id: int, rewards: dict[str, float]) -> None:
        """Store the reward of each proposal of `round_id` that became a task in `rewards`."""
        with self._write() as c:
            c.executemany(
                "UPDATE proposals SET reward = ? WHERE round_id = ? AND task_id = ?",
                [(r, round_id, tid) for tid, r in rewards.items()],
            )
