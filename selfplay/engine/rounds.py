"""`SelfPlay.run`: the round loop of proposer, verifier, bank and solver, resumable.

A round is a plain list of steps (`round_steps`): one `Propose(kind)` per task kind (their
programs and inputs generated together, each kind admitted and committed on its own), then
`Solve()` (the round's new tasks plus the curriculum's picks, in chunks), then `Rewards()`;
then the summary. `SelfPlay(steps=...)` runs another list, such as the default one with a
step of one's own added (`selfplay.engine.runner.Step`). The runner commits every step's
result to the bank before the next starts: admitted tasks in admission's transaction, a
chunk's attempts in one transaction, a step's report in the bank's step journal
(`task_bank.journal`, scope "round"). A process killed anywhere therefore loses at most the
step in flight, and the same command run again redoes only that step: no admitted task is
lost (tasks carry their round id and are counted from the bank) and no finished round is
repeated (the run's target is kept under the `selfplay.run` key).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from curricula import make_scheduler
from curricula.schedulers import Uniform
from selfplay.admission import Admission, AdmissionConfig, AdmissionReport, import_source
from selfplay.backends.base import Backend
from selfplay.backends.models import model_label
from selfplay.config import RunConfig
from selfplay.engine.runner import OnStep, Runner, Step
from selfplay.engine.steps.propose import TRIES, Propose, admitted_so_far
from selfplay.engine.steps.rewards import Rewards
from selfplay.engine.steps.solve import Solve
from selfplay.engine.summary import RoundSummary, summarize, write_metrics
from selfplay.proposer.proposer import SOURCE
from selfplay.solver.solver import Solver
from task_bank.store import Bank

RUN_KEY = "selfplay.run"

Progress = Callable[[str, int, int], None]


def round_steps(kinds: list[str]) -> list[Step]:
    """The steps of a round that proposes tasks of `kinds`: the default of `SelfPlay`."""
    return [*(Propose(kind) for kind in kinds), Solve(), Rewards()]


def finished_rounds(bank: Bank) -> list[int]:
    """The ids of the bank's finished self-play rounds, oldest first."""
    return [r["id"] for r in bank.rounds() if r["config"].get("selfplay") and r["finished_at"]]


