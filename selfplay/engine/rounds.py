"""`SelfPlay.run`: the round loop of proposer, verifier, bank and solver, resumable.

A round is a fixed list of steps: one `propose.<kind>` step per task kind (their programs
and inputs generated together, each kind admitted and committed on its own), then `solve`
(the round's new tasks plus the curriculum's picks, in chunks), then `rewards`, then
the summary. Every step commits its result to the bank before the next starts: admitted
tasks in admission's transaction, a chunk's attempts in one transaction, a step's report
in the bank's step journal (`task_bank.journal`, scope "round"). A process killed anywhere therefore
loses at most the step in flight, and the same command run again redoes only that step:
no admitted task is lost (tasks carry their round id and are counted from the bank) and
no finished round is repeated (the run's target is kept under the `selfplay.run` key).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from curricula import make_scheduler
from curricula.schedulers import Uniform
from selfplay.admission import Admission, AdmissionConfig, AdmissionReport, import_source
from selfplay.backends.base import Backend, engine_name
from selfplay.backends.models import model_label
from selfplay.config import RunConfig
from selfplay.engine.seeds import step_seed
from selfplay.engine.summary import RoundSummary, summarize, write_metrics
from selfplay.proposer.proposer import SOURCE, Proposer
from selfplay.solver.solver import Solver
from task_bank.store import Bank

RUN_KEY = "selfplay.run"
# Tasks attempted in one generation call and written in one transaction: a batch engine
# gains with the batch (32 tasks of 4 attempts are 128 sequences), a kill loses one chunk.
SOLVE_CHUNK = 32
# Tasks of each never-attempted kind the solver tries before the first proposals (`_probe`):
# one batch on vLLM, a small one where every sequence costs.
PROBE_VLLM = 4
PROBE_DEFAULT = 1

Progress = Callable[[str, int, int], None]


class SelfPlay:
    """Runs self-play rounds on a bank with one model backend and one verifier."""

    def __init__(
        self,
        bank: Bank,
        backend: Backend,
        verifier: Any,
        config: RunConfig | None = None,
        *,
        progress: Progress | None = None,
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
        self._references = make_scheduler(self.config.proposer.scheduler, seed=self.config.seed)

    # ---- bookkeeping ----------------------------------------------------------------

    def _done(self, round_id: int, step: str) -> dict[str, Any] | None:
        return self.bank.journal("round").get(round_id, step)

    def _commit(self, round_id: int, step: str, report: dict[str, Any]) -> None:
        self.bank.journal("round").set(round_id, step, report)

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
                    done = [s for s in steps if not s.endswith(".tries")]  # bookkeeping only
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
                steps = self.bank.journal("round").all().get(r["id"], {})
                return f"round {r['id']} at {_next_step(steps, self.config.kinds)}"
        return None

    def _finished_rounds(self) -> int:
        return sum(
            1 for r in self.bank.rounds() if r["config"].get("selfplay") and r["finished_at"]
        )

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
        finished = self._finished_rounds()
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

    def _stats(self, round_id: int, kind: str | None = None) -> Any:
        """This solver's counters (its own and its ancestors' attempts), at step `round_id`."""
        stats = self.bank.solve_stats(self._lineage, kind=kind)
        stats.attrs["step"] = round_id  # attempts carry their round id as their step
        return stats

    def _select(self, stats: Any, k: int, seed: int, scheduler: Any = None) -> list[str]:
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

    def _round(self, round_id: int) -> RoundSummary:
        self._graph = None
        todo = [k for k in self.config.kinds if self._done(round_id, f"propose.{k}") is None]
        if todo:
            if self._done(round_id, "probe") is None:
                self._probe(round_id, todo)
            self._propose(round_id, todo)
        if self._done(round_id, "solve") is None:
            self._solve(round_id)
        if self._done(round_id, "rewards") is None:
            self._rewards(round_id)
        summary = summarize(self.bank, self.config, round_id)
        write_metrics(self.bank, self.config, summary)
        self.bank.finish_round(round_id, summary.to_dict())
        return summary

    # ---- steps ----------------------------------------------------------------------

    def _solver(self, round_id: int, step: str) -> Solver:
        """This round's solver, sampling with its own seed for `step`."""
        c = self.config
        return Solver(
            self.backend,
            self.verifier,
            c.solver,
            name=self.solver_name,
            seed=step_seed(c.seed, "round", round_id, step),
            progress=self.progress,
        )

    def _probe(self, round_id: int, kinds: list[str]) -> None:
        """Attempt a few bank tasks of each kind this solver has never attempted, before
        proposing: the references are meant to be tasks it solves sometimes, and with no
        attempt at all the scheduler could only guess (a fresh bank's first round)."""
        import numpy as np

        c = self.config
        size = c.proposer.probe_tasks
        if size is None:
            self.backend.load()  # `auto` knows its engine once loaded; the probe loads it anyway
            size = PROBE_VLLM if engine_name(self.backend) == "vllm" else PROBE_DEFAULT
        rng = np.random.default_rng(step_seed(c.seed, "round", round_id, "probe.pick"))
        picked: list[str] = []
        for kind in kinds:
            stats = self._stats(round_id, kind)
            if size and len(stats) and int(stats["attempts"].sum()) == 0:
                ids = list(stats.index)
                picked += [ids[i] for i in rng.choice(len(ids), min(size, len(ids)), replace=False)]
        tasks = [t for t in (self.bank.get(i) for i in picked) if t is not None]
        if not tasks:
            return  # nothing to probe: no step to record (a resumed round looks again)
        report = self._solver(round_id, "probe").attempt(tasks, round_id=round_id, step=round_id)
        self.bank.add_attempts(report.attempts)
        self._commit(
            round_id, "probe", {"tasks": [t.id for t in tasks], "statuses": dict(report.statuses)}
        )

    def _propose(self, round_id: int, kinds: list[str]) -> None:
        """Waves of proposals until the proposing budget is spent (one wave when the config
        fixes the count). In a wave the programs and inputs of every kind are generated
        together and each kind is admitted on its own; the wave's reports are committed
        before the next starts, so a kill loses one wave at most."""
        c = self.config
        state = self._done(round_id, "propose.waves") or {"waves": 0, "seconds": 0.0}
        reports: dict[str, dict[str, Any]] = state.setdefault("reports", {})
        fixed = c.proposer.proposals_per_kind is not None
        # A wave redone after a kill samples afresh: with the killed try's seed it would
        # propose the same tasks again, which admission would count as duplicates.
        tries = (self._done(round_id, "propose.tries") or {}).get("tries", 0)
        self._commit(round_id, "propose.tries", {"tries": tries + 1})
        while not state["waves"] or not (
            fixed or state["seconds"] + state["last"] > c.proposer.budget_s
        ):
            started = time.perf_counter()
            self._wave(round_id, kinds, state["waves"], tries, reports)
            state["last"] = time.perf_counter() - started
            state["waves"] += 1
            state["seconds"] += state["last"]
            self._commit(round_id, "propose.waves", state)
        for kind in kinds:
            self._commit(round_id, f"propose.{kind}", reports[kind] | {"waves": state["waves"]})

    def _wave(
        self, round_id: int, kinds: list[str], wave: int, tries: int, reports: dict[str, Any]
    ) -> None:
        c = self.config
        requests = {}
        for kind in kinds:
            stats = self._stats(round_id, kind)
            seed = step_seed(c.seed, "round", round_id, f"propose.{kind}.pick", wave)
            picked = self._select(stats, c.proposer.references, seed, self._references)
            requests[kind] = [t for t in (self.bank.get(i) for i in picked) if t is not None]
        proposer = Proposer(
            self.backend,
            self.admission,
            c.proposer,
            seed=step_seed(c.seed, "round", round_id, "propose", tries, wave),
            progress=self.progress,
        )
        gen0 = self.backend.stats.seconds
        # Proposal items count on across waves, and a redone try's start past the killed one's.
        first = {k: 100_000 * tries + reports.get(k, {}).get("proposed", 0) for k in kinds}
        drafts = proposer.write(requests, round_id, first=first)
        gen_seconds = self.backend.stats.seconds - gen0
        total = sum(len(d.candidates) for d in drafts.values()) or 1
        for kind, draft in drafts.items():
            judged = proposer.judge(draft)
            self.bank.add_proposals(judged.proposals)
            report = judged.to_dict()
            report["gen_seconds"] = gen_seconds * len(draft.candidates) / total
            reports[kind] = _add_reports(reports.get(kind), report)

    def _new_ids(self, round_id: int) -> list[str]:
        return self.bank.new_task_ids(round_id, SOURCE)

    def _solve(self, round_id: int) -> None:
        c = self.config
        plan = self._done(round_id, "solve.plan")
        if plan is None:
            new = self._new_ids(round_id)
            # The round's probe attempted its tasks already: picked again, they would count
            # as done and be skipped (attempts are resumed by task, round and solver).
            probed = (self._done(round_id, "probe") or {}).get("tasks", [])
            stats = self._stats(round_id)
            stats = stats[~stats.index.isin(new + probed)]
            stats.attrs["step"] = round_id
            picked = self._select(
                stats, c.solver.tasks, step_seed(c.seed, "round", round_id, "solve.pick")
            )
            plan = {"tasks": new + [i for i in picked if i not in new]}
            self._commit(round_id, "solve.plan", plan)
        solver = self._solver(round_id, "solve")
        attempted = self.bank.attempted_task_ids(round_id, solver.name)
        todo = [i for i in plan["tasks"] if i not in attempted]
        tasks = [t for t in (self.bank.get(i) for i in todo) if t is not None]
        for start in range(0, len(tasks), SOLVE_CHUNK):
            chunk = tasks[start : start + SOLVE_CHUNK]
            gen0 = self.backend.stats.seconds
            report = solver.attempt(chunk, round_id=round_id, step=round_id)
            self.bank.add_attempts(report.attempts)  # one transaction per chunk
            self._commit(
                round_id,
                f"solve.chunk.{chunk[0].id}",
                {
                    "tokens": report.tokens,
                    "seconds": report.seconds,
                    "gen_seconds": self.backend.stats.seconds - gen0,
                    "statuses": dict(report.statuses),
                },
            )
        self._commit(round_id, "solve", {"solver": solver.name, "tasks": len(plan["tasks"])})

    def _rewards(self, round_id: int) -> None:
        """Pass rates of this round's attempts; the proposer's learnability reward per new task."""
        from selfplay.solver.learnability import learnability

        counts = self.bank.round_pass_counts(round_id)
        form = self.config.solver.learnability
        rates = {
            tid: {"attempts": a, "successes": s, "pass_rate": s / a}
            for tid, (a, s) in counts.items()
        }
        rewards = {}
        for tid in self._new_ids(round_id):
            if tid in rates:
                rewards[tid] = rates[tid] | {
                    "learnability": learnability(
                        rates[tid]["successes"], rates[tid]["attempts"], form
                    )
                }
        self.bank.set_proposal_rewards(
            round_id, {tid: r["learnability"] for tid, r in rewards.items()}
        )
        tests = self._discrimination(round_id)
        self._commit(round_id, "rewards", {"form": form, "proposer": rewards, "solver": rates,
                                           "test_discrimination": tests})  # fmt: skip

    def _discrimination(self, round_id: int) -> dict[str, Any]:
        """How much each new codegen task's own tests (the proposer's) catch that inputs
        synthesised from its program would not; stored per proposal."""
        from selfplay.strengthen.discrimination import discrimination

        new = [t for t in map(self.bank.get, self._new_ids(round_id))
               if t is not None and t.kind == "codegen"]  # fmt: skip
        found = discrimination(new, self.verifier) if new else {}
        self.bank.set_proposal_discrimination(round_id, {k: d.score for k, d in found.items()})
        return {k: d.to_dict() for k, d in found.items()}


