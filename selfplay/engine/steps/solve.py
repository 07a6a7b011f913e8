"""`Solve`: a round's solving step, the round's new tasks plus the curriculum's picks.

The plan (which tasks) is committed first (checkpoint `solve.plan`), then the tasks are
attempted in chunks, each chunk's attempts in one transaction and its figures in the journal
(`solve.chunk.<first task id>`): a kill loses one chunk, and the step redone after it attempts
only the plan's tasks this solver has not attempted in the round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from selfplay.engine.steps.propose import PROBE

if TYPE_CHECKING:
    from selfplay.engine.runner import Context

# Tasks attempted in one generation call and written in one transaction: a batch engine
# gains with the batch (32 tasks of 4 attempts are 128 sequences), a kill loses one chunk.
SOLVE_CHUNK = 32


@dataclass(slots=True)
class Solve:
    """Attempt the round's new tasks and the curriculum's picks with this round's solver."""

    name: ClassVar[str] = "solve"
    PLAN: ClassVar[str] = "solve.plan"
    CHUNK: ClassVar[str] = "solve.chunk."  # + the id of the chunk's first task

    def run(self, ctx: Context) -> dict[str, Any]:
        engine = ctx.owner
        plan = ctx.done(self.PLAN)
        if plan is None:
            new = engine.new_task_ids(ctx.id)
            # The round's probe attempted its tasks already: picked again, they would count
            # as done and be skipped (attempts are resumed by task, round and solver).
            probed = (ctx.done(PROBE) or {}).get("tasks", [])
            stats = engine.stats(ctx.id)
            stats = stats[~stats.index.isin(new + probed)]
            stats.attrs["step"] = ctx.id
            picked = engine.pick(stats, engine.config.solver.tasks, ctx.seed(f"{self.name}.pick"))
            plan = ctx.commit(self.PLAN, {"tasks": new + [i for i in picked if i not in new]})
        solver = engine.solver(ctx.seed(self.name))
        attempted = engine.bank.attempted_task_ids(ctx.id, solver.name)
        todo = [i for i in plan["tasks"] if i not in attempted]
        tasks = [t for t in (engine.bank.get(i) for i in todo) if t is not None]
        for start in range(0, len(tasks), SOLVE_CHUNK):
            chunk = tasks[start : start + SOLVE_CHUNK]
            gen0 = engine.backend.stats.seconds
            report = solver.attempt(chunk, round_id=ctx.id, step=ctx.id)
            engine.bank.add_attempts(report.attempts)  # one transaction per chunk
            ctx.commit(
                self.CHUNK + chunk[0].id,
                {
                    "tokens": report.tokens,
                    "seconds": report.seconds,
                    "gen_seconds": engine.backend.stats.seconds - gen0,
                    "statuses": dict(report.statuses),
                },
            )
        return {"solver": solver.name, "tasks": len(plan["tasks"])}