class SelfPlay:
    """Runs self-play rounds on a bank with one model backend and one verifier.

    steps: the steps of each round (default `round_steps(config.kinds)`). progress: called
    with (phase, done, total) as the steps generate and grade. on_step: called with (round,
    name, report) as each step, or checkpoint inside a step, is committed. on_round: with
    each finished round's summary. on_seeds: with the import report of an empty bank's seeds.
    """

    def __init__(
        self,
        bank: Bank,
        backend: Backend,
        verifier: Any,
        config: RunConfig | None = None,
        *,
        steps: list[Step] | None = None,
        progress: Progress | None = None,
        on_step: OnStep | None = None,
        on_round: Callable[[RoundSummary], None] | None = None,
        on_seeds: Callable[[AdmissionReport], None] | None = None,
    ) -> None:
        self.bank = bank
        self.backend = backend
        self.verifier = verifier
        self.config = config or RunConfig()
        self.progress = progress or (lambda phase, done, total: None)
        self.on_round = on_round or (lambda summary: None)
        self.on_seeds = on_seeds or (lambda report: None)
        self.steps = list(steps) if steps is not None else round_steps(self.config.kinds)
        self.runner = Runner(self, bank.journal("round"), progress=self.progress,
                             on_step=on_step, seed=self.config.seed)  # fmt: skip
        p = self.config.proposer
        self.admission = Admission(
            bank,
            verifier,
            AdmissionConfig(
                timeout_s=self.config.verifier.timeout_s,
                max_program_chars=p.max_program_chars,
                max_output_chars=p.max_output_chars,
                proposal_examples=p.inputs_per_task,
            ),
        )
        self._graph: Any = None
        # The name this model's attempts carry (a trained model's id in the bank), and the
        # names whose attempts describe it: itself and the models it was trained from.
        self.solver_name = model_label(backend.model)
        self._lineage = bank.lineage(self.solver_name)
        # One scheduler for the run, so state it keeps (a compiled graph) is reused; it is
        # re-seeded per call so a step redone after a kill picks the same tasks.
        self._scheduler = make_scheduler(
            self.config.scheduler, seed=self.config.seed, **self.config.scheduler_options
        )
        # The proposer is shown tasks this solver solves sometimes (the frontier it should
        # write near), chosen by their own scheduler.
        self.references = make_scheduler(self.config.proposer.scheduler, seed=self.config.seed)

    # ---- bookkeeping ----------------------------------------------------------------

    def _open_round(self) -> int:
        """The unfinished self-play round to resume, else a new one.

        A resumed round records the config it finishes under (a run that failed with a
        mistyped model and is run again with another must not leave the first one's name on
        the round); the models of the steps done before are kept under `earlier_models`.
        """
        config = {"selfplay": True, **self.config.model_dump()}
        for r in reversed(self.bank.rounds()):
            if r["config"].get("selfplay") and r["finished_at"] is None:
                if r["config"] != config:
                    steps = self.bank.journal("round").all().get(r["id"], {})
                    done = [s for s in steps if s != TRIES]  # bookkeeping only
                    before = r["config"].get("model", {}).get("spec")
                    earlier = list(r["config"].get("earlier_models", []))
                    if done and before != self.config.model.spec and before not in earlier:
                        earlier.append(before)
                    self.bank.set_round_config(
                        r["id"], config | ({"earlier_models": earlier} if earlier else {})
                    )
                return r["id"]
        return self.bank.start_round(config)

    def resume_point(self) -> str | None:
        """Where `run` continues a round that was cut off ('round 2 at propose abduction
        (kept: 3 deduction proposals admitted)'); None when no round is unfinished."""
        for r in reversed(self.bank.rounds()):
            if r["config"].get("selfplay") and r["finished_at"] is None:
                return f"round {r['id']} at {self._next_step(r['id'])}"
        return None

    def _next_step(self, round_id: int) -> str:
        """The step a resumed round starts at, and the proposals it keeps."""
        todo = self.runner.pending(round_id, self.steps)
        kept = admitted_so_far(self.runner.context(round_id, self.steps))
        kept_text = ", ".join(f"{n} {kind}" for kind, n in kept.items())
        kept_text = f" (kept: {kept_text} proposals admitted)" if kept_text else ""
        if todo and isinstance(todo[0], Propose):  # the kinds' steps run together
            return f"propose {', '.join(s.kind for s in todo if isinstance(s, Propose))}{kept_text}"
        return (todo[0] if todo else self.steps[-1]).name + kept_text

    # ---- the verb -------------------------------------------------------------------

    def run(self, rounds: int | None = None) -> list[RoundSummary]:
        """Run `rounds` rounds (default: the config's), resuming an interrupted run first.

        A run interrupted before its last round is continued to the same end point when
        started again with the same number of rounds.
        """
        rounds = rounds or self.config.rounds
        if self.bank.count() == 0:
            self._import_seeds()
        state = json.loads(self.bank.meta(RUN_KEY) or "null")
        finished = len(finished_rounds(self.bank))
        if state and not state.get("done"):
            target = state["start"] + rounds
        else:
            target = finished + rounds
            state = {"start": finished}
        self.bank.set_meta(RUN_KEY, json.dumps({"start": state["start"], "done": False}))
        summaries = []
        while finished < target:
            summary = self._round(self._open_round())
            summaries.append(summary)
            self.on_round(summary)
            finished += 1
        self.bank.set_meta(RUN_KEY, json.dumps({"start": state["start"], "done": True}))
        return summaries

    def _import_seeds(self) -> None:
        report = import_source(
            "seeds", self.admission, progress=lambda d, t: self.progress("import seeds", d, t)
        )
        self.on_seeds(report)

    # ---- what the steps ask of the engine ------------------------------------------

    def stats(self, round_id: int, kind: str | None = None) -> Any:
        """This solver's counters (its own and its ancestors' attempts), at step `round_id`."""
        stats = self.bank.solve_stats(self._lineage, kind=kind)
        stats.attrs["step"] = round_id  # attempts carry their round id as their step
        return stats

    def pick(self, stats: Any, k: int, seed: int, scheduler: Any = None) -> list[str]:
        """The curriculum's pick of k task ids from `stats` (the run's scheduler unless
        another is given); graph-aware schedulers see the bank's difficulty graph (lineage,
        similarity, difficulty order), grown once a round."""
        import numpy as np

        scheduler = scheduler or self._scheduler
        if not len(stats) or k == 0:
            return []
        if self._graph is None and not isinstance(scheduler, Uniform):
            from curricula.inspect import bank_graph

            self._graph = bank_graph(self.bank, solver=self._lineage)[1].graph
        scheduler.rng = np.random.default_rng(seed)
        return scheduler.select(stats, k, graph=self._graph)

    def solver(self, seed: int) -> Solver:
        """This round's solver, sampling with `seed` (`Context.seed` of the step)."""
        return Solver(self.backend, self.verifier, self.config.solver, name=self.solver_name,
                      seed=seed, progress=self.progress)  # fmt: skip

    def new_task_ids(self, round_id: int) -> list[str]:
        """The tasks the round's proposals added to the bank."""
        return self.bank.new_task_ids(round_id, SOURCE)

    # ---- a round --------------------------------------------------------------------

    def _round(self, round_id: int) -> RoundSummary:
        self._graph = None
        self.runner.run(round_id, self.steps)
        summary = summarize(self.bank, self.config, round_id)
        write_metrics(self.bank, self.config, summary)
        self.bank.finish_round(round_id, summary.to_dict())
        return summary
