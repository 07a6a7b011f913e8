"""Bank summaries for `selfplay bank stats` and `selfplay bank list`."""

from __future__ import annotations

import json
from typing import Any

from task_bank.store import Bank

# Upper edges of the solve-rate histogram buckets (a bucket holds rates <= its edge).
RATE_EDGES = (0.0, 0.25, 0.5, 0.75, 0.999999, 1.0)
RATE_LABELS = ("0", "(0, 0.25]", "(0.25, 0.5]", "(0.5, 0.75]", "(0.75, 1)", "1")


def summary(bank: Bank) -> dict[str, Any]:
    """Counts of tasks, rejections, attempts and solve rates (the `stats --json` object)."""
    q = bank.conn.execute
    by_kind = dict(q("SELECT kind, COUNT(*) FROM tasks GROUP BY kind ORDER BY kind").fetchall())
    by_source = dict(
        q("SELECT source, COUNT(*) FROM tasks GROUP BY source ORDER BY COUNT(*) DESC").fetchall()
    )
    contaminated = q("SELECT COUNT(*) FROM tasks WHERE contaminated IS NOT NULL").fetchone()[0]
    solvers = {
        solver: {"attempts": a, "successes": s, "tasks": n}
        for solver, a, s, n in q(
            "SELECT solver, SUM(attempts), SUM(successes), COUNT(*) FROM task_stats "
            "GROUP BY solver ORDER BY solver"
        )
    }
    per_task = q("SELECT SUM(attempts), SUM(successes) FROM task_stats GROUP BY task_id").fetchall()
    histogram = dict.fromkeys(RATE_LABELS, 0)
    rates = []
    for attempts, successes in per_task:
        rate = successes / attempts
        rates.append(rate)
        for edge, label in zip(RATE_EDGES, RATE_LABELS, strict=True):
            if rate <= edge:
                histogram[label] += 1
                break
    rounds = q("SELECT COUNT(*), COUNT(finished_at) FROM rounds").fetchone()
    hacks = hack_signals(bank)
    rejected = bank.rejection_counts()
    return {
        "path": str(bank.path),
        "schema_version": bank.schema_version,
        "tasks": sum(by_kind.values()),
        "by_kind": by_kind,
        "by_source": by_source,
        "contaminated": contaminated,
        "rejected": rejected,
        "attempts": {
            "total": sum(s["attempts"] for s in solvers.values()),
            "successes": sum(s["successes"] for s in solvers.values()),
            "by_solver": solvers,
        },
        "solve_rate": {
            "attempted_tasks": len(rates),
            "mean": round(sum(rates) / len(rates), 6) if rates else None,
            "solved_tasks": sum(1 for r in rates if r > 0),
            "histogram": histogram,
        },
        "rounds": {"total": rounds[0], "finished": rounds[1]},
        "hack_signals": hacks,
        "degenerate": degenerate(bank, hacks, rejected),
        # Models trained on this bank (selfplay train / loop): which solver is which.
        "models": [
            {
                "id": m.id,
                "role": m.role,
                "method": m.method,
                "from": m.parent or m.base,
                "steps": m.steps,
                "status": m.status,
            }  # fmt: skip
            for m in bank.models()
        ],
    }


def degenerate(bank: Bank, hacks: dict[str, Any], rejected: dict[str, int]) -> dict[str, int]:
    """The degenerate-answer probe (`selfplay.admission.degenerate`): codegen tasks turned
    away because an empty value, None or NaN passed their tests; tasks kept because their own
    reference answers that way (flagged, so such an answer still scores); attempts that
    passed with such an answer, which the reward scored 0."""
    flagged = bank.conn.execute(
        "SELECT COUNT(*) FROM tasks WHERE json_extract(metadata, '$.degenerate_passes') "
        "IS NOT NULL AND json_array_length(json_extract(metadata, '$.degenerate_passes')) > 0"
    ).fetchone()[0]
    return {
        "turned_away": rejected.get("weak_tests", 0),
        "kept_flagged": flagged,
        "attempts": hacks["by_signal"].get("degenerate_pass", 0),
    }


