"""`warm_up`: a few cheap attempts at every task the policy has no record of, before choosing.

A learnability scheduler ranks tasks by what it knows of the policy's pass rate on them; a
task nobody has attempted has only the prior, so the scheduler either explores it blind or
never sees it. Tasks arrive without a record when they come from outside a round
(`selfplay bank import`, `selfplay bank generate`) or when the policy changes to a model
with no history. The warm-up attempts each of them `samples` times with a short budget and
stores the attempts, so every candidate has an estimate before the first pick; GRPO's own
rollouts then refresh the estimates of the tasks it trains on (`selfplay.training.rollouts`).

    report = warm_up(bank, solver, tasks, solvers=bank.lineage(solver.name))
    report.warmed, report.attempts, report.solved_some
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from selfplay.solver.solver import Solver
from selfplay.task import Task

if TYPE_CHECKING:
    from task_bank.store import Bank


@dataclass(slots=True)
class WarmupReport:
    candidates: int = 0  # tasks asked about
    warmed: int = 0  # of them, attempted now (the rest had a record)
    attempts: int = 0
    solved_some: int = 0  # warmed tasks with at least one passing attempt
    solved_all: int = 0
    seconds: float = 0.0
    pass_rates: dict[str, float] = field(default_factory=dict)


def blind(bank: Bank, task_ids: Iterable[str], solvers: list[str] | None) -> list[str]:
    """The ids among `task_ids` that `solvers` (a model and its line) never attempted."""
    stats = bank.solve_stats(solvers, include_contaminated=True)
    wanted = list(dict.fromkeys(task_ids))
    known = stats.index.isin(wanted)
    tried = set(stats.index[known & (stats["attempts"].to_numpy() > 0)])
    return [t for t in wanted if t not in tried]


def warm_up(
    bank: Bank,
    solver: Solver,
    tasks: list[Task],
    *,
    solvers: list[str] | None = None,
    step: int = 0,
    untried: Iterable[str] | None = None,
) -> WarmupReport:
    """Attempt every task of `tasks` that `solvers` (default: the solver's own name) has
    never attempted, `solver.config.samples` times each, and store the attempts.

    `untried`: those ids when the caller has just read them with `blind` (saves a second
    scan of the counters)."""
    report = WarmupReport(candidates=len(tasks))
    if untried is None:
        untried = blind(bank, (t.id for t in tasks), solvers or [solver.name])
    todo = set(untried)
    pending = [t for t in tasks if t.id in todo]
    if not pending:
        return report
    result = solver.attempt(pending, step=step)
    bank.add_attempts(result.attempts)
    report.warmed = len(pending)
    report.attempts = len(result.attempts)
    report.seconds = round(result.seconds, 2)
    for r in result.results:
        report.pass_rates[r.task_id] = r.pass_rate
        report.solved_some += r.successes > 0
        report.solved_all += r.successes == r.attempts
    return report
