"""`Loop.run`: self-play and training, iteration after iteration, resumable.

An iteration is a fixed list of steps, each committed to the bank's step journal (scope "loop") before the
next starts:

1. `round`: a self-play round (propose, verify, admit, solve) with the current model in both
   roles;
2. `train.solver`: the solver trained on the bank (GRPO with the curriculum, SFT or DPO);
   tasks held out for evaluation are never trained on;
3. `train.proposer`: the proposer role trained with DPO on its own proposals, starting from
   the solver's checkpoint (one model plays both roles, as in Absolute Zero); skipped, and
   said so, when the bank holds no pair yet;
4. `eval`: pass@1 with a 95% interval on the held-out split (frozen when the loop starts)
   and on HumanEval (`humaneval_limit` problems; all of them on a GPU by default).

The next iteration starts from the newest checkpoint. Before the first iteration the
starting model is evaluated the same way (iteration 0), so every iteration has a before.
Killed anywhere, the same command continues: a round resumes inside `SelfPlay`, training
from its last TRL checkpoint, evaluation from its start; nothing committed is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfplay.config import LoopConfig, RunConfig
from selfplay.engine.build import make_run_backend
from selfplay.engine.rounds import SelfPlay

LOOP_KEY = "selfplay.loop"
Progress = Callable[..., None]  # (phase, done, total, note=None)

if TYPE_CHECKING:
    from task_bank.store import Bank


@dataclass(slots=True)
class IterationRow:
    """One line of the loop's table and learning curve."""

    iteration: int
    model: str
    round: int | None = None
    admitted: int = 0
    bank_tasks: int = 0
    train_steps: int = 0
    train_reward: float | None = None
    train_loss: float | None = None
    held_out: float | None = None
    held_out_interval: list[float] | None = None
    humaneval: float | None = None
    humaneval_interval: list[float] | None = None
    hack_signal_rate: float | None = None
    proposer: str = "-"
    proposer_skipped: str | None = None  # why the proposer was not trained, if it was not
    # The round's health (`selfplay.engine.health`) and its warnings.
    yield_rate: float | None = None
    frontier_yield: float | None = None
    diversity: float | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Loop:
    """Runs `selfplay loop` iterations on a bank with one verifier."""

    def __init__(
        self,
        bank: Bank,
        verifier: Any,
        config: LoopConfig,
        *,
        progress: Progress | None = None,
        on_step: Callable[[int, str, dict[str, Any]], None] | None = None,
        make_backend: Callable[[RunConfig], Any] = make_run_backend,
    ) -> None:
        self.bank = bank
        self.verifier = verifier
        self.config = config
        self.progress = progress or (lambda phase, done, total, note=None: None)
        self.on_step = on_step or (lambda iteration, step, report: None)
        self.make_backend = make_backend
        self.models_dir = Path(config.models_dir or bank.path.with_name(bank.path.stem + ".models"))

    # ---- bookkeeping ----------------------------------------------------------------

    def _done(self, iteration: int, step: str) -> dict[str, Any] | None:
        return self.bank.journal("loop").get(iteration, step)

    def _commit(self, iteration: int, step: str, report: dict[str, Any]) -> dict[str, Any]:
        self.bank.journal("loop").set(iteration, step, report)
        self.on_step(iteration, step, report)
        return report

    def finished(self) -> int:
        """Iterations finished (the starting model's evaluation, iteration 0, not counted)."""
        return sum(
            1 for i, steps in self.bank.journal("loop").all().items() if i and "done" in steps
        )

    def model_at(self, iteration: int) -> str:
        """The model spec that iteration `iteration` starts from."""
        for i in range(iteration - 1, 0, -1):
            done = self._done(i, "done")
            if done:
                return done["model"]
        return self.config.run.model.spec

    # ---- the verb -------------------------------------------------------------------

    def resume_point(self) -> str | None:
        """Where `run` continues a loop that was cut off ('iteration 2 at train.solver (kept:
        round)'); None when the last run finished."""
        state = json.loads(self.bank.meta(LOOP_KEY) or "null")
        if not state or state.get("done"):
            return None
        if self._done(0, "eval") is None:
            return "the starting model's evaluation (iteration 0)"
        iteration = self.finished() + 1
        steps = ["round", "train.solver", "train.proposer", "eval"]
        if not self.config.proposer.enabled:
            steps.remove("train.proposer")
        done = [s for s in steps if self._done(iteration, s) is not None]
        todo = next((s for s in steps if s not in done), "its end")
        kept = f" (kept: {', '.join(done)})" if done else ""
        return f"iteration {iteration} of {state['target']} at {todo}{kept}"

    def run(self, iterations: int | None = None) -> list[IterationRow]:
        """Run `iterations` more iterations (default: the config's), finishing an
        interrupted run first, then return every iteration's row (0 included)."""
        iterations = iterations or self.config.iterations
        state = json.loads(self.bank.meta(LOOP_KEY) or "null")
        if not state or state.get("done"):
            state = {"target": self.finished() + iterations, "done": False}
            self.bank.set_meta(LOOP_KEY, json.dumps(state))
        if self.bank.count() == 0:
            SelfPlay(self.bank, self.make_backend(self.config.run), self.verifier)._import_seeds()
        held_out = self._held_out()
        if self._done(0, "eval") is None:
            self._evaluate(0, self.config.run.model.spec, held_out)
        for iteration in range(self.finished() + 1, state["target"] + 1):
            self._iteration(iteration, held_out)
        self.bank.set_meta(LOOP_KEY, json.dumps(state | {"done": True}))
        return self.rows()

    def _held_out(self) -> list[str]:
        done = self._done(0, "held_out")
        if done is None:
            from selfplay.export.select import ExportOptions, select

            e = self.config.eval
            options = ExportOptions(split="random", test_fraction=e.held_out_fraction, seed=e.seed,
                                    split_by=e.held_out_by)  # fmt: skip
            ids = [i.task.id for i in select(self.bank, options).items if i.split == "test"]
            done = self._commit(0, "held_out", {"tasks": ids})
        return done["tasks"]

    def _iteration(self, iteration: int, held_out: list[str]) -> None:
        from selfplay.training import TrainDataError, train

        model = self.model_at(iteration)
        if self._done(iteration, "round") is None:
            self._round(iteration, model)
        solver = self._done(iteration, "train.solver")
        if solver is None:
            # The loop's own held-out split (frozen at its start) is what training skips.
            data = self.config.solver.data.model_copy(update={"held_out_fraction": 0.0})
            config = self.config.solver.model_copy(update={"model": model, "data": data})
            out = self.models_dir / f"iter-{iteration}-solver"
            result = train(self.bank, config, out, resume=True, exclude=set(held_out),
                           progress=self._stage(iteration, "solver"))  # fmt: skip
            solver = self._commit(iteration, "train.solver", result.to_dict())
        final = solver["path"]
        proposer = self._done(iteration, "train.proposer")
        if proposer is None and self.config.proposer.enabled:
            p = self.config.proposer
            config = self.config.solver.model_copy(
                update={"model": final, "method": "dpo", "role": "proposer",
                        "max_steps": p.max_steps, "proposer_reward": p.reward}
            )  # fmt: skip
            try:
                result = train(self.bank, config, self.models_dir / f"iter-{iteration}",
                               resume=True, proposer_gains=self._gains(),
                               progress=self._stage(iteration, "proposer"))  # fmt: skip
                proposer = self._commit(iteration, "train.proposer", result.to_dict())
            except TrainDataError as e:
                proposer = self._commit(iteration, "train.proposer", {"skipped": str(e)})
        if proposer and "path" in proposer:
            final = proposer["path"]
        if self._done(iteration, "eval") is None:
            self._evaluate(iteration, final, held_out)
        self._commit(iteration, "done", {"model": final})

    def _round(self, iteration: int, model: str) -> None:
        run = self.config.run.model_copy(deep=True)
        run.model.spec = model
        before = self._done(iteration, "round.start")
        if before is None:
            before = self._commit(iteration, "round.start", {"rounds": self._rounds_done()})
        finished = self._rounds_done()
        backend = self.make_backend(run)
        try:
            if len(finished) > len(before["rounds"]):  # killed after the round, before its step
                round_id = finished[-1]
            else:
                engine = SelfPlay(self.bank, backend, self.verifier, run,
                                  progress=self._stage(iteration, "round"))  # fmt: skip
                round_id = engine.run(1)[-1].round
        finally:
            backend.close()
        summary = next(r["summary"] for r in self.bank.rounds() if r["id"] == round_id)
        self._commit(iteration, "round", {"round": round_id, "summary": summary})

    def _rounds_done(self) -> list[int]:
        return [
            r["id"] for r in self.bank.rounds() if r["config"].get("selfplay") and r["finished_at"]
        ]

    def _gains(self) -> dict[int, float]:
        """round id -> the held-out gain of the iteration that trained on it."""
        rows = {r.iteration: r for r in self.rows()}
        gains = {}
        for i, row in rows.items():
            before = rows.get(i - 1)
            if (
                i
                and row.round
                and row.held_out is not None
                and before
                and before.held_out is not None
            ):
                gains[row.round] = row.held_out - before.held_out
        return gains

    def _evaluate(self, iteration: int, model: str, held_out: list[str]) -> None:
        from selfplay.evaluate import evaluate_bank, evaluate_humaneval

        e = self.config.eval
        run = self.config.run.model_copy(deep=True)
        run.model.spec = model
        backend = self.make_backend(run)
        report: dict[str, Any] = {"model": model, "bank_tasks": self.bank.count()}
        try:
            from selfplay.backends import Sampling
            from selfplay.export.select import ExportOptions, select

            items = [i for i in select(self.bank, ExportOptions(split="none")).items
                     if i.task.id in set(held_out)]  # fmt: skip
            sampling = Sampling(temperature=0.0, max_new_tokens=e.max_new_tokens)
            if items:
                bank_eval = evaluate_bank(backend, self.verifier, items, sampling=sampling,
                                          benchmark="held_out", progress=self._phase(iteration, "eval held-out"))  # fmt: skip
                report["held_out"] = _with_solved(bank_eval)
            limit = e.humaneval_limit if e.humaneval_limit is not None else _humaneval_default()
            if limit:
                from selfplay.evaluate import STOP

                he = evaluate_humaneval(
                    backend, self.verifier, limit=limit, progress=self._phase(iteration, "eval humaneval"),
                    sampling=Sampling(temperature=0.0, max_new_tokens=e.max_new_tokens, stop=STOP),
                )  # fmt: skip
                report["humaneval"] = _with_solved(he)
        finally:
            backend.close()
        from selfplay.backends.models import model_label

        label = model_label(model)
        if self.bank.model(label) is not None:
            self.bank.set_evaluation(label, {k: v for k, v in report.items() if k != "model"})
        self._commit(iteration, "eval", report)

    def _phase(self, iteration: int, name: str) -> Callable[[int, int], None]:
        return lambda done, total: self.progress(f"it{iteration} {name}", done, total)

    def _stage(self, iteration: int, stage: str) -> Progress:
        """The progress callback of one stage: its bars say the iteration and whose step
        (round, solver or proposer training) a phase belongs to."""

        def progress(phase: str, done: int, total: int, note: str | None = None) -> None:
            name = f"it{iteration} {stage} {phase}"
            if note is None:
                self.progress(name, done, total)
            else:
                self.progress(name, done, total, note=note)

        return progress

    # ---- what it did ----------------------------------------------------------------

    def rows(self) -> list[IterationRow]:
        return iteration_rows(self.bank)