def hack_signals(bank: Bank) -> dict[str, Any]:
    """How often attempts showed reward-hacking signals: overall, per signal, per solver and
    per round (a rate is attempts with at least one signal over attempts)."""
    q = bank.conn.execute
    by_signal = dict(
        q(
            "SELECT s.value, COUNT(*) FROM attempts, json_each(attempts.signals) s "
            "GROUP BY s.value ORDER BY COUNT(*) DESC"
        ).fetchall()
    )

    def grouped(column: str) -> dict[str, dict[str, Any]]:
        out = {}
        for key, n, flagged in q(
            f"SELECT {column}, COUNT(*), SUM(signals != '[]') FROM attempts "
            f"GROUP BY {column} ORDER BY {column}"
        ):
            out[str(key)] = {"attempts": n, "with_signals": flagged, "rate": round(flagged / n, 6)}
        return out

    total, flagged = q(
        "SELECT COUNT(*), COALESCE(SUM(signals != '[]'), 0) FROM attempts"
    ).fetchone()
    isolation = dict(q("SELECT isolation, COUNT(*) FROM attempts GROUP BY isolation").fetchall())
    return {
        "attempts_unsandboxed": isolation.get("none", 0),
        "attempts_isolation_unrecorded": isolation.get("unrecorded", 0),
        "attempts_with_signals": flagged,
        "rate": round(flagged / total, 6) if total else None,
        "by_signal": by_signal,
        "by_solver": grouped("solver"),
        "by_round": grouped("round_id"),
    }


# How `listing` orders tasks: newest/oldest by insertion; hardest/easiest by solve rate (tasks
# never attempted last); most attempted first.
SORTS = {
    "oldest": "t.key",
    "newest": "t.key DESC",
    "hardest": "SUM(s.attempts) IS NULL, 1.0 * SUM(s.successes) / SUM(s.attempts), t.key",
    "easiest": "SUM(s.attempts) IS NULL, 1.0 * SUM(s.successes) / SUM(s.attempts) DESC, t.key",
    "attempts": "COALESCE(SUM(s.attempts), 0) DESC, t.key",
}


def listing(
    bank: Bank,
    *,
    sort: str = "oldest",
    limit: int = 50,
    **filters: Any,
) -> list[dict[str, Any]]:
    """Tasks matching the filters (see `_matching`), with attempts and solve rate, the first
    `limit` in `sort` order."""
    select, args = _matching(bank, **filters)
    sql = f"{select} ORDER BY {SORTS[sort]} LIMIT {int(limit)}"
    out = []
    rows = bank.conn.execute(sql, args).fetchall()
    for tid, k, src, tags, contam, attempts, successes in rows:
        out.append(
            {
                "id": tid,
                "kind": k,
                "source": src,
                "tags": json.loads(tags),
                "contaminated": contam,
                "attempts": attempts,
                "successes": successes,
                "solve_rate": successes / attempts if attempts else None,
            }
        )
    return out


def count_matching(bank: Bank, **filters: Any) -> int:
    """How many tasks `listing` would show with no limit."""
    select, args = _matching(bank, **filters)
    return int(bank.conn.execute(f"SELECT COUNT(*) FROM ({select})", args).fetchone()[0])


def _matching(
    bank: Bank,
    *,
    kind: str | None = None,
    source: str | None = None,
    tag: str | None = None,
    solver: str | None = None,
    min_rate: float | None = None,
    max_rate: float | None = None,
    include_contaminated: bool = True,
) -> tuple[str, list[Any]]:
    """The SELECT of tasks matching the filters, and its arguments. A solve-rate bound
    leaves out tasks never attempted (their rate is unknown)."""
    where, args = bank.task_filter(kind, source, tag, include_contaminated)
    join = "LEFT JOIN task_stats s ON s.task_id = t.id" + (" AND s.solver = ?" if solver else "")
    join_args = [solver] if solver else []
    having = []
    if min_rate is not None:
        having.append("SUM(s.attempts) > 0 AND 1.0 * SUM(s.successes) / SUM(s.attempts) >= ?")
        args.append(min_rate)
    if max_rate is not None:
        having.append("SUM(s.attempts) > 0 AND 1.0 * SUM(s.successes) / SUM(s.attempts) <= ?")
        args.append(max_rate)
    select = (
        "SELECT t.id, t.kind, t.source, t.tags, t.contaminated, "
        "COALESCE(SUM(s.attempts), 0), COALESCE(SUM(s.successes), 0) "
        f"FROM tasks t {join} {where} "
        f"GROUP BY t.key {'HAVING ' + ' AND '.join(having) if having else ''}"
    )
    return select, join_args + args
