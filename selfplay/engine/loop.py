"""`Loop.run`: self-play and training, iteration after iteration, resumable.

An iteration is a plain list of steps (`iteration_steps`), run by the runner
(`selfplay.engine.runner`), each committed to the bank's step journal (scope "loop") before
the next starts:

1. `round` (`PlayRound`): a self-play round (propose, verify, admit, solve) with the current
   model in both roles;
2. `train.solver` (`TrainSolver`): the solver trained on the bank (GRPO with the curriculum,
   SFT or DPO); tasks held out for evaluation are never trained on;
3. `train.proposer` (`TrainProposer`): the proposer role trained with DPO on its own
   proposals, starting from the solver's checkpoint (one model plays both roles, as in
   Absolute Zero); skipped, and said so, when the bank holds no pair yet;
4. `eval` (`Evaluate`): pass@1 with a 95% interval on the held-out split (frozen when the
   loop starts) and on HumanEval (`humaneval_limit` problems; all of them on a GPU by default).

The next iteration starts from the newest checkpoint. Before the first iteration the
starting model is evaluated the same way (iteration 0: `held_out`, then `eval`), so every
iteration has a before. Killed anywhere, the same command continues: a round resumes inside
`SelfPlay`, training from its last TRL checkpoint, evaluation from its start; nothing
committed is lost.
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
from selfplay.engine.runner import OnStep, Runner, Step
from selfplay.engine.steps.evaluate import Evaluate, HeldOut
from selfplay.engine.steps.play import PlayRound
from selfplay.engine.steps.train import TrainProposer, TrainSolver, trained_model

LOOP_KEY = "selfplay.loop"
DONE = "done"  # an iteration's last entry: the model it ended with
Progress = Callable[..., None]  # (phase, done, total, note=None)

if TYPE_CHECKING:
    from task_bank.store import Bank


def iteration_steps(config: LoopConfig) -> list[Step]:
    """The steps of an iteration: the default of `Loop`."""
    proposer = [TrainProposer()] if config.proposer.enabled else []
    return [PlayRound(), TrainSolver(), *proposer, Evaluate()]


# Iteration 0: the split the loop evaluates on, and the starting model measured on it.
START_STEPS: tuple[Step, ...] = (HeldOut(), Evaluate())


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
    # The proposer's RL (`proposer.method: grpo`): its steps' mean learnability reward.
    proposer_reward: float | None = None
    # The round's health (`selfplay.engine.health`) and its warnings.
    yield_rate: float | None = None
    frontier_yield: float | None = None
    diversity: float | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Loop:
    """Runs `selfplay loop` iterations on a bank with one verifier.

    steps: the steps of each iteration (default `iteration_steps(config)`). progress:
    called with (phase, done, total, note=None), each phase named after its iteration and
    step ('it1 solver train'). on_step: called with (iteration, name, report) as each step,
    or checkpoint inside a step, is committed.
    """

    def __init__(
        self,
        bank: Bank,
        verifier: Any,
        config: LoopConfig,
        *,
        steps: list[Step] | None = None,
        progress: Progress | None = None,
        on_step: OnStep | None = None,
        make_backend: Callable[[RunConfig], Any] = make_run_backend,
    ) -> None:
        self.bank = bank
        self.verifier = verifier
        self.config = config
        self.progress = progress or (lambda phase, done, total, note=None: None)
        self.make_backend = make_backend
        self.models_dir = Path(config.models_dir or bank.path.with_name(bank.path.stem + ".models"))
        self.steps = list(steps) if steps is not None else iteration_steps(config)
        self.runner = Runner(self, bank.journal("loop"), progress=self.progress, on_step=on_step,
                             label=lambda iteration: f"it{iteration}")  # fmt: skip

    # ---- bookkeeping ----------------------------------------------------------------

    def finished(self) -> int:
        """Iterations finished (the starting model's evaluation, iteration 0, not counted)."""
        return sum(1 for i, steps in self.bank.journal("loop").all().items() if i and DONE in steps)

    def model_at(self, iteration: int) -> str:
        """The model spec that iteration `iteration` starts from."""
        for i in range(iteration - 1, 0, -1):
            done = self.bank.journal("loop").get(i, DONE)
            if done:
                return done["model"]
        return self.config.run.model.spec

    def held_out(self) -> list[str]:
        """The tasks the loop evaluates on and never trains on (drawn at its start)."""
        return self.bank.journal("loop").get(0, HeldOut.name)["tasks"]

    def gains(self) -> dict[int, float]:
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

    # ---- the verb -------------------------------------------------------------------

    def resume_point(self) -> str | None:
        """Where `run` continues a loop that was cut off ('iteration 2 at train.solver (kept:
        round)'); None when the last run finished."""
        state = json.loads(self.bank.meta(LOOP_KEY) or "null")
        if not state or state.get("done"):
            return None
        if self.runner.pending(0, START_STEPS):
            return "the starting model's evaluation (iteration 0)"
        iteration = self.finished() + 1
        todo = [s.name for s in self.runner.pending(iteration, self.steps)]
        done = [s.name for s in self.steps if s.name not in todo]
        kept = f" (kept: {', '.join(done)})" if done else ""
        return f"iteration {iteration} of {state['target']} at {(todo or ['its end'])[0]}{kept}"

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
        self.runner.run(0, START_STEPS)
        for iteration in range(self.finished() + 1, state["target"] + 1):
            ctx = self.runner.run(iteration, self.steps)
            ctx.commit(DONE, {"model": trained_model(ctx)})
        self.bank.set_meta(LOOP_KEY, json.dumps(state | {"done": True}))
        return self.rows()

    # ---- what it did ----------------------------------------------------------------

    def rows(self) -> list[IterationRow]:
        return iteration_rows(self.bank)


def iteration_rows(bank: Bank) -> list[IterationRow]:
    """Every evaluated iteration of the loop a bank holds (iteration 0: the starting model)."""
    from task_bank.stats import hack_signals

    hacks = hack_signals(bank)
    rows = []
    for iteration, steps in sorted(bank.journal("loop").all().items()):
        if Evaluate.name not in steps:
            continue
        ev = steps[Evaluate.name]
        row = IterationRow(iteration, ev["model"], bank_tasks=ev.get("bank_tasks", 0))
        for name, key in (("held_out", "held_out"), ("humaneval", "humaneval")):
            if name in ev:
                setattr(row, key, ev[name]["pass_at_k"].get("pass@1"))
                setattr(row, f"{key}_interval", ev[name].get("pass@1_interval"))
        if PlayRound.name in steps:
            summary = steps[PlayRound.name]["summary"] or {}
            row.round = steps[PlayRound.name]["round"]
            row.admitted = summary.get("admitted", 0)
            row.bank_tasks = summary.get("bank_tasks", 0)
            row.yield_rate = summary.get("yield_rate")
            row.frontier_yield = summary.get("frontier_yield")
            row.diversity = summary.get("diversity")
            row.warnings = list(summary.get("warnings", []))
        solver = steps.get(TrainSolver.name) or {}
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
        proposer = steps.get(TrainProposer.name) or {}
        row.proposer = (
            (f"{proposer['steps']} step" + "s" * (proposer["steps"] != 1)) if "steps" in proposer else
            "skipped" if "skipped" in proposer else "-"
        )  # fmt: skip
        row.proposer_skipped = proposer.get("skipped")
        if proposer.get("method") == "grpo":
            said = [x["reward"] for x in proposer.get("log") or [] if "reward" in x]
            row.proposer_reward = sum(said) / len(said) if said else None
        rows.append(row)
    return rows