def _add_reports(before: dict[str, Any] | None, wave: dict[str, Any]) -> dict[str, Any]:
    """One kind's step report over the waves so far."""
    if before is None:
        return wave
    rejected = Counter(before["rejected"]) + Counter(wave["rejected"])
    return {
        "kind": wave["kind"],
        "proposed": before["proposed"] + wave["proposed"],
        "admitted_ids": before["admitted_ids"] + wave["admitted_ids"],
        "flagged": before["flagged"] + wave["flagged"],
        "rejected": dict(rejected.most_common()),
        "repaired": dict(Counter(before["repaired"]) + Counter(wave["repaired"])),
        "tokens": before["tokens"] + wave["tokens"],
        "seconds": round(before["seconds"] + wave["seconds"], 3),
        "gen_seconds": before["gen_seconds"] + wave["gen_seconds"],
    }


def _next_step(steps: dict[str, Any], kinds: list[str]) -> str:
    """The step a resumed round starts at, and what it keeps, from its journal."""
    reports = dict(steps.get("propose.waves", {}).get("reports", {}))
    reports |= {k[len("propose."):]: r for k, r in steps.items()
                if k.startswith("propose.") and k[len("propose."):] in kinds}  # fmt: skip
    kept = ", ".join(f"{len(r['admitted_ids'])} {k}" for k, r in reports.items()
                     if r.get("admitted_ids"))  # fmt: skip
    kept = f" (kept: {kept} proposals admitted)" if kept else ""
    todo = [k for k in kinds if f"propose.{k}" not in steps]
    if todo:
        return f"propose {', '.join(todo)}{kept}"
    return ("solve" if "solve" not in steps else "rewards") + kept
