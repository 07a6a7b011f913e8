"""`Rewards`: a round's rewards step, once its attempts are in.

The solver's reward is each task's pass rate in the round; the proposer's is the
learnability of each new task it wrote (`selfplay.solver.learnability`), stored with its
proposal, and for codegen the discrimination of the task's own tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from selfplay.engine.runner import Context


@dataclass(slots=True)
class Rewards:
    """Pass rates of this round's attempts; the proposer's learnability reward per new task."""

    name: ClassVar[str] = "rewards"

    def run(self, ctx: Context) -> dict[str, Any]:
        from selfplay.solver.learnability import learnability

        engine = ctx.owner
        counts = engine.bank.round_pass_counts(ctx.id)
        form = engine.config.solver.learnability
        rates = {
            tid: {"attempts": a, "successes": s, "pass_rate": s / a}
            for tid, (a, s) in counts.items()
        }
        rewards = {}
        for tid in engine.new_task_ids(ctx.id):
            if tid in rates:
                rewards[tid] = rates[tid] | {
                    "learnability": learnability(
                        rates[tid]["successes"], rates[tid]["attempts"], form
                    )
                }
        engine.bank.set_proposal_rewards(
            ctx.id, {tid: r["learnability"] for tid, r in rewards.items()}
        )
        tests = _discrimination(ctx)
        return {"form": form, "proposer": rewards, "solver": rates, "test_discrimination": tests}


def _discrimination(ctx: Context) -> dict[str, Any]:
    """How much each new codegen task's own tests (the proposer's) catch that inputs
    synthesised from its program would not; stored per proposal."""
    from selfplay.strengthen.discrimination import discrimination

    engine = ctx.owner
    new = [t for t in map(engine.bank.get, engine.new_task_ids(ctx.id))
           if t is not None and t.kind == "codegen"]  # fmt: skip
    found = discrimination(new, engine.verifier) if new else {}
    engine.bank.set_proposal_discrimination(ctx.id, {k: d.score for k, d in found.items()})
    return {k: d.to_dict() for k, d in found.items()}