def iteration_rows(bank: Bank) -> list[IterationRow]:
    """Every evaluated iteration of the loop a bank holds (iteration 0: the starting model)."""
    from task_bank.stats import hack_signals

    hacks = hack_signals(bank)
    rows = []
    for iteration, steps in sorted(bank.journal("loop").all().items()):
        if "eval" not in steps:
            continue
        ev = steps["eval"]
        row = IterationRow(iteration, ev["model"], bank_tasks=ev.get("bank_tasks", 0))
        for name, key in (("held_out", "held_out"), ("humaneval", "humaneval")):
            if name in ev:
                setattr(row, key, ev[name]["pass_at_k"].get("pass@1"))
                setattr(row, f"{key}_interval", ev[name].get("pass@1_interval"))
        if "round" in steps:
            summary = steps["round"]["summary"] or {}
            row.round = steps["round"]["round"]
            row.admitted = summary.get("admitted", 0)
            row.bank_tasks = summary.get("bank_tasks", 0)
            row.yield_rate = summary.get("yield_rate")
            row.frontier_yield = summary.get("frontier_yield")
            row.diversity = summary.get("diversity")
            row.warnings = list(summary.get("warnings", []))
        solver = steps.get("train.solver") or {}
        row.train_steps = solver.get("steps", 0)
        log = solver.get("log") or []
        rewards = [x["reward"] for x in log if "reward" in x]
        losses = [x["loss"] for x in log if "loss" in x]
        row.train_reward = sum(rewards) / len(rewards) if rewards else None
        row.train_loss = sum(losses) / len(losses) if losses else None
        # Attempts of the round and rollouts of training with a hack signal, over both.
        seen = [hacks["by_round"].get(str(row.round)), hacks["by_solver"].get(
            str(solver.get("model_id")))]  # fmt: skip
        n = sum(x["attempts"] for x in seen if x)
        row.hack_signal_rate = sum(x["with_signals"] for x in seen if x) / n if n else None
        proposer = steps.get("train.proposer") or {}
        row.proposer = (
            (f"{proposer['steps']} step" + "s" * (proposer["steps"] != 1)) if "steps" in proposer else
            "skipped" if "skipped" in proposer else "-"
        )  # fmt: skip
        row.proposer_skipped = proposer.get("skipped")
        rows.append(row)
    return rows


def _with_solved(report: Any) -> dict[str, Any]:
    """The report with the problems solved by name, so two iterations compare paired."""
    solved = sorted({r["task_id"] for r in report.rows if r["passed"]})
    return report.to_dict() | {"solved": solved}


def _humaneval_default() -> int:
    """All 164 problems on a GPU; 16 on a CPU, where each takes seconds to answer."""
    import torch

    return 164 if torch.cuda.is_available() else 16
