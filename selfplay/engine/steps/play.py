"""`PlayRound`: a loop iteration's self-play round, with the iteration's model in both roles.

The round itself resumes inside `SelfPlay`. The rounds finished when the step first started
are kept (checkpoint `round.start`), so a process killed after the round finished but before
the step was committed takes that round instead of playing another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from selfplay.engine.rounds import SelfPlay, finished_rounds

if TYPE_CHECKING:
    from selfplay.engine.runner import Context


@dataclass(slots=True)
class PlayRound:
    """One self-play round (propose, verify, admit, solve) with the iteration's model."""

    name: ClassVar[str] = "round"
    START: ClassVar[str] = "round.start"

    def run(self, ctx: Context) -> dict[str, Any]:
        loop = ctx.owner
        run = loop.config.run.model_copy(deep=True)
        run.model.spec = loop.model_at(ctx.id)
        before = ctx.done(self.START) or ctx.commit(
            self.START, {"rounds": finished_rounds(loop.bank)}
        )
        finished = finished_rounds(loop.bank)
        backend = loop.make_backend(run)
        try:
            if len(finished) > len(before["rounds"]):  # killed after the round, before its step
                round_id = finished[-1]
            else:
                engine = SelfPlay(loop.bank, backend, loop.verifier, run,
                                  progress=ctx.within("round"))  # fmt: skip
                round_id = engine.run(1)[-1].round
        finally:
            backend.close()
        summary = next(r["summary"] for r in loop.bank.rounds() if r["id"] == round_id)
        return {"round": round_id, "summary": summary}
